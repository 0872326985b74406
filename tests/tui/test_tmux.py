"""`frogdesk` in a real terminal: tmux at 120x40 on a temp repo with the SmolLM2 test model."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.scripted import fingerprint, make_repo

pytestmark = [pytest.mark.llama, pytest.mark.slow]


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], check=True, capture_output=True, text=True).stdout


class Terminal:
    """One tmux session running a command; `screen()` is what a person would see."""

    def __init__(self, name: str) -> None:
        self.name = name

    def screen(self) -> str:
        return tmux("capture-pane", "-p", "-t", self.name)

    def keys(self, *keys: str) -> None:
        tmux("send-keys", "-t", self.name, *keys)

    def type(self, text: str) -> None:
        tmux("send-keys", "-t", self.name, "-l", text)

    def wait(self, condition: Callable[[str], bool], what: str, limit: float = 120.0) -> str:
        deadline = time.monotonic() + limit
        while True:
            text = self.screen()
            if condition(text):
                return text
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}; screen:\n{text}")
            time.sleep(0.2)


@pytest.fixture
def terminal(tmp_path: Path, smollm2_gguf: Path) -> Iterator[tuple[Terminal, Path]]:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    repo = make_repo(tmp_path)
    name = f"frogdesk-{uuid.uuid4().hex[:8]}"
    done = tmp_path / "exit-code"
    env = {
        "FROGDESK_HOME": os.environ["FROGDESK_HOME"],
        "FROGDESK_CONTEXT_SIZE": "2048",
        "FROGDESK_MAX_TOKENS_PER_TURN": "1024",
        "HF_HUB_OFFLINE": "1",
        "TERM": "xterm-256color",
    }
    exports = " ".join(f"{k}={v!r}" for k, v in env.items())
    go = tmp_path / "go"
    command = (
        f"while [ ! -e {go} ]; do sleep 0.1; done; "
        f"env {exports} {sys.executable} -m frogdesk --repo {repo} --model {smollm2_gguf}; "
        f"echo $? > {done}; sleep 60"
    )
    tmux("new-session", "-d", "-s", name, "-x", "120", "-y", "40", command)
    # A tmux server started earlier may size new windows its own way: pin 120x40 first.
    tmux("set-option", "-t", name, "window-size", "manual")
    tmux("resize-window", "-t", name, "-x", "120", "-y", "40")
    go.touch()
    try:
        yield Terminal(name), done
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)


def test_type_stream_stop_quit(terminal: tuple[Terminal, Path], tmp_path: Path) -> None:
    term, done = terminal
    repo = tmp_path / "repo"
    before = fingerprint(repo)
    term.wait(lambda s: "Describe a task" in s, "the session screen", 180)
    term.wait(
        lambda s: (
            "SmolLM2" in s and "step 0/150" in s and "0 files changed" in s and "ctx 0/2.0k" in s
        ),
        "the model and an idle session in the status bar",
    )
    term.type("Write a long story about a frog who learns Python.")
    term.keys("Enter")
    first = term.wait(lambda s: "generating" in s, "generation to start")
    # Tokens stream: the conversation grows between two looks, and the status bar shows a rate.
    term.wait(
        lambda s: s != first and "step 1/150" in s and "tok/s" in s and "- tok/s" not in s,
        "tokens to stream and a rate in the status bar",
        120,
    )
    term.keys("Escape")
    term.wait(lambda s: "Stopped. What next?" in s, "the stop question", 60)
    term.keys("e")
    term.wait(lambda s: "Stopped. What next?" not in s, "the question to close")
    term.keys("C-q")
    deadline = time.monotonic() + 60
    while not done.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert done.exists(), f"frogdesk did not quit; screen:\n{term.screen()}"
    assert done.read_text().strip() == "0"
    assert fingerprint(repo) == before, "the user's repository changed"
