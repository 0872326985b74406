"""Escapes supplied by a model, a repository, the Hub or a GGUF never reach the terminal raw.

Each CLI command that prints outside text is fed ESC, OSC (clipboard, title, hyperlink) and C1
sequences; its output must carry them only as visible escapes (`\\x1b`), and its `--json` must
still be exact JSON that gives the original text back.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from frogdesk import cli
from frogdesk.paths import AppPaths
from tests.support.hub_server import PREFIX, REPO, RunningHub
from tests.support.scripted import call, git, write_script

OSC_TITLE = "\x1b]0;owned\x07"
OSC_CLIPBOARD = "\x1b]52;c;cHduZWQ=\x07"
OSC_LINK = "\x1b]8;;http://evil.invalid\x1b\\"
CLEAR = "\x1b[2J"
C1_CSI = "\x9b31m"
# Raw ESC, BEL and every C1 control: what a terminal would obey.
RAW = re.compile("[\x1b\x07\x80-\x9f]")


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    """Exit code and everything printed; with --json, stdout only (the JSON)."""
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    if "--json" in argv:
        assert not RAW.search(err)
        return code, out
    return code, out + err


def _assert_inert(text: str, visible: str) -> None:
    found = RAW.findall(text)
    assert not found, f"raw control characters printed: {found!r} in {text!r}"
    assert visible in text  # the outside text did reach the output, shown


def _repo(root: Path) -> Path:
    repo = root / "repo"
    repo.mkdir()
    # git puts the line before a hunk (here a def with an escape in it) into the hunk header.
    body = [f"def f{OSC_LINK}():\n"] + [f"    x{i} = {i}\n" for i in range(12)]
    (repo / "ctx.py").write_text("".join(body), encoding="utf-8")
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "init")
    return repo


EVIL_NAME = f"notes{OSC_TITLE}{C1_CSI}.txt"
COMMAND = f"echo {CLEAR}{OSC_CLIPBOARD} hi"


def _replies() -> list[str]:
    return [
        "Write.\n</think>\n\n" + call("Write", file_path=EVIL_NAME, content="a\n"),
        "Look.\n</think>\n\n" + call("Glob", pattern="notes*"),
        "Run.\n</think>\n\n" + call("Bash", command=COMMAND),
        "Edit.\n</think>\n\n"
        + call("Edit", file_path="ctx.py", old_string="    x9 = 9", new_string="    x9 = 99"),
        f"Done.\n</think>\n\nAll done {OSC_CLIPBOARD}{CLEAR}.",
    ]


def test_run_review_and_sessions_print_no_raw_escapes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = _repo(tmp_path)
    script = write_script(tmp_path / "s.jsonl", _replies())
    task = f"tidy {OSC_TITLE}up"
    # No terminal on stdin: the none level refuses the command, and still shows it.
    argv = ["run", task, "--repo", str(repo), "--script", str(script), "--sandbox", "none"]
    code, text = _run(capsys, *argv)
    assert code == 0, text
    _assert_inert(text, "\\x1b]52;c;cHduZWQ=\\x07")
    assert "notes\\x1b]0;owned\\x07\\x9b31m.txt" in text  # the Write, and the Glob's observation
    assert "echo \\x1b[2J\\x1b]52;c;cHduZWQ=\\x07 hi" in text

    code, out = _run(capsys, "sessions", "list", "--json")
    sessions = json.loads(out)
    assert code == 0 and sessions[0]["task"] == task
    session_id = sessions[0]["id"]
    code, text = _run(capsys, "sessions", "list")
    assert code == 0
    _assert_inert(text, "tidy \\x1b]0;owned\\x07up")

    code, text = _run(capsys, "review", session_id)
    assert code == 0
    _assert_inert(text, "notes\\x1b]0;owned\\x07\\x9b31m.txt")
    assert "def f\\x1b]8;;http://evil.invalid\\x1b\\" in text  # git's hunk-header context

    code, out = _run(capsys, "review", session_id, "--json")
    assert code == 0 and not RAW.search(out)
    files = json.loads(out)["files"]
    assert {f["path"] for f in files} == {EVIL_NAME, "ctx.py"}
    headers = [h["header"] for f in files for h in f["hunks"]]
    assert any(OSC_LINK in h for h in headers)


def _patched_gguf(source: Path, target: Path) -> Path:
    """A copy of the tiny model whose general.name carries escapes (same length, still valid)."""
    data = source.read_bytes()
    old = b"FrogDesk tiny qwen35 test model"
    new = f"{OSC_TITLE}{CLEAR}x".encode().ljust(len(old), b"!")
    assert len(new) == len(old) and data.count(old) == 1
    target.write_bytes(data.replace(old, new))
    return target


def test_models_info_prints_gguf_metadata_inertly(
    qwen35_gguf: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = _patched_gguf(qwen35_gguf, tmp_path / "patched.gguf")
    code, text = _run(capsys, "models", "info", str(model))
    assert code == 0, text
    _assert_inert(text, "\\x1b]0;owned\\x07\\x1b[2Jx")

    code, out = _run(capsys, "models", "info", str(model), "--json")
    assert code == 0 and not RAW.search(out)
    assert json.loads(out)["metadata"]["name"].startswith(f"{OSC_TITLE}{CLEAR}x")


def test_models_list_prints_hub_names_inertly(
    hub: RunningHub, capsys: pytest.CaptureFixture[str]
) -> None:
    evil = f"{PREFIX}-Q4_0{OSC_TITLE}.gguf"
    files = hub.state.repos[REPO].files
    files[evil] = files[f"{PREFIX}-Q4_K_M.gguf"]
    code, text = _run(capsys, "models", "--endpoint", hub.endpoint, "list", REPO)
    assert code == 0, text
    _assert_inert(text, f"{PREFIX}-Q4_0\\x1b]0;owned\\x07.gguf")

    code, out = _run(capsys, "models", "--endpoint", hub.endpoint, "list", REPO, "--json")
    assert code == 0 and not RAW.search(out)
    # The Hub name is refused as a file name (it holds control characters), and said so inertly.
    assert evil not in {row["file"] for row in json.loads(out)["models"]}


def test_positive_control_the_same_text_printed_plainly_is_raw(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The check itself can fail: printing the same name without the inert path trips it."""
    print(EVIL_NAME)
    out, _ = capsys.readouterr()
    with pytest.raises(AssertionError):
        _assert_inert(out, "notes")


