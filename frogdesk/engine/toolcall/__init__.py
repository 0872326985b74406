"""The Qwen3-Coder XML tool-call format: streaming parser, value coercion and the grammar."""
