"""The Exercism practice layout (exercism/python, Aider-AI/polyglot-benchmark) as eval tasks.

`exercises/practice/NAME/` holds `.docs/instructions.md` and `.meta/config.json`, whose
`files.solution` and `files.test` name the stub the model completes and the tests put
back before the check. `.meta/` (the example solution) is never part of the snapshot.
"""

from __future__ import annotations

import json
from pathlib import Path

from frogdesk.evals.errors import EvalError
from frogdesk.evals.task import EvalTask, read_tree, validate

CHECKS = {
    ".py": ("python3 -m unittest discover -q -p '*_test.py'", ("python3",)),
    ".js": ("node --test", ("node",)),
    ".sh": ("bats *.bats", ("bats",)),
}
"""Check and required tool by the solution file's suffix (the track)."""


def practice_root(folder: Path) -> Path | None:
    """The folder of practice exercises under `folder` (or `folder` itself), else None."""
    for candidate in (folder / "exercises" / "practice", folder / "practice", folder):
        if candidate.is_dir() and any(
            (d / ".meta" / "config.json").is_file() for d in candidate.iterdir() if d.is_dir()
        ):
            return candidate
    return None


def _config(exercise: Path) -> tuple[list[str], list[str], list[str]]:
    where = f"exercise {exercise.name}"
    try:
        data = json.loads((exercise / ".meta" / "config.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise EvalError(f"{where}: .meta/config.json cannot be read: {exc}") from None
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, dict):
        raise EvalError(f"{where}: .meta/config.json has no files object")
    lists: list[list[str]] = []
    for key in ("solution", "test", "example"):
        value = files.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise EvalError(f"{where}: files.{key} must be a list of file names")
        lists.append(value)
    if not lists[0] or not lists[1]:
        raise EvalError(f"{where}: files.solution and files.test must name files")
    return lists[0], lists[1], lists[2]


def _text(exercise: Path, solution: list[str], tests: list[str]) -> str:
    docs = exercise / ".docs"
    parts: list[str] = []
    for name in ("introduction.md", "instructions.md", "instructions.append.md"):
        try:
            parts.append((docs / name).read_text(encoding="utf-8").strip())
        except FileNotFoundError:
            continue
        except (OSError, UnicodeDecodeError) as exc:
            raise EvalError(f"exercise {exercise.name}: .docs/{name}: {exc}") from None
    if not parts:
        raise EvalError(f"exercise {exercise.name}: no .docs/instructions.md")
    return (
        "\n\n".join(parts)
        + f"\n\nUse the above instructions to modify the supplied files: {', '.join(solution)}. "
        f"Keep the names of the existing functions and classes. The tests are in "
        f"{', '.join(tests)}; do not change them."
    )


def load_exercise(exercise: Path, check: str = "", timeout: float = 120.0) -> EvalTask:
    """One practice exercise as a task; `check` replaces the track's check command."""
    solution, tests, example = _config(exercise)
    where = f"exercise {exercise.name}"
    files, executables = read_tree(exercise, where)
    files = {p: d for p, d in files.items() if not p.startswith(".meta/")}
    track_check, requires = CHECKS.get(Path(solution[0]).suffix, ("", ()))
    command = check or track_check
    if not command:
        raise EvalError(f"{where}: no check known for {solution[0]}; give --check CMD")
    reference: dict[str, bytes | None] = {}
    if len(example) == len(solution):
        for stub, model in zip(solution, example, strict=True):
            path = exercise / model
            if path.is_file():
                reference[stub] = path.read_bytes()
    missing = [t for t in tests if t not in files]
    if missing:
        raise EvalError(f"{where}: the test file {missing[0]} is missing")
    return validate(
        EvalTask(
            name=exercise.name,
            text=_text(exercise, solution, tests),
            check=command,
            files=files,
            restore=tuple(tests),
            solution=reference,
            timeout=timeout,
            requires=() if check else requires,
            executables=executables,
            kind="exercism",
        )
    )
