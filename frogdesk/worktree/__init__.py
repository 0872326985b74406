"""The git side of a session: its worktree, its record, git itself, object sync and the watcher."""
