"""A repository's own choice of model: the `model` key of `.frogdesk.toml` at its root.

A repository is often someone else's (a clone), so its file is read as outside input: only
`model` is taken from it (a repository never sets the sandbox, approval or budgets), the
file is opened without following links and must be a small regular file, and what it names
is only chosen: a Hub quant not on disk is offered in the picker, never downloaded unasked.
It wins over the model remembered for this machine and loses to one the user pins (the
config file, `FROGDESK_MODEL`, `--model`).
"""

from __future__ import annotations

import os
import stat
import tomllib
from pathlib import Path

from frogdesk.config import Settings
from frogdesk.core.last_model import model_pinned
from frogdesk.logfile import say_notice

REPO_CONFIG = ".frogdesk.toml"
MAX_BYTES = 64 * 1024
"""Far more than a file naming one model needs; a larger one is not read."""


def repository_model(repo: Path) -> tuple[str | None, str]:
    """The model spec the repository's `.frogdesk.toml` pins (None when there is none or it
    cannot be used) and, when there is a file, one line saying what was taken or why not."""
    path = repo / REPO_CONFIG
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        return None, ""
    except OSError as exc:
        return None, f"{path}: not read ({exc.strerror or exc}); no model pinned by the repository"
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_BYTES:
            return None, f"{path}: not a small regular file; no model pinned by the repository"
        raw = handle.read(MAX_BYTES + 1)
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return None, f"{path}: not valid TOML ({exc}); no model pinned by the repository"
    model = data.get("model")
    others = sorted(k for k in data if k != "model")
    ignored = f"; other keys are yours to set, not the repository's: {', '.join(others)} ignored"
    if not isinstance(model, str) or not model.strip() or "\n" in model:
        return None, f"{path}: no model named{ignored if others else ''}"
    spec = model.strip()
    return spec, f"{path} pins the model {spec}{ignored if others else ''}"


def with_repository_model(
    settings: Settings, repo: Path, config_file: Path | None, *, flag: bool = False
) -> Settings:
    """The settings with the repository's pinned model, unless the user pinned one (`flag`:
    with --model); the line about the repository's file is said as a notice."""
    spec, line = repository_model(repo)
    if spec is not None and model_pinned(settings, config_file, flag=flag):
        say_notice(f"{line}; your own choice, {settings.model}, wins")
        return settings
    if line:
        say_notice(line)
    return settings if spec is None else settings.replaced(model=spec)
