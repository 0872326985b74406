"""One conversation as tokens: what the context holds, replies, and saved states."""
