"""`frogdesk review`, `frogdesk apply` and `frogdesk undo`: the session's diff, hunk by hunk."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from frogdesk.commands.errors import UserError
from frogdesk.core.errors import StaleReviewError, WorktreeGoneError
from frogdesk.core.reviewing import (
    Scope,
    SessionReview,
    apply_checked,
    load_review,
    session_store,
    show_review,
    stale_review_error,
    stale_since_review,
    undo_latest,
)
from frogdesk.errors import describe_os_error
from frogdesk.inert import inert_line, inert_text
from frogdesk.paths import AppPaths
from frogdesk.review.edited import shown_hunks
from frogdesk.review.errors import UnsafePath
from frogdesk.review.model import FileChange
from frogdesk.review.show import USER_CHANGED_NOTE, detail_lines, hunk_json, ignored_note
from frogdesk.sessions.errors import SessionNotFoundError
from frogdesk.worktree.errors import GitError


def register(sub: Any) -> None:
    """Add the review, apply and undo subcommands."""
    review: argparse.ArgumentParser = sub.add_parser(
        "review", help="list a session's changed files and hunks with their ids"
    )
    review.add_argument("session", help="session id (or a unique prefix)")
    review.add_argument("--json", action="store_true", help="print JSON")
    review.set_defaults(func=review_main)

    apply: argparse.ArgumentParser = sub.add_parser(
        "apply", help="write approved hunks of a session to your working tree"
    )
    apply.add_argument("session", help="session id (or a unique prefix)")
    which = apply.add_mutually_exclusive_group(required=True)
    which.add_argument("--all", action="store_true", help="every hunk")
    which.add_argument("--hunks", metavar="ID,...", help="these hunk ids")
    which.add_argument("--files", metavar="PATH,...", help="every hunk of these files")
    apply.add_argument("--commit", metavar="MESSAGE", help="also commit the applied files")
    apply.set_defaults(func=apply_main)

    undo: argparse.ArgumentParser = sub.add_parser(
        "undo", help="restore the files of the last apply (of a session, or of any)"
    )
    undo.add_argument("session", nargs="?", help="session id (default: the latest apply)")
    undo.set_defaults(func=undo_main)


def _load(session_id: str, *, shown: bool = False) -> SessionReview:
    """The session's review; `shown`: recorded as what the user is shown (see show_review)."""
    try:
        return (show_review if shown else load_review)(
            session_store(AppPaths.default()), session_id
        )
    except SessionNotFoundError:
        raise UserError(f"no session {session_id!r} (see `frogdesk sessions`)") from None
    except WorktreeGoneError as exc:
        raise UserError(str(exc)) from None
    except GitError as exc:
        raise UserError(f"cannot diff session {session_id}: {exc}") from None


def _user_changed(change: FileChange, flagged: set[str]) -> bool:
    return bool({change.old_path, change.new_path} & flagged)


