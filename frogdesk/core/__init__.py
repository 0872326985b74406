"""The application core: every user operation on sessions, reviews and models, below the CLI and the TUI."""
