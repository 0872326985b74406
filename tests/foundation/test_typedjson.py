"""Records read back from JSON: every field checked against its declared type."""

from __future__ import annotations

import json

import pytest

from frogdesk.errors import RecordTypeError
from frogdesk.review.journal import Journal, JournalEntry
from frogdesk.review.records import ApplyRecord, RecordedFile
from frogdesk.review.target import StateRef
from frogdesk.sessions.record import SessionRecord

SESSION = SessionRecord(
    "s-1",
    "/r",
    "/w",
    "abc",
    "task",
    "model",
    recoveries={"unclosed": 2},
    drafts={"ngram": {"drafted": 4, "accepted": 3}},
    settings={"temperature": 0.6, "sandbox": {"network": False}},
)
REF = StateRef("0" * 64, "100644")
APPLY = ApplyRecord(
    "a-1",
    "s-1",
    "/r",
    1.5,
    [RecordedFile("x.txt", None, REF), RecordedFile("y.txt", REF, None)],
    index_before={"x.txt": ["100644 abc 0\tx.txt"]},
)
JOURNAL = Journal(
    "t-1", "apply", "s-1", "/r", "/g/st", "a-1", [JournalEntry("x.txt", None, REF, "f0", 0o644)]
)


def test_each_record_reads_back_equal() -> None:
    assert SessionRecord.from_json(SESSION.to_json()) == SESSION
    assert ApplyRecord.from_json(APPLY.to_json()) == APPLY
    assert Journal.from_json(JOURNAL.to_json()) == JOURNAL


def _damaged(
    record: SessionRecord | ApplyRecord | Journal, path: list[str | int], value: object
) -> str:
    data = json.loads(record.to_json())
    target = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return json.dumps(data)


@pytest.mark.parametrize(
    ("record", "path", "value", "named"),
    [
        (SESSION, ["worktree"], 5, "worktree is a number, not text"),
        (SESSION, ["n_steps"], "3", "n_steps is text, not an integer"),
        (SESSION, ["n_steps"], True, "n_steps is true or false, not an integer"),
        (SESSION, ["pid"], 1.5, "pid is a number, not an integer"),
        (SESSION, ["status"], "exploded", "status is 'exploded', not one of 'created'"),
        (SESSION, ["settings"], [], "settings is a list, not an object"),
        (
            SESSION,
            ["recoveries", "unclosed"],
            "2",
            "recoveries['unclosed'] is text, not an integer",
        ),
        (SESSION, ["drafts", "ngram"], 4, "drafts['ngram'] is a number, not an object"),
        (SESSION, ["created_at"], "now", "created_at is text, not a number"),
        (APPLY, ["files", 1, "before", "sha256"], None, "files[1].before.sha256 is null, not text"),
        (APPLY, ["files", 0, "after"], "x", "files[0].after is text, not StateRef or null"),
        (APPLY, ["files", 0], [], "files[0] is a list, not an object"),
        (APPLY, ["files"], {}, "files is an object, not a list"),
        (APPLY, ["commit"], 7, "commit is a number, not text or null"),
        (APPLY, ["index_before", "x.txt"], "abc", "index_before['x.txt'] is text, not a list"),
        (JOURNAL, ["files", 0, "perms"], "0644", "files[0].perms is text, not an integer"),
        (JOURNAL, ["kind"], "redo", "kind is 'redo', not one of 'apply', 'undo'"),
    ],
)
def test_a_value_of_the_wrong_type_is_named(
    record: SessionRecord | ApplyRecord | Journal,
    path: list[str | int],
    value: object,
    named: str,
) -> None:
    with pytest.raises(RecordTypeError) as caught:
        type(record).from_json(_damaged(record, path, value))
    assert named in str(caught.value)


def test_missing_unknown_and_whole_number_fields() -> None:
    data = json.loads(SESSION.to_json())
    data["added_by_a_newer_version"] = {"x": 1}
    data["created_at"] = 12  # a whole float written as an integer still reads
    del data["n_steps"]  # a field with a default may be left out
    record = SessionRecord.from_json(json.dumps(data))
    assert (record.created_at, type(record.created_at), record.n_steps) == (12.0, float, 0)
    del data["repo"]
    with pytest.raises(RecordTypeError, match="repo is missing"):
        SessionRecord.from_json(json.dumps(data))
    with pytest.raises(RecordTypeError, match="the record is a list, not an object"):
        SessionRecord.from_json("[]")
