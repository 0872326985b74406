"""The review screen: files with stats, hunks to approve, reject or edit, apply, undo, send back."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from textual import on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen, Screen
from textual.theme import Theme
from textual.widgets import Button, Input, Label, OptionList, Static, TextArea
from textual.widgets.option_list import Option

from frogdesk.core.ports import Workbench
from frogdesk.core.reviewing import SessionReview
from frogdesk.inert import inert_text
from frogdesk.review.decisions import HunkDecisions, pending_note
from frogdesk.review.edited import shown_hunks
from frogdesk.review.model import SessionDiff
from frogdesk.review.show import FileFacts, ignored_note
from frogdesk.tui.bindings import review_bindings
from frogdesk.tui.themes import diff_colours, frog_themes
from frogdesk.tui.untrusted import plain_line
from frogdesk.tui.widgets.fitting_footer import FittingFooter
from frogdesk.tui.widgets.hunk_view import HunkView
from frogdesk.tui.workers import ShowsWorkerErrors, error_words

REVIEW_FOOTER_FIRST = ("apply", "undo", "send_back", "approve_hunk", "reject_hunk")
"""The review's footer keys by importance: a narrow footer keeps these before the others."""

ReviewOutcome = tuple[Literal["closed", "send_back"], str]
"""How the review ended: closed, or sent back to the model with a comment."""


@dataclass
class DiffLoaded(Message):
    """The session's diff and stored decisions, computed by a worker."""

    review: SessionReview
    facts: dict[str, FileFacts]
    """Symlink targets and blob sizes by path, for the whole-file hunks."""


@dataclass
class ReviewDone(Message):
    """An apply or undo finished; `conflicts` maps hunk id -> reason."""

    report: str
    ok: bool
    conflicts: dict[str, str]


UNEDITABLE_HUNK = (
    "This hunk holds bytes that are not UTF-8 text, or control characters an editor would "
    "obey or hide; approve or reject it as it is, and edit the file after applying."
)


def editable_text(new_side: bytes) -> str | None:
    """The new side of a hunk as text for the editor, or None when the editor could not show
    it faithfully: bytes that are not UTF-8 (decoding would replace them, and saving would
    write the replacements) or control characters other than line ends and tabs (a text
    area draws them raw)."""
    try:
        text = new_side.decode("utf-8")
    except UnicodeDecodeError:
        return None
    plain = text.replace("\r\n", "\n")
    return text if inert_text(plain) == plain else None


