"""The engine: backends that turn a conversation into the model's next move."""
