"""Issue 30.3: a Bash card says how its command ended (exit code, stopped, timed out), not `ok`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from frogdesk.config import Settings
from frogdesk.core.workbench import CoreWorkbench
from frogdesk.leaf.events import CommandOutcome, ToolFinished
from frogdesk.tui.app import FrogDeskApp
from frogdesk.tui.screens.session import SessionScreen
from frogdesk.tui.widgets.tool_card import finished_status
from tests.support.pilot import wait_for
from tests.support.scripted import call, make_repo, write_script

pytestmark = pytest.mark.anyio


@pytest.fixture
def sandbox_level() -> str:
    """Bash runs unattended only inside a sandbox; skip where none can run."""
    from frogdesk.sandbox.levels import detect

    level, reason = detect("auto")
    if level == "none":
        pytest.skip(f"no sandbox on this machine: {reason}")
    return str(level)


def test_the_status_word_comes_from_the_outcome_not_the_text() -> None:
    assert finished_status(True, None) == ("ok", True)
    assert finished_status(True, CommandOutcome(0)) == ("ok", True)
    assert finished_status(True, CommandOutcome(1)) == ("exit 1", False)
    assert finished_status(True, CommandOutcome(-1, stopped=True)) == ("stopped", False)
    assert finished_status(True, CommandOutcome(-1, timed_out=True)) == ("timed out", False)
    assert finished_status(False, None) == ("error", False)


async def test_bash_cards_show_exit_code_timeout_and_stop(
    tmp_path: Path, sandbox_level: str
) -> None:
    repo = make_repo(tmp_path)
    replies = [
        "Fail.\n</think>\n\n" + call("Bash", command="echo no; exit 3"),
        "Hang.\n</think>\n\n" + call("Bash", command="sleep 30", timeout="1"),
        "Hang longer.\n</think>\n\n" + call("Bash", command="sleep 300"),
        "Done.\n</think>\n\nnever reached",
    ]
    script = write_script(tmp_path / "s.jsonl", replies)
    settings = Settings.of(backend="script")
    workbench = CoreWorkbench(repo, settings, script=script)
    app = FrogDeskApp(workbench, settings, config_path=tmp_path / "config.toml")
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        await pilot.press(*"go", "enter")

        def cards() -> list[str]:
            return [str(c.title) for c in screen.conversation.cards]

        await wait_for(
            pilot,
            lambda: len(cards()) == 3 and screen.conversation.cards[1].observation is not None,
            "the third command to start",
            120,
        )
        await pilot.pause(0.3)
        await pilot.press("escape")
        await wait_for(
            pilot, lambda: screen.conversation.cards[2].observation is not None, "the stop", 60
        )
        first, timed, stopped = screen.conversation.cards
        assert first.observation is not None and first.observation.startswith("Exit code: 3")
        assert "· exit 3 ·" in str(first.title) and "· ok" not in str(first.title)
        assert first.has_class("-error")
        assert timed.observation is not None and timed.observation.startswith("Timed out")
        assert "· timed out ·" in str(timed.title)
        # The model still sees Leaf's text for a stopped command; the card says what happened.
        assert stopped.observation is not None and stopped.observation.startswith("Exit code: -1")
        assert "· stopped ·" in str(stopped.title) and "· ok" not in str(stopped.title)
        session = screen.session
        assert session is not None
    # A reopened session shows the same: the outcome is stored with the observation.
    finished = [i for i in session.history() if isinstance(i, ToolFinished)]
    assert [i.command for i in finished] == [
        CommandOutcome(3),
        CommandOutcome(-1, timed_out=True),
        CommandOutcome(-1, stopped=True),
    ]


async def test_the_status_bar_names_the_models_tool_call_dialect(tmp_path: Path) -> None:
    from frogdesk.engine.script_backend import ScriptBackend

    for dialect, words in (("hermes_json", "Hermes calls"), ("qwen3_coder_xml", "XML calls")):
        script = tmp_path / f"{dialect}.jsonl"
        script.write_text(json.dumps({"dialect": dialect}) + "\n", encoding="utf-8")
        settings = Settings.of(backend="script", sandbox="none")
        (tmp_path / dialect).mkdir()
        repo = make_repo(tmp_path / dialect)
        workbench = CoreWorkbench(repo, settings, backend=ScriptBackend(script))
        app = FrogDeskApp(workbench, settings, config_path=None)
        async with app.run_test(size=(160, 40)):
            screen = app.screen
            assert isinstance(screen, SessionScreen)
            assert screen.status.info.dialect == dialect
            line = str(screen.status.render())
            # last, the least important field; the ones a narrow terminal keeps are there
            fields = line.split(" │ ")
            assert fields[-1] == words, line
            assert any(f.endswith("files changed") for f in fields), line
