"""The FrogDesk Textual app: themes, keys, command palette, and the screen stack."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path

from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.screen import Screen

from frogdesk import config
from frogdesk.config import Settings
from frogdesk.core.ports import Workbench
from frogdesk.inert import inert_text
from frogdesk.logfile import listen_for_notices
from frogdesk.tui.bindings import all_binding_ids, app_bindings, keymap_from_settings
from frogdesk.tui.messages import LibraryNotice, WorkbenchReady
from frogdesk.tui.screens.help import HelpScreen
from frogdesk.tui.screens.session import SessionScreen
from frogdesk.tui.themes import DEFAULT_THEME, css_paths, frog_themes

ScreenFactory = Callable[["FrogDeskApp"], Screen[None]]
"""Builds the first screen (a session, or the model picker on a first run)."""


class FrogDeskApp(App[None]):
    """The TUI; drives the core through an injected Workbench and holds no agent logic."""

    TITLE = "FrogDesk"
    BINDINGS = app_bindings()

    def __init__(
        self,
        workbench: Workbench | None,
        settings: Settings,
        *,
        config_path: Path | None = None,
        first_screen: ScreenFactory | None = None,
    ) -> None:
        super().__init__(css_path=list(css_paths()))
        self.workbench = workbench
        self.settings = settings
        self.config_path = config_path
        self.first_screen = first_screen
        self._stop_notices: Callable[[], None] = lambda: None
        self.frog_themes = frog_themes()
        for frog in self.frog_themes.values():
            self.register_theme(frog.theme)
        self.theme = settings.theme if settings.theme in self.frog_themes else DEFAULT_THEME
        keymap, errors = keymap_from_settings(settings.keys, all_binding_ids())
        self.keymap_errors = [str(error) for error in errors]
        self.set_keymap(keymap)

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
            self.push_screen(SessionScreen(self.workbench, self.settings, self.syntax_style))

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
        screen = SessionScreen(workbench, self.settings, self.syntax_style)
        self.switch_screen(screen)
        return screen

    # -- themes ------------------------------------------------------------

    def action_toggle_theme(self) -> None:
        """Switch between the dark and the light theme."""
        names = list(self.frog_themes)
        current = names.index(self.theme) if self.theme in names else -1
        self.theme = names[(current + 1) % len(names)]

    def _save_theme(self, theme: object) -> None:
        name = getattr(theme, "name", "")
        if name not in self.frog_themes or name == self.settings.theme:
            return
        self.settings.theme = name
        if self.config_path is not None:
            try:
                config.save_option(self.config_path, "theme", name)
            except (OSError, config.ConfigError) as exc:
                self.notify(
                    inert_text(f"Could not save the theme: {exc}"), severity="error", markup=False
                )

    # -- help and palette --------------------------------------------------

    def key_rows(self, screen: Screen[object]) -> list[tuple[str, str]]:
        """(keys, description) for every binding active on a screen, as remapped."""
        rows: list[tuple[str, str]] = []
        seen: set[tuple[str, str]] = set()
        for key, active in screen.active_bindings.items():
            binding = active.binding
            if not binding.description:
                continue
            row = (self.get_key_display(binding) or key, binding.description)
            if row not in seen:
                seen.add(row)
                rows.append(row)
        return rows

    def action_help(self) -> None:
        """Show every key of the current screen."""
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.key_rows(self.screen)))

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """Textual's own commands plus every FrogDesk action of the current screen."""
        yield from super().get_system_commands(screen)
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
            if binding.action in {"command_palette", "quit"}:
                continue
            seen.add(binding.action)
            target = screen if on_screen else self
            help_text = f"{binding.description} ({self.get_key_display(binding)})"
            yield SystemCommand(
                binding.description, help_text, partial(self.run_action, binding.action, target)
            )
