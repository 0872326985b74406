"""FrogDesk: a local coding agent for FrogNano GGUF quants."""

__version__ = "0.1.0"
