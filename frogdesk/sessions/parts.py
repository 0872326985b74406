"""Building a session's parts: its backend and shell; at startup, clearing what crashes left."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import cast

from frogdesk.config import BackendName, Settings
from frogdesk.engine.backends import make_backend
from frogdesk.engine.chat import Backend
from frogdesk.engine.kinds import kind_of
from frogdesk.engine.script_backend import ScriptBackend
from frogdesk.models.resolve import resolve_local
from frogdesk.sandbox.levels import choose_shell
from frogdesk.sandbox.limits import command_limits
from frogdesk.sessions.factories import ShellPick
from frogdesk.sessions.patch import worktree_diff
from frogdesk.sessions.record import SessionRecord
from frogdesk.sessions.staging import clear_abandoned, staging_path
from frogdesk.sessions.store import SessionStore
from frogdesk.worktree.checkout import Worktree, prune_stale, remove_named
from frogdesk.worktree.errors import WorktreeError


def default_backend(
    record: SessionRecord,
    settings: Settings,
    replies_done: int = 0,
    progress: Callable[[float], None] | None = None,
) -> Backend:
    """The engine's backend for a record: a .gguf path or model spec, an endpoint, or a script.

    `progress` hears the load fraction of a llama model.

    A resumed script session continues with the replies its finished steps did not use.
    """
    kind = kind_of(record.backend)
    if kind.replays_script:
        # lenient calls: arguments are checked by the tools, in Leaf's words (as in the
        # vendor's setup); a resumed session goes on after the replies its steps used
        return ScriptBackend(Path(record.model), skip=replies_done)

    # an unknown name (a hand-edited record) reaches the registry, whose maker says so
    settings = settings.replaced(backend=cast(BackendName, record.backend))
    if kind.remote_endpoint:
        endpoint = str(record.settings.get("openai_endpoint") or settings.engine.openai_endpoint)
        settings = settings.replaced(openai_endpoint=endpoint)
        return make_backend(settings, endpoint=endpoint or None)
    return make_backend(
        settings, model_path=resolve_model_path(record.model, settings), progress=progress
    )


def resolve_model_path(spec: str, settings: Settings) -> Path:
    """A local .gguf path as is; anything else through the model resolver."""
    if spec.endswith(".gguf") and Path(spec).expanduser().is_file():
        return Path(spec).expanduser().resolve()

    return resolve_local(spec or settings.model, settings)


STALE_AFTER = 600.0
"""Seconds before a worktree record without its worktree counts as stale (not mid-creation)."""


def prune_worktrees(worktrees_dir: Path, sessions_dir: Path | None = None) -> list[str]:
    """Remove what crashes or deleted clones left behind; the worktree names removed.

    With `sessions_dir`: the starts a kill interrupted (their worktrees and hidden folders),
    and worktrees that no session owns. Never fails startup.
    """
    removed: list[str] = []
    if sessions_dir is not None:
        removed += clear_abandoned(sessions_dir, lambda name: remove_named(worktrees_dir, name))
    keeps_sessions = sessions_dir is not None and sessions_dir.is_dir()
    orphaned = _unowned(sessions_dir) if sessions_dir is not None and keeps_sessions else None
    with contextlib.suppress(OSError, WorktreeError):
        removed += prune_stale(worktrees_dir, min_age=STALE_AFTER, orphaned=orphaned)
    return removed


def _unowned(sessions_dir: Path) -> Callable[[Worktree], bool]:
    """Says whether no session owns a worktree (a start an older FrogDesk did not finish).

    Only where sessions are kept at all, and only for a worktree without changes: work the
    model did is never removed, even where its session's folder went missing.
    """
    claimed: set[Path] | None = None

    def orphaned(worktree: Worktree) -> bool:
        nonlocal claimed
        name = worktree.name
        if (sessions_dir / name).exists() or staging_path(sessions_dir, name).exists():
            return False
        if claimed is None:
            claimed = {Path(r.worktree) for r in SessionStore(sessions_dir).list()}
        if worktree.path in claimed:
            return False
        try:
            return not worktree_diff(worktree.path, worktree.base_commit).files
        except Exception:
            return False  # cannot tell what it holds: keep it

    return orphaned


def default_shell(
    requested: str,
    worktree: Worktree,
    settings: Settings,
) -> ShellPick:
    """The sandbox's choice of shell for the worktree (approval is the Bash tool's gate)."""

    choice = choose_shell(
        requested,
        worktree=worktree,
        visible_ignored=settings.sandbox.visible_ignored,
        home_toolchains=settings.sandbox.home_folders,
        max_timeout=settings.sandbox.bash_max_timeout,
        limits=command_limits(settings.sandbox),
    )
    return ShellPick(choice.shell, str(choice.level), choice.reason, tuple(choice.warnings))
