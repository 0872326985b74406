"""The attack suite: model replies that try to leave the sandbox, replayed through the CLI."""
