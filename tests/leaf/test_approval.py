"""The approval gate: modes, `auto` by sandbox level, and an allow-list that matches whole commands.

Every trick below is shown doing its harm in a real bash (the positive control), and passing a
naive prefix check, before the allow-list is shown refusing it.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from frogdesk.config import DEFAULT_BASH_ALLOWLIST, ConfigError, Settings, load
from frogdesk.engine.chat import ToolCall
from frogdesk.leaf.approval import (
    DECLINED,
    CommandDeclined,
    CommandGate,
    allowlisted,
    approval_mode,
    plain_words,
)
from frogdesk.leaf.runner import ToolRunner
from tests.support.plain_shell import PlainShell

TRICKS = [
    "ls; touch PWNED",
    "ls && touch PWNED",
    "ls nothing-here || touch PWNED",
    "ls | touch PWNED",
    "ls & touch PWNED",
    "ls $(touch PWNED)",
    "ls `touch PWNED`",
    "ls\ntouch PWNED",
    "ls > PWNED",
    "ls >PWNED",
    "cat <(touch PWNED)",
    "git status; touch PWNED",
    "git status && touch PWNED",
    "ls ${IFS}x;touch${IFS}PWNED",
    "ls $'\\x3b'; touch PWNED",
    "ls 'a'; touch PWNED",
    'ls "a"; touch PWNED',
    "ls\\\n; touch PWNED",
    "ls {a,b}; touch PWNED",
    "ls\t-la; touch PWNED",
    "ls # ; \n touch PWNED",
]
"""Commands that start like an allow-listed one and create PWNED when bash runs them."""


@pytest.mark.parametrize("trick", TRICKS)
def test_tricks_do_harm_in_bash_and_pass_a_prefix_check_but_not_the_allowlist(
    tmp_path: Path, trick: str
) -> None:
    # positive control: the trick is real, bash creates the file (git's in a repository)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["/bin/bash", "-c", trick], cwd=tmp_path, capture_output=True, check=False)
    assert (tmp_path / "PWNED").exists(), f"the trick did nothing in bash: {trick!r}"
    # and a check that looks at the start of the command would let it through
    assert any(trick.startswith(p.removesuffix(" *")) for p in DEFAULT_BASH_ALLOWLIST)
    assert not allowlisted(trick, DEFAULT_BASH_ALLOWLIST)


@pytest.mark.parametrize(
    "command",
    [
        "cat /etc/passwd",
        "cat ../../secret",
        "cat src/../../secret",
        "cat ~/.ssh/id_rsa",
        "grep -f/etc/passwd x",
        "grep --file=/etc/passwd x",
        "grep --file=../up x",
        "ls *",
        "ls -la ?",
        "ls [a]",
        "ls\u00a0-la",
        "ls !!",
        "cat $HOME",
        "git diff --output=x",
        "git log --oneline --output=x",
        "git status --porcelain",
        "lsblk",
        "rm -rf .",
    ],
)
def test_outside_the_worktree_globs_and_unlisted_commands_are_not_allowlisted(
    command: str,
) -> None:
    assert not allowlisted(command, DEFAULT_BASH_ALLOWLIST)


@pytest.mark.parametrize(
    "command",
    ["ls", "ls -la src", "  git status  ", "git diff --stat", "cat calc.py", "grep -rn add ."],
)
def test_plain_read_only_commands_are_allowlisted(command: str) -> None:
    assert allowlisted(command, DEFAULT_BASH_ALLOWLIST)


def test_a_user_pattern_matches_the_whole_command_only() -> None:
    patterns = ["python -m pytest*"]
    assert allowlisted("python -m pytest -q tests/test_a.py", patterns)
    assert not allowlisted("python -m pytest -q; touch PWNED", patterns)
    assert not allowlisted("echo python -m pytest", patterns)
    assert plain_words("python -m pytest -q")


def test_auto_is_always_at_none_and_never_elsewhere() -> None:
    assert approval_mode("auto", "none") == "always"
    assert approval_mode("auto", "bwrap") == "never"
    assert approval_mode("auto", "landlock") == "never"
    assert approval_mode("untrusted", "none") == "untrusted"
    assert approval_mode("never", "none") == "never"
    with pytest.raises(ValueError, match="bash_approval"):
        approval_mode("sometimes", "bwrap")


def test_each_mode_asks_for_what_it_says() -> None:
    asked: list[str] = []

    def ask(command: str) -> bool:
        asked.append(command)
        return True

    for mode in ("always", "untrusted", "never"):
        gate = CommandGate(mode, DEFAULT_BASH_ALLOWLIST, ask)  # type: ignore[arg-type]
        gate.check("ls")
        gate.check("ls; touch PWNED")
    assert asked == ["ls", "ls; touch PWNED", "ls; touch PWNED"]


def test_nobody_to_ask_means_no() -> None:
    gate = CommandGate("always")
    with pytest.raises(CommandDeclined, match=DECLINED):
        gate.check("ls")
    CommandGate("untrusted").check("ls")  # allow-listed: nobody needs to be asked
    CommandGate("never").check("touch x")


def test_a_refused_bash_call_is_leafs_error_observation_and_runs_nothing(tmp_path: Path) -> None:
    call = ToolCall("Bash", {"command": "touch ran"})
    refused = ToolRunner(tmp_path, PlainShell(), CommandGate("always", ask=lambda c: False))
    outcome = refused.run(call)
    assert outcome.observation == f"CommandDeclined: {DECLINED}"
    assert not outcome.ok and not (tmp_path / "ran").exists()
    # positive control: the same call, approved, runs
    approved = ToolRunner(tmp_path, PlainShell(), CommandGate("always", ask=lambda c: True))
    assert approved.run(call).observation.startswith("Exit code: 0\n")
    assert (tmp_path / "ran").exists()


def test_the_setting_reads_old_booleans_and_refuses_other_words(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    assert Settings().sandbox.bash_approval == "auto"
    assert list(Settings().sandbox.bash_allowlist) == list(DEFAULT_BASH_ALLOWLIST)
    path.write_text("bash_approval = true\n", encoding="utf-8")
    assert load(path, {}).sandbox.bash_approval == "always"
    path.write_text("bash_approval = false\n", encoding="utf-8")
    assert load(path, {}).sandbox.bash_approval == "auto"
    assert load(path, {"FROGDESK_BASH_APPROVAL": "yes"}).sandbox.bash_approval == "always"
    assert load(path, {"FROGDESK_BASH_APPROVAL": "untrusted"}).sandbox.bash_approval == "untrusted"
    path.write_text('bash_approval = "sometimes"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="bash_approval"):
        load(path, {})
