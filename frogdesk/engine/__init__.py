"""The engine: backends that turn a conversation into the model's next move.

`llama/` runs a GGUF in-process on llama.cpp's low-level API (token transcript, snapshots,
speculative decoding, a shared context for parallel attempts); `openai/` streams from an
OpenAI-compatible endpoint; `script_backend` replays scripted replies; `toolcall/` parses
and constrains the Qwen3-Coder XML tool calls all of them share. `registry` is the one place
that knows these kinds by name: how each is made and what it can do.
"""
