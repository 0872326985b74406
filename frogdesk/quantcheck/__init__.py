"""Quant check: how far a quant's next-token distributions drift from a reference on a corpus."""
