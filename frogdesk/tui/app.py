"""The FrogDesk Textual app: themes, keys, command palette, and the screen stack."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import ClassVar

from textual import events
from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.command import CommandPalette, Hit, Hits, Provider
from textual.screen import Screen
from textual.system_commands import SystemCommandsProvider
from textual.widgets import Input, TextArea

from frogdesk import config
from frogdesk.config import Settings
from frogdesk.core.ports import Workbench
from frogdesk.inert import inert_text
from frogdesk.logfile import listen_for_notices
from frogdesk.tui.bindings import all_binding_ids, app_bindings, keymap_from_settings
from frogdesk.tui.messages import LibraryNotice, WorkbenchReady
from frogdesk.tui.screens.help import HelpScreen, key_groups
from frogdesk.tui.screens.modals import ConfirmScreen
from frogdesk.tui.screens.session import SessionScreen
from frogdesk.tui.themes import DEFAULT_THEME, css_paths, frog_themes

ScreenFactory = Callable[["FrogDeskApp"], Screen[None]]
"""Builds the first screen (a session, or the model picker on a first run)."""

QUIT_AGAIN_SECONDS = 2.0
"""How long a first Ctrl+C waits for the second one that quits."""

DESCRIPTION_SCORE = 0.3
"""A palette entry found by a word of its description ranks below one found by its name."""


class FrogCommands(SystemCommandsProvider):
    """The palette's entries, found by their name (fuzzy) or a word of their description."""

    async def search(self, query: str) -> Hits:
        """Entries whose name matches the query, then those whose description contains it."""
        matcher = self.matcher(query)
        words = query.strip().lower()
        for name, help_text, callback, *_ in self.app.get_system_commands(self.screen):
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), callback, help=help_text)
            elif words and words in help_text.lower():
                yield Hit(DESCRIPTION_SCORE, name, callback, help=help_text)


def help_keys(keymap: dict[str, str]) -> frozenset[str]:
    """The keys of the app's help bindings once `keymap` is applied."""
    keys: set[str] = set()
    for binding in app_bindings():
        if isinstance(binding, Binding) and binding.action == "help":
            bound = keymap.get(binding.id or "", binding.key)
            keys.update(App._normalize_keymap({"k": bound})["k"].split(","))
    return frozenset(key.strip() for key in keys)


def typing_in(widget: object) -> bool:
    """Whether a key that types text goes into `widget`: a text field that holds some."""
    if isinstance(widget, Input):
        return bool(widget.value)
    if isinstance(widget, TextArea):
        return not widget.read_only and bool(widget.text)
    return False


def selecting_in(widget: object) -> bool:
    """Whether `widget` is a text field with selected text (Ctrl+C copies it there)."""
    if isinstance(widget, (Input, TextArea)):
        return bool(widget.selected_text)
    return False


