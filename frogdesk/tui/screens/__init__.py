"""Screens of the FrogDesk TUI."""
