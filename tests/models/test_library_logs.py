"""huggingface_hub's and llama.cpp's own messages go to the log file under the state folder, not the terminal."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from frogdesk import cli
from frogdesk.paths import AppPaths

ROOT = Path(__file__).resolve().parents[2]
HF_WARNING = (
    "import huggingface_hub.utils.logging as hf_log\n"
    "hf_log.get_logger('huggingface_hub.file_download').warning('Retrying in 8s [Retry 4/5]\\x1b[2J')\n"
)


def _python(code: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )


def test_huggingface_hub_warnings_go_to_the_log_file_not_stderr(tmp_path: Path) -> None:
    unrouted = _python(HF_WARNING)
    assert "Retrying in 8s" in unrouted.stderr  # positive control: the library prints by itself
    log = tmp_path / "state" / "log" / "frogdesk.log"
    routed = _python(
        f"from pathlib import Path\nfrom frogdesk.logfile import route_library_logs\n"
        f"route_library_logs(Path({str(log)!r}))\n" + HF_WARNING
    )
    assert routed.returncode == 0, routed.stderr
    assert routed.stderr == "" and routed.stdout == ""
    text = log.read_text()
    assert "huggingface_hub.file_download WARNING Retrying in 8s" in text
    assert "\x1b" not in text and "\\x1b[2J" in text  # the log is inert when read in a terminal


def test_llama_cpp_lines_go_to_the_log_file(
    smollm2_gguf: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    from frogdesk.engine.llama.load.log import LlamaLogCapture
    from frogdesk.engine.llama.load.model import LlamaModel
    from frogdesk.logfile import route_library_logs

    log = route_library_logs(AppPaths.default().log_file)
    capfd.readouterr()
    capture = LlamaLogCapture()
    try:
        model = LlamaModel(smollm2_gguf, log=capture)
        model.close()
    finally:
        capture.uninstall()  # llama.cpp must not keep calling a callback that goes away
    out, err = capfd.readouterr()
    assert model.n_vocab > 0 and out == "" and err == ""
    assert "frogdesk.llama INFO llama_model_loader" in log.read_text()


def test_llama_cpp_lines_after_a_capture_ends_reach_the_log_file_not_the_terminal(
    smollm2_gguf: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    import llama_cpp

    from frogdesk.engine.llama.load.log import LlamaLogCapture
    from frogdesk.engine.llama.load.model import LlamaModel
    from frogdesk.logfile import route_library_logs

    log = route_library_logs(AppPaths.default().log_file)
    capture = LlamaLogCapture()
    LlamaModel(smollm2_gguf, log=capture).close()
    capture.uninstall()
    capfd.readouterr()
    # llama.cpp logs why a missing file cannot load: no capture holds the log any more.
    params = llama_cpp.llama_model_default_params()
    assert not llama_cpp.llama_model_load_from_file(b"/nonexistent/after-capture.gguf", params)
    out, err = capfd.readouterr()
    assert out == "" and err == ""
    assert "after-capture.gguf" in log.read_text()


def test_doctor_shows_the_log_file(capsys: pytest.CaptureFixture[str]) -> None:
    log = AppPaths.default().log_file
    assert cli.main(["doctor"]) in (0, 1)
    out = capsys.readouterr().out
    assert f"log              {log}" in out
    assert cli.main(["doctor", "--json"]) in (0, 1)
    report = json.loads(capsys.readouterr().out)
    assert report["paths"]["log_file"] == str(log)


def test_doctor_does_not_ask_the_hub_when_offline(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_ENDPOINT", "http://frogdesk-hub.invalid")
    cli.main(["doctor", "--json"])
    hub = json.loads(capsys.readouterr().out)["hub"]
    assert hub["reachable"] is False and "HF_HUB_OFFLINE" in hub["error"]
