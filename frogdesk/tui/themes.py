"""FrogDesk's Textual themes, their syntax-highlighting styles and the tcss files."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from textual.theme import Theme

from frogdesk.tui.widgets.diff_render import DiffColours

DEFAULT_THEME = "frogdesk-dark"


@dataclass(frozen=True)
class FrogTheme:
    """A Textual theme plus the pygments style that matches its colours."""

    theme: Theme
    syntax_style: str


def frog_themes() -> dict[str, FrogTheme]:
    """Every FrogDesk theme by name (built fresh: Theme objects are mutable)."""
    dark = Theme(
        name="frogdesk-dark",
        primary="#5fb37a",
        secondary="#7aa6c2",
        accent="#d7b45a",
        foreground="#d6dbd2",
        background="#141a17",
        surface="#1b231f",
        panel="#24302a",
        success="#6cc487",
        warning="#e0a84a",
        error="#e06c6c",
        dark=True,
        variables={
            "reasoning-color": "#8a948d",
            "diff-added": "#1f3d2a",
            "diff-removed": "#4a2226",
            "diff-added-word": "#2f7045",
            "diff-removed-word": "#87333b",
            "card-border": "#3a4a41",
        },
    )
    light = Theme(
        name="frogdesk-light",
        primary="#2f7d4a",
        secondary="#3d6f8f",
        accent="#9a6b00",
        foreground="#23302a",
        background="#f6f4ec",
        surface="#ecebe2",
        panel="#dfe4d8",
        success="#2f8a4c",
        warning="#a86400",
        error="#b23a3a",
        dark=False,
        variables={
            "reasoning-color": "#6c746e",
            "diff-added": "#d5efd9",
            "diff-removed": "#f6d6d6",
            "diff-added-word": "#9fd8aa",
            "diff-removed-word": "#eda4a4",
            "card-border": "#b9c4b5",
        },
    )
    return {
        dark.name: FrogTheme(dark, "monokai"),
        light.name: FrogTheme(light, "friendly"),
    }


def diff_colours(theme: Theme | None) -> DiffColours:
    """The review's line and changed-word backgrounds from a theme's variables (dark ones if none)."""
    variables = theme.variables if theme is not None else {}
    fallback = frog_themes()[DEFAULT_THEME].theme.variables
    return DiffColours(
        *(
            variables.get(name, fallback[name])
            for name in ("diff-removed", "diff-added", "diff-removed-word", "diff-added-word")
        )
    )


def themes_dir() -> Path:
    """The folder holding the .tcss files (beside the package in a checkout or a wheel)."""
    package = Path(__file__).resolve().parent
    for candidate in (package / "themes", package.parent.parent / "themes"):
        if (candidate / "base.tcss").is_file():
            return candidate
    return package.parent.parent / "themes"


def css_paths() -> list[Path]:
    """Layout first, then each theme's own rules (scoped by the app's -theme-NAME class)."""
    folder = themes_dir()
    return [folder / "base.tcss", *(folder / f"{name}.tcss" for name in frog_themes())]