class FrogDeskApp(App[None]):
    """The TUI; drives the core through an injected Workbench and holds no agent logic."""

    TITLE = "FrogDesk"
    BINDINGS = app_bindings()
    COMMANDS: ClassVar[set[type[Provider] | Callable[[], type[Provider]]]] = {FrogCommands}

    def __init__(
        self,
        workbench: Workbench | None,
        settings: Settings,
        *,
        config_path: Path | None = None,
        first_screen: ScreenFactory | None = None,
        repo: Path | None = None,
    ) -> None:
        super().__init__(css_path=list(css_paths()))
        self.workbench = workbench
        self.repo = repo
        """The repository the sessions work on (shown on the session screen)."""
        self._quit_armed = False
        """A first Ctrl+C was pressed with nothing to stop: the next one quits."""
        self.settings = settings
        self.config_path = config_path
        self.first_screen = first_screen
        self._stop_notices: Callable[[], None] = lambda: None
        self.frog_themes = frog_themes()
        for frog in self.frog_themes.values():
            self.register_theme(frog.theme)
        self.theme = settings.tui.theme if settings.tui.theme in self.frog_themes else DEFAULT_THEME
        keymap, errors = keymap_from_settings(settings.tui.keys, all_binding_ids())
        self.keymap_errors = [str(error) for error in errors]
        self.set_keymap(keymap)
        self.help_keys = help_keys(keymap)
        """The keys bound to the help, as remapped."""

    @property
    def syntax_style(self) -> str:
        """The pygments style matching the current theme."""
        frog = self.frog_themes.get(self.theme)
        return frog.syntax_style if frog else "monokai"

    def on_mount(self) -> None:
        """Open the first screen and report bad key remaps; library warnings that matter
        become notifications while the app runs."""
        self._stop_notices = listen_for_notices(self._hear_notice)
        self.theme_changed_signal.subscribe(self, self._save_theme)
        for error in self.keymap_errors:
            self.notify(inert_text(error), severity="warning", timeout=10, markup=False)
        if self.first_screen is not None:
            self.push_screen(self.first_screen(self))
        elif self.workbench is not None:
            self.push_screen(self._session_screen(self.workbench))

    def on_unmount(self) -> None:
        """Library warnings go back to whoever listened before (the command line)."""
        self._stop_notices()

    def _hear_notice(self, text: str) -> None:
        self.post_message(LibraryNotice(text))  # safe from any thread (llama.cpp's, a worker)

    def on_library_notice(self, message: LibraryNotice) -> None:
        """Show a library warning that matters as a notification (never markup)."""
        self.notify(inert_text(message.text), severity="warning", timeout=15, markup=False)

    def on_workbench_ready(self, message: WorkbenchReady) -> None:
        """The first run loaded a model: go on to a session on it."""
        self.open_session_screen(message.workbench)

    def open_session_screen(self, workbench: Workbench) -> SessionScreen:
        """Switch to a fresh session screen on a ready workbench (after the first run)."""
        self.workbench = workbench
        screen = self._session_screen(workbench)
        self.switch_screen(screen)
        return screen

    def _session_screen(self, workbench: Workbench) -> SessionScreen:
        return SessionScreen(workbench, self.settings, self.syntax_style, repo=self.repo)

    # -- keys that work from any field ---------------------------------------

    async def on_event(self, event: events.Event) -> None:
        """A key that types a character (`?`) but is bound to the help: Textual drops such
        bindings while a text field has the focus, so the help is opened here, before the
        field sees the key, wherever the key would type nothing."""
        if (
            isinstance(event, events.Key)
            and not event.is_forwarded
            and event.is_printable
            and event.key in self.help_keys
            and not typing_in(self.screen.focused)
            and self.check_action("help", ())
        ):
            event.stop()
            self.action_help()
            return
        await super().on_event(event)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The help's own `?` closes it and the palette's search takes `?`; Ctrl+C leaves a
        selection to the field, which copies it."""
        if action == "help":
            return not isinstance(self.screen, (HelpScreen, CommandPalette))
        if action == "interrupt":  # a selection (in a field or by mouse) is copied instead
            return not (selecting_in(self.screen.focused) or self.screen.get_selected_text())
        return True

    def busy(self) -> str:
        """What quitting now would stop, in words ("" when nothing runs): the model or a
        command, attempts, a model loading, a download. Each screen says its own
        (`busy_with`); the screen on top is asked first."""
        for screen in reversed(self.screen_stack):
            busy_with = getattr(screen, "busy_with", None)
            words: str = busy_with() if callable(busy_with) else ""
            if words:
                return words
        return ""

    async def action_quit(self) -> None:
        """Quit; while something runs that quitting would stop, ask first (a second Ctrl+Q
        says yes)."""
        busy = self.busy()
        if not busy:
            self.exit()
            return
        if isinstance(self.screen, QuitQuestion):
            self.exit()
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.exit()

        self.push_screen(QuitQuestion(busy), answered)

    async def action_interrupt(self) -> None:
        """Ctrl+C: stop what the session runs; with nothing running, twice quits."""
        screen = self.screen
        if isinstance(screen, SessionScreen) and screen.running:
            screen.action_stop()
            return
        if self._quit_armed:
            await self.action_quit()
            return
        self._quit_armed = True
        self.notify("Press Ctrl+C again to quit.", timeout=QUIT_AGAIN_SECONDS, markup=False)
        self.set_timer(QUIT_AGAIN_SECONDS, self.disarm_quit, name="quit-again")

    def disarm_quit(self) -> None:
        """The moment for a second Ctrl+C has passed."""
        self._quit_armed = False

    # -- themes ------------------------------------------------------------

    def action_toggle_theme(self) -> None:
        """Switch between the dark and the light theme."""
        names = list(self.frog_themes)
        current = names.index(self.theme) if self.theme in names else -1
        self.theme = names[(current + 1) % len(names)]

    def _save_theme(self, theme: object) -> None:
        name = getattr(theme, "name", "")
        if name not in self.frog_themes or name == self.settings.tui.theme:
            return
        self.settings.tui.theme = name
        if self.config_path is not None:
            try:
                config.save_option(self.config_path, "theme", name)
            except (OSError, config.ConfigError) as exc:
                self.notify(
                    inert_text(f"Could not save the theme: {exc}"), severity="error", markup=False
                )

    # -- help and palette --------------------------------------------------

    def action_help(self) -> None:
        """Show every key of the current screen: FrogDesk's first, text editing after."""
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(key_groups(self, self.screen)))

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """Textual's own commands plus every FrogDesk action of the current screen, one entry
        per action (Ctrl+T's theme replaces Textual's own theme picker)."""
        for command in super().get_system_commands(screen):
            if command.title != "Theme":
                yield command
        seen: set[str] = set()
        bindings: list[tuple[BindingType, bool]] = [
            (b, True) for b in getattr(screen, "BINDINGS", [])
        ]
        bindings += [(b, False) for b in app_bindings()]
        for binding, on_screen in bindings:
            if (
                not isinstance(binding, Binding)
                or not binding.description
                or binding.action in seen
            ):
                continue
            if binding.action in {"command_palette", "quit", "interrupt"}:
                continue
            seen.add(binding.action)
            target = screen if on_screen else self
            what = binding.tooltip or binding.description
            help_text = f"{what} ({self.get_key_display(binding)})"
            yield SystemCommand(
                binding.description, help_text, partial(self.run_action, binding.action, target)
            )


class QuitQuestion(ConfirmScreen):
    """Asked by Ctrl+Q while something runs that quitting would stop."""

    def __init__(self, busy: str) -> None:
        super().__init__(f"{busy}. Quit anyway? It stops.")
