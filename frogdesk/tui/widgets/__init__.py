"""Widgets of the FrogDesk TUI."""
