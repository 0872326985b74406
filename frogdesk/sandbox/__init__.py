"""Session isolation: git worktrees, sandboxed shells and the repository watcher."""
