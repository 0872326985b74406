"""Per-hunk review decisions (approve, reject, edit) and their JSON form; decisions_store.py
keeps them in the session folder."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from frogdesk.review.model import SessionDiff, split_lines

Decision = Literal["pending", "approved", "rejected"]


@dataclass
class HunkDecisions:
    """The user's decision for each hunk id, edited new texts, and a comment for the model."""

    hunks: dict[str, Decision] = field(default_factory=dict)
    edits: dict[str, str] = field(default_factory=dict)
    """Hunk id -> the hunk's new side as the user rewrote it (context lines included)."""
    comment: str = ""
    sent: dict[str, str] = field(default_factory=dict)
    """Hunk id -> `path: header` of each declined or edited hunk a send-back is about to write
    into the worktree. Noted first: once written the hunk leaves the diff, and a send-back
    that a crash cut short must still name it to the model."""
    home: Path | None = field(default=None, compare=False, repr=False)
    """The session folder these decisions are stored in (None: not stored)."""

    def decision(self, hunk_id: str) -> Decision:
        """The decision for one hunk; pending until the user says."""
        return self.hunks.get(hunk_id, "pending")

    def decide(self, ids: Iterable[str], decision: Decision) -> None:
        """Record the same decision for several hunks."""
        for hunk_id in ids:
            self.hunks[hunk_id] = decision

    def decide_file(self, diff: SessionDiff, path: str, decision: Decision) -> None:
        """Decide every hunk of one file (by its new or old path)."""
        change = diff.find_file(path)
        if change is None:
            raise KeyError(path)
        self.decide((h.id for h in change.hunks), decision)

    def decide_all(self, diff: SessionDiff, decision: Decision) -> None:
        """Decide every hunk of the diff."""
        self.decide(diff.hunk_ids(), decision)

    def edit(self, diff: SessionDiff, hunk_id: str, new_text: str) -> None:
        """Replace a text hunk's new side with new_text and approve it."""
        found = diff.find_hunk(hunk_id)
        if found is None:
            raise KeyError(hunk_id)
        if found[1].kind != "text":
            raise ValueError(f"hunk {hunk_id} is a whole-file change and has no text to edit")
        self.edits[hunk_id] = new_text
        self.hunks[hunk_id] = "approved"

    def ids(self, diff: SessionDiff, decision: Decision) -> set[str]:
        """The ids of the diff's hunks with this decision."""
        return {h for h in diff.hunk_ids() if self.decision(h) == decision}

    def edited_lines(self, diff: SessionDiff) -> dict[str, tuple[bytes, ...]]:
        """The edits as new-side lines, for the diff's hunks that have one."""
        out: dict[str, tuple[bytes, ...]] = {}
        for _, hunk in diff.hunks():
            text = self.edits.get(hunk.id)
            if text is None:
                continue
            data = text.encode("utf-8", "surrogateescape")
            ends_open = bool(hunk.new_lines) and not hunk.new_lines[-1].endswith(b"\n")
            if data and not data.endswith(b"\n") and not ends_open:
                data += b"\n"  # the hunk sits before more lines; keep them on their own line
            out[hunk.id] = tuple(split_lines(data))
        return out

    def note_sent(self, diff: SessionDiff) -> None:
        """Remember the label of every declined or edited hunk of the diff (see `sent`)."""
        for change, hunk in diff.hunks():
            if self._to_send(hunk.id):
                self.sent[hunk.id] = f"{change.path}: {hunk.header}"

    def to_json(self) -> str:
        """Serialize as JSON (a label in `sent` only while its hunk is still declined or edited)."""
        payload: dict[str, object] = {
            "hunks": self.hunks,
            "edits": self.edits,
            "comment": self.comment,
        }
        sent = {k: v for k, v in self.sent.items() if self._to_send(k)}
        if sent:
            payload["sent"] = sent
        return json.dumps(payload, indent=2, ensure_ascii=False)

    def _to_send(self, hunk_id: str) -> bool:
        """True for a hunk a send-back reverts (declined) or rewrites (edited)."""
        return self.decision(hunk_id) == "rejected" or hunk_id in self.edits

    @classmethod
    def from_json(cls, text: str) -> HunkDecisions:
        """Parse decisions written by to_json; unknown decisions count as pending, and a
        value of the wrong shape raises ValueError naming it."""
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError("the file holds no JSON object")
        raw_hunks, raw_edits = data.get("hunks", {}), data.get("edits", {})
        comment, raw_sent = data.get("comment", ""), data.get("sent", {})
        for name, value in (("hunks", raw_hunks), ("edits", raw_edits), ("sent", raw_sent)):
            if not isinstance(value, dict):
                raise ValueError(f"{name} is not an object")
        texts = [*raw_edits.values(), *raw_sent.values()]
        if not isinstance(comment, str) or not all(isinstance(v, str) for v in texts):
            raise ValueError("the comment, edits and sent labels must be text")
        hunks: dict[str, Decision] = {}
        for key, value in raw_hunks.items():
            if value in ("approved", "rejected"):
                hunks[key] = value
        return cls(hunks=hunks, edits=dict(raw_edits), comment=comment, sent=dict(raw_sent))


def pending_note(count: int) -> str:
    """What an apply of the approved hunks says of those still pending ("" for none)."""
    if count == 0:
        return ""
    hunks = "hunk" if count == 1 else "hunks"
    return f"{count} pending {hunks} not applied (approve, then apply again)"
