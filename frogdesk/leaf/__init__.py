"""Leaf: the five tools, system prompt and agent loop FrogNano was trained on."""
