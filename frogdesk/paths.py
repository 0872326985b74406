"""Where FrogDesk keeps its files, from platformdirs (overridable with FROGDESK_HOME)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import platformdirs

APP_NAME = "frogdesk"


@dataclass(frozen=True)
class AppPaths:
    """Every directory FrogDesk reads or writes; nothing is created until asked."""

    config_dir: Path
    data_dir: Path
    cache_dir: Path
    state_dir: Path | None = None
    """Logs and other state worth keeping but not backing up; None keeps them in cache_dir."""

    @property
    def config_file(self) -> Path:
        """The TOML settings file."""
        return self.config_dir / "config.toml"

    @property
    def models_dir(self) -> Path:
        """FrogDesk's own downloaded or imported models."""
        return self.data_dir / "models"

    @property
    def sessions_dir(self) -> Path:
        """One folder per session: transcript, decisions, undo records."""
        return self.data_dir / "sessions"

    @property
    def worktrees_dir(self) -> Path:
        """The sessions' git worktrees, outside the user's repositories."""
        return self.data_dir / "worktrees"

    @property
    def openings_dir(self) -> Path:
        """Saved engine states of the opening every session on a model shares (a cache)."""
        return self.cache_dir / "openings"

    @property
    def log_file(self) -> Path:
        """Where huggingface_hub's and llama.cpp's own log lines go (never the terminal)."""
        return (self.state_dir or self.cache_dir) / "log" / "frogdesk.log"

    @classmethod
    def default(cls) -> AppPaths:
        """Platform paths, or all under $FROGDESK_HOME when it is set (tests, portable use)."""
        home = os.environ.get("FROGDESK_HOME")
        if home:
            root = Path(home).expanduser()
            return cls(root / "config", root / "data", root / "cache", root / "state")
        return cls(
            Path(platformdirs.user_config_dir(APP_NAME)),
            Path(platformdirs.user_data_dir(APP_NAME)),
            Path(platformdirs.user_cache_dir(APP_NAME)),
            Path(platformdirs.user_state_dir(APP_NAME)),
        )
