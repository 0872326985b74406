"""The model last loaded on this machine: remembered in FrogDesk's state folder, offered by the
next start unless the settings pin a model."""

from __future__ import annotations

import contextlib
import json
import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from frogdesk import config
from frogdesk.config import DEFAULT_MODEL, Settings
from frogdesk.durable import atomic_write_text
from frogdesk.models.local_model import LocalModel
from frogdesk.models.spec import parse_filename
from frogdesk.paths import AppPaths

STATE_FILE = "last-model.json"


def state_file(paths: AppPaths) -> Path:
    """Where the last model of each machine is written."""
    return (paths.state_dir or paths.cache_dir) / STATE_FILE


def _machine() -> str:
    # a home shared between machines (NFS) keeps one entry per host, not one for all
    return socket.gethostname() or "localhost"


def _read(paths: AppPaths) -> dict[str, dict[str, str]]:
    try:
        data = json.loads(state_file(paths).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # never written, or unreadable: nothing remembered
    machines = data.get("machines") if isinstance(data, dict) else None
    if not isinstance(machines, dict):
        return {}
    return {
        str(k): {str(a): str(b) for a, b in v.items()}
        for k, v in machines.items()
        if isinstance(v, dict)
    }


def remember(paths: AppPaths, path: Path, label: str = "") -> None:
    """Remember `path` (absolute) as this machine's last loaded model (atomic write)."""
    machines = _read(paths)
    machines[_machine()] = {"path": str(path.absolute()), "label": label or path.name}
    target = state_file(paths)
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(target, json.dumps({"machines": machines}, indent=1) + "\n")


@dataclass(frozen=True)
class Remembered:
    """This machine's last model: its file, and whether that file is still there."""

    path: Path
    label: str

    @property
    def present(self) -> bool:
        """The file is still on disk."""
        return self.path.is_file()

    def gone_line(self) -> str:
        """The one line said when the file is gone."""
        return f"The last model used here, {self.label}, is gone ({self.path}); pick another."

    def as_local(self) -> LocalModel:
        """The file as a model on disk, for the chooser's rows."""
        name = parse_filename(self.path.name)
        assert name is not None  # remembered files are GGUFs; a foreign name is filtered out
        return LocalModel("", name, (self.path,), "imported")


def remembered(paths: AppPaths) -> Remembered | None:
    """This machine's last model, when one was remembered (present or gone)."""
    entry = _read(paths).get(_machine())
    if not entry or not entry.get("path"):
        return None
    path = Path(entry["path"])
    if parse_filename(path.name) is None:
        return None
    return Remembered(path, entry.get("label") or path.name)


def model_pinned(
    settings: Settings,
    config_file: Path | None = None,
    environ: Mapping[str, str] | None = None,
    *,
    flag: bool = False,
) -> bool:
    """The settings name a model themselves (config file, FROGDESK_MODEL, --model): it wins
    over the remembered one. There is no repository-level config file; the user's is read.
    `flag`: --model was given (naming the default spec too is a choice)."""
    if flag or settings.model != DEFAULT_MODEL:
        return True
    if "FROGDESK_MODEL" in (os.environ if environ is None else environ):
        return True
    with contextlib.suppress(config.ConfigError):
        return "model" in config.read_file(config_file or AppPaths.default().config_file)
    return False
