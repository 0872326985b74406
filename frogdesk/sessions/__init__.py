"""Sessions: crash-safe transcripts on disk, listing and resume."""
