"""Decoding on a llama.cpp context: one sequence alone, or one of a shared batch, and sampling."""
