"""The `openai` backend: an OpenAI-compatible endpoint (llama-server, vLLM, SGLang), streamed."""