def review_main(args: argparse.Namespace) -> int:
    """Print the session's files and hunks with their content, as text or JSON.

    Everything a reviewer approves is shown: each hunk's lines, symlink targets, mode
    changes and binary sizes; untrusted text is printed inert (escapes shown, not run).
    """
    loaded = _load(args.session, shown=True)
    decisions = loaded.decisions
    flagged = loaded.user_changed
    facts = loaded.file_facts()
    shown = shown_hunks(loaded.diff, decisions)  # an edited hunk as apply will write it
    if args.json:
        payload = {
            "session_id": loaded.record.id,
            "files": [
                {
                    "path": change.path,
                    "status": change.status,
                    "old_path": change.old_path,
                    "old_mode": change.old_mode,
                    "new_mode": change.new_mode,
                    "binary": change.binary,
                    "user_changed": _user_changed(change, flagged),
                    "hunks": [
                        {
                            "id": h.id,
                            "header": h.header,
                            "added": h.added,
                            "removed": h.removed,
                            "decision": decisions.decision(h.id),
                            "edited": h.id in decisions.edits,
                            **hunk_json(change, h, facts[change.path]),
                        }
                        for h in (shown[k.id] for k in change.hunks)
                    ],
                }
                for change in loaded.diff.files
            ],
            "ignored": list(loaded.diff.ignored),
        }
        # ASCII escapes: no byte of a file's content can reach the terminal as a control.
        print(json.dumps(payload, indent=2, ensure_ascii=True))
        return 0
    ignored = ignored_note(loaded.diff.ignored)
    if not loaded.diff.files:
        print(inert_line(f"session {loaded.record.id}: no changes"))
        if ignored:
            print(f"  {ignored}")
        return 0
    print(inert_line(f"session {loaded.record.id}: {len(loaded.diff.files)} file(s) changed"))
    if ignored:
        print(f"  {ignored}")
    for change in loaded.diff.files:
        moved = f" (from {change.old_path})" if change.status == "renamed" else ""
        print(inert_line(f"{change.status:<10} {change.path}{moved}"))
        if _user_changed(change, flagged):
            print(f"  ! {USER_CHANGED_NOTE}")
        for h in (shown[k.id] for k in change.hunks):
            edited = " (edited)" if h.id in decisions.edits else ""
            head = f"  {h.id}  +{h.added} -{h.removed}  {decisions.decision(h.id):<8}  {h.header}"
            print(inert_line(head + edited))
            for line in detail_lines(change, h, facts[change.path]):
                print(f"      {line}")
    return 0


def _split(value: str) -> list[str]:
    return [item.strip() for item in value.split(",") if item.strip()]


def _refused(loaded: SessionReview, ids: list[str], scope: Scope) -> bool:
    """True (the refusal printed) when a chosen change differs from what the review showed."""
    stale = stale_since_review(loaded, ids, scope)
    if not stale:
        return False
    print(inert_text(str(stale_review_error(loaded, stale))), file=sys.stderr)
    return True


def apply_main(args: argparse.Namespace) -> int:
    """Apply the chosen hunks as reviewed; exit 1 with a report when any conflicts or changed
    since the review (nothing written). With no review, the hunks are printed as applied."""
    loaded = _load(args.session)
    diff = loaded.diff
    scope: Scope = "all" if args.all else "hunks" if args.hunks is not None else "files"
    if args.all:
        ids = diff.hunk_ids()
    elif args.hunks is not None:
        ids = _split(args.hunks)
        unknown = [h for h in ids if diff.find_hunk(h) is None]
        if unknown and _refused(loaded, unknown, "hunks"):
            return 1
        if unknown:
            raise UserError(f"no hunk {', '.join(unknown)} in session {loaded.record.id}")
    else:
        ids = []
        for path in _split(args.files):
            change = diff.find_file(path)
            if change is None:
                raise UserError(f"session {loaded.record.id} does not change {path}")
            ids.extend(h.id for h in change.hunks)
    if not ids:
        raise UserError("nothing to apply")
    if _refused(loaded, ids, scope):
        return 1  # checked before the approvals are saved: nothing unreviewed is marked approved
    try:
        loaded.approve(ids)
        result = apply_checked(
            loaded,
            ids,
            scope,
            print,  # with no review first, what was written is listed before the report
            commit_message=args.commit,
        )
    except StaleReviewError as exc:
        print(inert_text(str(exc)), file=sys.stderr)
        return 1
    except OSError as exc:
        raise UserError(f"apply failed, nothing was written: {describe_os_error(exc)}") from None
    except (GitError, UnsafePath) as exc:
        raise UserError(f"apply failed, nothing was written: {exc}") from None
    if not result.applied:
        print(inert_text(result.report()), file=sys.stderr)
        return 1
    print(inert_text(result.report()))
    return 0


def undo_main(args: argparse.Namespace) -> int:
    """Undo the latest apply; exit 1 with a report when a file changed since."""
    store = session_store(AppPaths.default())
    session_id: str | None = None
    if args.session:
        try:
            session_id = store.get(args.session).id
        except SessionNotFoundError:
            raise UserError(f"no session {args.session!r}") from None
    result = undo_latest(store, session_id)
    if result is None:
        raise UserError("nothing to undo")
    if not result.ok:
        print(inert_text(result.report()), file=sys.stderr)
        return 1
    print(inert_text(result.report()))
    return 0
