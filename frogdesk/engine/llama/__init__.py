"""The embedded llama.cpp backend: model, context, token transcript, sampling and generation."""
