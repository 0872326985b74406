"""Loading a GGUF: the header checks, llama.cpp options, memory fit and the model itself."""
