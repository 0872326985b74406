"""Command-line subcommands; each module registers its parser and runs its body."""
