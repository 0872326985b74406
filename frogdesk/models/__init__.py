"""Models: specs, the Hub catalog, downloads, GGUF inspection, memory fit and warnings."""
