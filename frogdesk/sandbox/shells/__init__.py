"""Shells, one per isolation level, on one base that runs and cleans up a command."""
