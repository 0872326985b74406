"""Review: the diff of a session's worktree, per-hunk decisions, apply and undo."""
