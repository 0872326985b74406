"""The `frogdesk` command: version, help, doctor, and clear one-line config errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import frogdesk


def frogdesk_cmd(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "frogdesk", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env=dict(os.environ),
        check=False,
    )


def test_version() -> None:
    result = frogdesk_cmd("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"frogdesk {frogdesk.__version__}"


def test_help_lists_every_subcommand() -> None:
    result = frogdesk_cmd("--help")
    assert result.returncode == 0
    for name in ("run", "tool", "models", "sessions", "review", "apply", "undo", "doctor"):
        assert name in result.stdout


def test_doctor_json_reports_this_machine() -> None:
    result = frogdesk_cmd("doctor", "--json", "--hub-timeout", "1")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["frogdesk"] == frogdesk.__version__
    assert report["packages"]["llama-cpp-python"] != "missing"
    assert report["llama"]["available"] is True
    assert isinstance(report["llama"]["gpu_offload"], bool)
    assert report["cpu"]["logical"] >= 1
    assert report["memory"]["total"] > 0
    assert report["sandbox"]["level"] in {"bwrap", "landlock", "none"}
    assert report["sandbox"]["reason"]
    assert report["paths"]["data_dir"].startswith(os.environ["FROGDESK_HOME"])
    assert report["config"]["valid"] is True
    assert isinstance(report["hub"]["reachable"], bool)


def test_doctor_counts_the_saved_states_and_shared_openings() -> None:
    home = Path(os.environ["FROGDESK_HOME"])
    before = json.loads(frogdesk_cmd("doctor", "--json", "--hub-timeout", "1").stdout)
    assert before["shared_openings"] == {"count": 0, "total": 0}  # control: none yet
    openings = home / "cache" / "openings"
    openings.mkdir(parents=True)
    (openings / f"{'0' * 32}.opening").write_bytes(b"x" * 3000)
    (openings / "notes.txt").write_bytes(b"not an opening")
    report = json.loads(frogdesk_cmd("doctor", "--json", "--hub-timeout", "1").stdout)
    assert report["shared_openings"] == {"count": 1, "total": 3000}
    assert report["saved_states"] == {"count": 0, "total": 0}
    assert "shared openings" in frogdesk_cmd("doctor", "--hub-timeout", "1").stdout


def test_doctor_text_is_readable() -> None:
    result = frogdesk_cmd("doctor", "--hub-timeout", "1")
    assert result.returncode == 0, result.stderr
    for label in ("llama.cpp", "memory", "sandbox", "config", "hub"):
        assert label in result.stdout


def test_hub_offline_is_an_answer_not_a_crash() -> None:
    from frogdesk.core.doctor import hub_status

    status = hub_status("http://127.0.0.1:9", timeout=1)
    assert status["reachable"] is False and status["error"]


def write_config(text: str) -> Path:
    path = Path(os.environ["FROGDESK_HOME"]) / "config" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_bad_config_is_one_line_exit_2() -> None:
    path = write_config("max_stpes = 3\n")
    result = frogdesk_cmd("sessions", "list")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert str(path) in lines[0] and "max_stpes" in lines[0]


def test_wrong_type_and_invalid_toml_exit_2() -> None:
    for text, fragment in (
        ('temperature = "hot"\n', "temperature"),
        ("theme = [\n", "invalid TOML"),
    ):
        write_config(text)
        result = frogdesk_cmd("models", "list")
        assert result.returncode == 2, result.stderr
        assert fragment in result.stderr and "Traceback" not in result.stderr


def test_doctor_shows_bad_config_and_exits_2() -> None:
    write_config("max_stpes = 3\n")
    result = frogdesk_cmd("doctor", "--hub-timeout", "1")
    assert result.returncode == 2
    assert "max_stpes" in result.stdout


def test_gpu_hint_names_the_rebuild() -> None:
    from frogdesk.core.doctor import gpu_install_hint

    hint = gpu_install_hint("nvidia")
    assert "packaging/install-gpu --cuda" in hint
    assert "CMAKE_ARGS=-DGGML_CUDA=on" in hint and "--no-binary llama-cpp-python" in hint
    assert "--metal" in gpu_install_hint("apple")