class EditHunkScreen(ModalScreen[str | None]):
    """Edit a hunk's new side; Ctrl+S keeps it (and approves the hunk), Escape drops it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        ("ctrl+s", "save", "Keep edit"),
        ("escape", "drop", "Cancel"),
    ]

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def on_mount(self) -> None:
        """Edit straight away."""
        self.query_one(TextArea).focus()

    def compose(self) -> ComposeResult:
        """A text area with the new side."""
        with VerticalScroll(classes="dialog"):
            yield Label(
                "Edit the new side of this hunk (Ctrl+S keeps it, Escape cancels)",
                classes="dialog-title",
            )
            yield TextArea(self.text, id="hunk-edit")

    def action_save(self) -> None:
        """Keep the edit."""
        self.dismiss(self.query_one(TextArea).text)

    def action_drop(self) -> None:
        """Drop the edit."""
        self.dismiss(None)


class CommentScreen(ModalScreen[str | None]):
    """A comment for the model when sending the review back."""

    BINDINGS: ClassVar[list[BindingType]] = [("escape", "drop", "Cancel")]

    def compose(self) -> ComposeResult:
        """A one-line comment field."""
        with VerticalScroll(classes="dialog"):
            yield Label(
                "Send back to the model: rejected hunks are reverted and explained.",
                classes="dialog-title",
            )
            yield Input(placeholder="comment for the model (Enter sends)", id="comment")
            yield Button("Send", id="send", variant="primary")

    def on_mount(self) -> None:
        """Type straight away."""
        self.query_one(Input).focus()

    @on(Input.Submitted)
    @on(Button.Pressed)
    def _send(self) -> None:
        self.dismiss(self.query_one(Input).value)

    def action_drop(self) -> None:
        """Cancel."""
        self.dismiss(None)


class ReviewScreen(ShowsWorkerErrors, Screen[ReviewOutcome]):
    """Reviews one session's worktree diff against its base snapshot."""

    BINDINGS: ClassVar[list[BindingType]] = review_bindings()

    def __init__(self, workbench: Workbench, session_id: str, syntax_style: str) -> None:
        super().__init__()
        self.workbench = workbench
        self.session_id = session_id
        self.review: SessionReview | None = None
        self.syntax_style = syntax_style
        self.diff: SessionDiff | None = None
        self.decisions = HunkDecisions()
        self.views: list[HunkView] = []
        self.selected = 0
        self.split = False
        self.busy = False
        self.last_report = ""

    def compose(self) -> ComposeResult:
        """Files on the left, hunks on the right, a summary line."""
        with Horizontal(id="review-body"):
            yield OptionList(id="review-files")
            yield VerticalScroll(id="review-hunks")
        yield Static("Computing the diff…", id="review-summary", markup=False)
        # in 80 columns the actions that finish a review come before the per-hunk ones
        yield FittingFooter(first=REVIEW_FOOTER_FIRST)

    def on_mount(self) -> None:
        """Compute the diff in a worker; follow theme switches."""
        self.app.theme_changed_signal.subscribe(self, self._follow_theme)
        self._load()

    def _follow_theme(self, theme: Theme) -> None:
        """Redraw every hunk in the new theme's line colours and syntax style."""
        frog = frog_themes().get(theme.name)
        if frog is not None:
            self.syntax_style = frog.syntax_style
        colours = diff_colours(theme)
        for view in self.views:
            view.colours = colours
            view.style_name = self.syntax_style
            view.refresh_view()

    @work(thread=True, name="review-diff", exit_on_error=False)
    def _load(self) -> None:
        try:
            review = self.workbench.review(self.session_id)
            facts = review.file_facts()
        except Exception as exc:
            self.post_message(
                ReviewDone(f"Could not compute the diff: {error_words(exc)}", False, {})
            )
            return
        self.post_message(DiffLoaded(review, facts))

    async def on_diff_loaded(self, message: DiffLoaded) -> None:
        """Show files and hunks."""
        self.review = message.review
        self.diff = message.review.diff
        self.decisions = message.review.decisions
        files = self.query_one(OptionList)
        files.clear_options()
        hunks = self.query_one("#review-hunks", VerticalScroll)
        await hunks.remove_children()
        self.views = []
        colours = diff_colours(self.app.current_theme)
        shown = shown_hunks(message.review.diff, self.decisions)  # edits drawn as they land
        for change in message.review.diff.files:
            added = sum(h.added for h in change.hunks)
            removed = sum(h.removed for h in change.hunks)
            label = f"{change.status[:1].upper()} {change.path}  +{added} -{removed}"
            files.add_option(Option(plain_line(label), id=change.path))
            for hunk in change.hunks:
                facts = message.facts.get(change.path)
                view = HunkView(change, shown[hunk.id], self.syntax_style, colours, facts)
                view.decision = self.decisions.decision(hunk.id)
                view.edited = hunk.id in self.decisions.edits
                view.split = self.split
                self.views.append(view)
        await hunks.mount_all(self.views)
        self.selected = 0
        self._select(0)
        self._summary()

    # -- selection and decisions ------------------------------------------------

    @property
    def current(self) -> HunkView | None:
        """The selected hunk."""
        return self.views[self.selected] if self.views else None

    def _select(self, index: int) -> None:
        if not self.views:
            return
        self.selected = max(0, min(index, len(self.views) - 1))
        for i, view in enumerate(self.views):
            view.set_class(i == self.selected, "-selected")
        self.views[self.selected].scroll_visible(animate=False)

    def _summary(self, extra: str = "") -> None:
        if self.diff is None:
            return
        ids = self.diff.hunk_ids()
        counts = {
            d: sum(1 for h in ids if self.decisions.decision(h) == d)
            for d in ("approved", "rejected", "pending")
        }
        text = (
            f"{len(self.diff.files)} files, {len(ids)} hunks: {counts['approved']} approved, "
            f"{counts['rejected']} rejected, {counts['pending']} pending"
        )
        ignored = ignored_note(self.diff.ignored)
        if ignored:
            text = f"{text}; {ignored}"
        self.query_one("#review-summary", Static).update(plain_line(f"{text}   {extra}".rstrip()))

    def _decide(self, views: list[HunkView], decision: Literal["approved", "rejected"]) -> None:
        self.decisions.decide([v.hunk.id for v in views], decision)
        for view in views:
            view.decision = decision
            view.conflict = ""
            view.refresh_view()
        self._save()
        self._summary()

    def action_next_hunk(self) -> None:
        """Select the next hunk."""
        self._select(self.selected + 1)

    def action_previous_hunk(self) -> None:
        """Select the previous hunk."""
        self._select(self.selected - 1)

    def action_approve_hunk(self) -> None:
        """Approve the selected hunk and move on."""
        if self.current is not None:
            self._decide([self.current], "approved")
            self._select(self.selected + 1)

    def action_reject_hunk(self) -> None:
        """Reject the selected hunk and move on."""
        if self.current is not None:
            self._decide([self.current], "rejected")
            self._select(self.selected + 1)

    def _file_views(self) -> list[HunkView]:
        current = self.current
        return [
            v for v in self.views if current is not None and v.change.path == current.change.path
        ]

    def action_approve_file(self) -> None:
        """Approve every hunk of the selected hunk's file."""
        self._decide(self._file_views(), "approved")

    def action_reject_file(self) -> None:
        """Reject every hunk of the selected hunk's file."""
        self._decide(self._file_views(), "rejected")

    @on(OptionList.OptionSelected)
    def _jump(self, event: OptionList.OptionSelected) -> None:
        for index, view in enumerate(self.views):
            if view.change.path == event.option.id:
                self._select(index)
                return

    def action_toggle_layout(self) -> None:
        """Switch between unified and side-by-side hunks."""
        self.split = not self.split
        for view in self.views:
            view.split = self.split
            view.refresh_view()

    def action_edit_hunk(self) -> None:
        """Edit the new side of the selected text hunk."""
        view = self.current
        if view is None or view.hunk.kind != "text" or self.diff is None:
            self.notify("Only line hunks can be edited.", severity="warning")
            return
        start = self.decisions.edits.get(view.hunk.id)
        if start is None:
            start = editable_text(b"".join(view.hunk.new_lines))
        if start is None:
            self.notify(UNEDITABLE_HUNK, severity="warning", markup=False)
            return

        def keep(text: str | None) -> None:
            if text is None or self.diff is None:
                return
            self.decisions.edit(self.diff, view.hunk.id, text)
            self._save()
            view.hunk = shown_hunks(self.diff, self.decisions)[view.hunk.id]
            view.decision, view.edited, view.conflict = "approved", True, ""
            view.refresh_view()
            self._summary()

        self.app.push_screen(EditHunkScreen(start), keep)

    # -- apply, undo, send back ------------------------------------------------------

    def _save(self) -> None:
        if self.review is not None:
            self.workbench.decide(self.review, self.decisions)

    def action_apply(self) -> None:
        """Apply the approved hunks to the repository (all or nothing; conflicts shown inline)."""
        if self.review is None or self.diff is None or self.busy:
            return
        approved = sorted(self.decisions.ids(self.diff, "approved"))
        if not approved:
            self.notify("Approve at least one hunk first (a).", severity="warning")
            return
        self.busy = True
        self._summary("applying…")
        # Only approved hunks land (invariant 1); the pending ones are named, not asked about.
        self._apply(self.review, approved, len(self.decisions.ids(self.diff, "pending")))

    @work(thread=True, name="review-apply", exit_on_error=False)
    def _apply(self, review: SessionReview, approved: list[str], pending: int) -> None:
        try:
            result = self.workbench.apply(review, approved, self.decisions)
        except Exception as exc:
            self.post_message(ReviewDone(f"Apply failed: {error_words(exc)}", False, {}))
            return
        conflicts = {hunk_id: c.reason for c in result.conflicts for hunk_id in c.hunk_ids}
        report = result.report()
        note = pending_note(pending) if result.applied else ""
        if note:  # on the first line: the summary shows that one
            first, _, rest = report.partition("\n")
            report = f"{first}; {note}" + (f"\n{rest}" if rest else "")
        self.post_message(ReviewDone(report, result.applied, conflicts))

    def action_undo(self) -> None:
        """Undo this session's last apply."""
        if not self.busy:
            self.busy = True
            self._undo()

    @work(thread=True, name="review-undo", exit_on_error=False)
    def _undo(self) -> None:
        try:
            result = self.workbench.undo(self.session_id)
        except Exception as exc:
            self.post_message(ReviewDone(f"Undo failed: {error_words(exc)}", False, {}))
            return
        if result is None:
            self.post_message(ReviewDone("Nothing to undo.", False, {}))
            return
        self.post_message(ReviewDone(result.report(), result.ok, {}))

    def on_review_done(self, message: ReviewDone) -> None:
        """Show the report; mark conflicting hunks inline."""
        self.busy = False
        self.last_report = message.report
        for view in self.views:
            view.conflict = message.conflicts.get(view.hunk.id, "")
            view.refresh_view()
        first_line = message.report.splitlines()[0] if message.report else ""
        self._summary(first_line)
        self.notify(
            inert_text(message.report),
            severity="information" if message.ok else "error",
            timeout=8,
            markup=False,
        )

    def action_send_back(self) -> None:
        """Send the review back to the model with a comment."""

        def send(comment: str | None) -> None:
            if comment is not None:
                self.dismiss(("send_back", comment))

        self.app.push_screen(CommentScreen(), send)

    def action_close(self) -> None:
        """Back to the session."""
        self.dismiss(("closed", ""))
