"""The worktree tests share the repository fixtures in tests/support/repo_fixtures.py."""

from tests.support.repo_fixtures import outside_dir, repo, user_home, worktree, worktrees_dir

__all__ = ["outside_dir", "repo", "user_home", "worktree", "worktrees_dir"]