def test_a_tampered_session_record_and_debug_tracebacks_print_inertly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A record on disk is outside text too, and so is an exception's message under --debug."""
    repo = _repo(tmp_path)
    script = write_script(tmp_path / "s.jsonl", ["Done.\n</think>\n\nok"])
    code, text = _run(capsys, "run", "t", "--repo", str(repo), "--script", str(script))
    assert code == 0, text
    code, out = _run(capsys, "sessions", "list", "--json")
    session_id = json.loads(out)[0]["id"]
    record = AppPaths.default().sessions_dir / session_id / "session.json"
    data = json.loads(record.read_text(encoding="utf-8"))
    data["exit_reason"] = f"odd{OSC_TITLE}{CLEAR}"
    record.write_text(json.dumps(data), encoding="utf-8")
    code, text = _run(capsys, "sessions", "list")
    assert code == 0
    _assert_inert(text, "odd\\x1b]0;owned\\x07\\x1b[2J")

    missing = f"{tmp_path}/gone{OSC_TITLE}"
    code, text = _run(capsys, "--debug", "run", "t", "--repo", missing, "--script", str(script))
    assert code != 0
    assert "Traceback (most recent call last)" in text and "does not exist" in text
    _assert_inert(text, "gone\\x1b]0;owned\\x07")


def test_an_unexpected_exception_is_reported_inertly(capsys: pytest.CaptureFixture[str]) -> None:
    """A bug keeps its traceback, with the message's controls shown."""
    try:
        raise ValueError(f"name{OSC_CLIPBOARD}")
    except ValueError as exc:
        cli._print_bug(ValueError, exc, exc.__traceback__)
    _, err = capsys.readouterr()
    assert "Traceback (most recent call last)" in err and "ValueError" in err
    _assert_inert(err, "name\\x1b]52;c;cHduZWQ=\\x07")
