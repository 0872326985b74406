"""One eval task: a repository snapshot, the task text, a check, and the files put back first.

FrogDesk's task folder format (see `load_task_folder`):

    NAME/
      task.toml     check = "python3 -m unittest -q"   (required)
                    timeout = 120                       (seconds the check may run)
                    restore = ["test_calc.py"]          (snapshot files put back before the check)
                    requires = ["python3"]              (tools the check needs on PATH)
                    text = "..."                        (or task.md)
      task.md       the task text, the model's first message
      repo/         the repository snapshot the model works on
      hidden/       files the model never sees, put in place before the check
      solution/     reference files overlaid on repo/ (never shown; `tests/evals` checks them)
"""

from __future__ import annotations

import os
import re
import stat
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from frogdesk.evals.errors import EvalError
from frogdesk.sizes import human_bytes

DEFAULT_TIMEOUT = 120.0
"""Seconds a task's check may run when its task.toml says nothing."""

MAX_TASK_BYTES = 4 << 20
"""A task folder bigger than this is not a small eval task (likely a wrong folder)."""

NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
"""Task names: they become file names in the results store."""


@dataclass(frozen=True)
class EvalTask:
    """Everything one task needs, in memory (tasks are small)."""

    name: str
    text: str
    check: str
    files: Mapping[str, bytes]
    """The snapshot: relative POSIX path -> content."""
    restore: tuple[str, ...] = ()
    """Snapshot paths put back as they were before the check runs (the tests)."""
    hidden: Mapping[str, bytes] = field(default_factory=dict)
    """Files the model never sees, written before the check runs."""
    solution: Mapping[str, bytes | None] = field(default_factory=dict)
    """The reference fix: files overlaid on the snapshot (None deletes); never shown."""
    timeout: float = DEFAULT_TIMEOUT
    requires: tuple[str, ...] = ()
    executables: frozenset[str] = frozenset()
    """Snapshot paths with the executable bit."""
    kind: str = ""
    """`bugfix` or `feature` (informational)."""

    def put_back(self) -> dict[str, bytes]:
        """The files the check writes before it runs: restored snapshot files, then hidden ones."""
        out = {path: self.files[path] for path in self.restore}
        out.update(self.hidden)
        return out


def check_relative(path: str, where: str) -> str:
    """`path` as a clean relative POSIX path, or EvalError (absolute, `..`, empty, odd bytes)."""
    pure = PurePosixPath(path)
    bad = (
        not path
        or pure.is_absolute()
        or any(part in ("..", ".", "") for part in path.split("/"))
        or ".git" in pure.parts
        or any(ord(c) < 32 for c in path)
    )
    if bad:
        raise EvalError(f"{where}: {path!r} is not a plain relative path inside the repository")
    return pure.as_posix()


def validate(task: EvalTask) -> EvalTask:
    """Refuse a task that cannot run: bad name, no check, no text, bad paths."""
    if not NAME_PATTERN.fullmatch(task.name):
        raise EvalError(f"task {task.name!r}: a name is letters, digits, '.', '_' and '-'")
    if not task.check.strip():
        raise EvalError(f"task {task.name}: no check command")
    if not task.text.strip():
        raise EvalError(f"task {task.name}: no task text")
    if not task.files:
        raise EvalError(f"task {task.name}: the repository snapshot is empty")
    if task.timeout <= 0:
        raise EvalError(f"task {task.name}: the timeout must be positive")
    for path in [*task.files, *task.hidden, *task.solution]:
        check_relative(path, f"task {task.name}")
    for path in task.restore:
        if path not in task.files:
            raise EvalError(f"task {task.name}: restore names {path!r}, not in the snapshot")
    return task


def read_tree(root: Path, where: str) -> tuple[dict[str, bytes], frozenset[str]]:
    """Every regular file under `root` (links and other kinds refused), and the executables."""
    files: dict[str, bytes] = {}
    executables: set[str] = set()
    total = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != ".git")
        for name in sorted(filenames):
            full = Path(dirpath) / name
            rel = full.relative_to(root).as_posix()
            info = full.lstat()
            if not stat.S_ISREG(info.st_mode):
                raise EvalError(f"{where}: {rel} is not a regular file (links are not supported)")
            total += info.st_size
            if total > MAX_TASK_BYTES:
                raise EvalError(
                    f"{where}: more than {human_bytes(MAX_TASK_BYTES)}; not a small task"
                )
            files[rel] = full.read_bytes()
            if info.st_mode & stat.S_IXUSR:
                executables.add(rel)
    return files, frozenset(executables)


def _strings(value: object, key: str, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise EvalError(f"{where}: {key} must be a list of strings")
    return tuple(value)


def load_task_folder(folder: Path) -> EvalTask:
    """Read one task in FrogDesk's folder format (see the module docstring); EvalError naming
    the task and the problem when it is incomplete or unreadable."""
    where = f"task {folder.name}"
    config = folder / "task.toml"
    try:
        data = tomllib.loads(config.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise EvalError(f"{where}: no task.toml") from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise EvalError(f"{where}: task.toml cannot be read: {exc}") from None
    check = data.get("check")
    if not isinstance(check, str) or not check.strip():
        raise EvalError(f'{where}: task.toml has no check command (check = "...")')
    text = data.get("text")
    if text is None:
        try:
            text = (folder / "task.md").read_text(encoding="utf-8")
        except FileNotFoundError:
            raise EvalError(f"{where}: no task text (task.md or text = in task.toml)") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise EvalError(f"{where}: task.md cannot be read: {exc}") from None
    if not isinstance(text, str):
        raise EvalError(f"{where}: text must be a string")
    timeout = data.get("timeout", DEFAULT_TIMEOUT)
    if not isinstance(timeout, int | float) or isinstance(timeout, bool):
        raise EvalError(f"{where}: timeout must be a number of seconds")
    if not (folder / "repo").is_dir():
        raise EvalError(f"{where}: no repo/ folder (the repository snapshot)")
    files, executables = read_tree(folder / "repo", where)
    hidden: dict[str, bytes] = {}
    if (folder / "hidden").is_dir():
        hidden, _ = read_tree(folder / "hidden", where)
    solution: dict[str, bytes | None] = {}
    if (folder / "solution").is_dir():
        solution.update(read_tree(folder / "solution", where)[0])
    kind = data.get("kind", "")
    return validate(
        EvalTask(
            name=folder.name,
            text=text.strip(),
            check=check.strip(),
            files=files,
            restore=_strings(data.get("restore"), "restore", where),
            hidden=hidden,
            solution=solution,
            timeout=float(timeout),
            requires=_strings(data.get("requires"), "requires", where),
            executables=executables,
            kind=kind if isinstance(kind, str) else "",
        )
    )


def write_files(root: Path, files: Mapping[str, bytes | None], executables: frozenset[str]) -> None:
    """Write `files` under `root`, a folder FrogDesk made and only it writes (None deletes)."""
    for rel, data in files.items():
        target = root / check_relative(rel, "write")
        if data is None:
            target.unlink(missing_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        target.chmod(0o755 if rel in executables else 0o644)
