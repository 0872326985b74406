"""What an eval records: per attempt, per task, per run; and the run's Avg@K and Pass@K."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

RAN, BROKEN, ERROR, SKIPPED = "ran", "broken", "error", "skipped"
"""A task's status: it ran; its check passed before the model did anything; it could not
run (no script, a session that could not start); its toolchain or its files were missing."""


@dataclass
class AttemptRecord:
    """One attempt at one task: the verdict of the check, and what the session spent."""

    index: int
    solved: bool
    session_id: str = ""
    seed: int = 0
    exit_reason: str = ""
    error: str = ""
    steps: int = 0
    tool_calls: int = 0
    recoveries: dict[str, int] = field(default_factory=dict)
    """Tool-call drifts the parser recovered, by kind."""
    prompt_tokens: int = 0
    """The prompt's size at the last reply."""
    prefill_tokens: int = 0
    """Prompt tokens actually evaluated over every reply (the rest was reused)."""
    decoded_tokens: int = 0
    wall_seconds: float = 0.0
    tokens_per_second: float = 0.0
    """Decoded tokens over decoding time (over wall time when the backend times nothing)."""
    check_exit: int | None = None
    check_summary: str = ""
    check_seconds: float = 0.0
    check_timed_out: bool = False
    patch: str = ""
    """The session's diff as the model left it, before the check put any file back."""

    def to_json(self) -> dict[str, Any]:
        """The attempt's object in `--json` and in the store."""
        out = asdict(self)
        out["wall_seconds"] = round(self.wall_seconds, 3)
        out["check_seconds"] = round(self.check_seconds, 3)
        out["tokens_per_second"] = round(self.tokens_per_second, 2)
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> AttemptRecord:
        """Read back what `to_json` wrote (unknown keys ignored)."""
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in known})


@dataclass
class TaskResult:
    """One task of a run: its status, and each attempt when it ran."""

    task: str
    status: str = RAN
    note: str = ""
    attempts: list[AttemptRecord] = field(default_factory=list)

    @property
    def solved(self) -> bool:
        """True when any attempt's check passed (what Pass@K counts)."""
        return self.status == RAN and any(a.solved for a in self.attempts)

    @property
    def solve_fraction(self) -> float:
        """The share of its attempts that were solved (what Avg@K averages)."""
        if self.status != RAN or not self.attempts:
            return 0.0
        return sum(a.solved for a in self.attempts) / len(self.attempts)

    @property
    def counted(self) -> bool:
        """True when the task counts in the run's total (it ran, or failed to on our side)."""
        return self.status in (RAN, ERROR)

    def to_json(self) -> dict[str, Any]:
        """The task's object in `--json` and in the store."""
        return {
            "task": self.task,
            "solved": self.solved,
            "status": self.status,
            "note": self.note,
            "attempts": [a.to_json() for a in self.attempts],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TaskResult:
        """Read back what `to_json` wrote."""
        return cls(
            str(data["task"]),
            str(data.get("status", RAN)),
            str(data.get("note", "")),
            [AttemptRecord.from_json(a) for a in data.get("attempts", [])],
        )


@dataclass
class RunResult:
    """A whole eval run: what ran it (model, settings), and each task's result in suite order."""

    run_id: str
    suite: str
    layout: str
    model: str
    model_sha256: str
    quant: str
    backend: str
    attempts: int
    settings: dict[str, Any]
    frogdesk_version: str
    started: str
    finished: str = ""
    tasks: list[TaskResult] = field(default_factory=list)

    @property
    def total(self) -> int:
        """Tasks that count: the broken and the skipped are reported, not scored."""
        return sum(t.counted for t in self.tasks)

    @property
    def solved(self) -> int:
        """Tasks solved by at least one attempt."""
        return sum(t.solved for t in self.tasks)

    @property
    def pass_at_k(self) -> float:
        """Share of counted tasks with at least one of K attempts solved (n = K: the unbiased
        pass@k estimator is exactly this)."""
        return self.solved / self.total if self.total else 0.0

    @property
    def avg_at_k(self) -> float:
        """Mean over counted tasks of the share of their K attempts solved."""
        counted = [t for t in self.tasks if t.counted]
        return sum(t.solve_fraction for t in counted) / len(counted) if counted else 0.0

    def summary(self) -> dict[str, Any]:
        """The run's figures without its tasks (the store's index, `models list`)."""
        return {
            "run_id": self.run_id,
            "suite": self.suite,
            "layout": self.layout,
            "model": self.model,
            "model_sha256": self.model_sha256,
            "quant": self.quant,
            "backend": self.backend,
            "attempts_per_task": self.attempts,
            "settings": self.settings,
            "frogdesk_version": self.frogdesk_version,
            "started": self.started,
            "finished": self.finished,
            "solved": self.solved,
            "total": self.total,
            "avg_at_k": round(self.avg_at_k, 4),
            "pass_at_k": round(self.pass_at_k, 4),
            "broken": [t.task for t in self.tasks if t.status == BROKEN],
            "skipped": {t.task: t.note for t in self.tasks if t.status == SKIPPED},
            "errors": {t.task: t.note for t in self.tasks if t.status == ERROR},
        }

    def to_json(self) -> dict[str, Any]:
        """`frogdesk eval --json`: the tasks, then the run's figures."""
        return {"tasks": [t.to_json() for t in self.tasks], **self.summary()}

    @classmethod
    def from_json(cls, data: dict[str, Any], tasks: list[TaskResult]) -> RunResult:
        """A run from its stored summary and its task results."""
        return cls(
            run_id=str(data["run_id"]),
            suite=str(data.get("suite", "")),
            layout=str(data.get("layout", "")),
            model=str(data.get("model", "")),
            model_sha256=str(data.get("model_sha256", "")),
            quant=str(data.get("quant", "")),
            backend=str(data.get("backend", "")),
            attempts=int(data.get("attempts_per_task", 1)),
            settings=dict(data.get("settings", {})),
            frogdesk_version=str(data.get("frogdesk_version", "")),
            started=str(data.get("started", "")),
            finished=str(data.get("finished", "")),
            tasks=tasks,
        )
