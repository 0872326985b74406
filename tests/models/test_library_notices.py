"""Library warnings that matter become one-line FrogDesk notices (the CLI's stderr, the TUI's
notifications); every other library line stays in the log file only."""

from __future__ import annotations

import logging
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from frogdesk import cli
from frogdesk.logfile import listen_for_notices, route_library_logs
from frogdesk.paths import AppPaths

DISK = (
    "Not enough free disk space to download the file. The expected file size is: 2800.00 MB. "
    "The target location /cache/blobs only has 512.00 MB free disk space."
)


@pytest.fixture
def heard() -> Iterator[list[str]]:
    """The notices said while the test runs, its log file routed as the CLI routes it."""
    logging.captureWarnings(False)  # pytest put its own warnings recorder in place: route again
    route_library_logs(AppPaths.default().log_file)
    lines: list[str] = []
    stop = listen_for_notices(lines.append)
    yield lines
    stop()


def test_a_warning_that_matters_is_said_once_and_the_rest_stays_in_the_file(
    heard: list[str],
) -> None:
    warnings.warn(DISK, stacklevel=1)
    warnings.warn(DISK, stacklevel=1)
    logging.getLogger("huggingface_hub.file_download").warning("Retrying in 8s [Retry 4/5]")
    assert heard == [
        "not enough free disk space for a download: 2.80 GB needed, 512.00 MB free in /cache/blobs"
    ]
    log = AppPaths.default().log_file.read_text()
    assert "Retrying in 8s" in log and "Not enough free disk space" in log


def test_a_notice_carrying_control_characters_is_inert(heard: list[str]) -> None:
    logging.getLogger("frogdesk.llama").info("unknown model architecture: 'x\x1b[2Jy'")
    (line,) = heard
    assert "\x1b" not in line and "architecture 'x\\x1b[2Jy'" in line


def test_the_command_line_says_notices_on_stderr(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def doctor_that_warns(args: object) -> int:
        llama = logging.getLogger("frogdesk.llama")
        llama.info("llama_context: n_ctx_seq (16384) > n_ctx_train (8192) -- possible overflow")
        logging.getLogger("huggingface_hub").warning("an ordinary line")
        return 0

    monkeypatch.setattr(cli, "build_parser", _parser_running(doctor_that_warns))
    assert cli.main(["x"]) == 0
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        "frogdesk: warning: the model was trained on 8,192 tokens of context and is given "
        "16,384: past 8,192 tokens its answers may fall apart\n"
    )


def _parser_running(func: object) -> object:
    import argparse

    def build() -> argparse.ArgumentParser:
        parser = argparse.ArgumentParser()
        parser.add_argument("word")
        parser.set_defaults(func=func, tolerates_bad_config=True)
        return parser

    return build


def _without_pre_tokenizer(path: Path) -> Path:
    """The tiny qwen35 written with no tokenizer.ggml.pre (llama.cpp warns when loading it)."""
    import gguf

    from tests.support.tiny_qwen35 import write_tiny_qwen35

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(gguf.GGUFWriter, "add_tokenizer_pre", lambda self, value: None)
        return write_tiny_qwen35(path)


@pytest.mark.llama
def test_llama_cpp_warning_about_the_pre_tokenizer_is_said(
    heard: list[str],
    tmp_path: Path,
    qwen35_gguf: Path,
) -> None:
    from frogdesk.config import Settings
    from frogdesk.core.model_ops import load_backend

    settings = Settings.of(context_size=512)
    load_backend(settings, qwen35_gguf).close()
    assert heard == []  # control: the same model with its pre-tokenizer named loads quietly

    bare = _without_pre_tokenizer(tmp_path / "tiny-qwen35-nopre-F16.gguf")
    load_backend(settings, bare).close()
    assert len(heard) == 1 and "pre-tokenizer" in heard[0]
    assert "GENERATION QUALITY" in AppPaths.default().log_file.read_text()


@pytest.mark.llama
def test_llama_cpp_warning_about_a_context_past_training_is_said(
    heard: list[str], qwen35_gguf: Path
) -> None:
    import llama_cpp

    from frogdesk.engine.llama.load.log import LlamaLogCapture
    from frogdesk.engine.llama.load.model import LlamaModel

    capture = LlamaLogCapture()
    model = LlamaModel(qwen35_gguf, log=capture)
    try:
        trained = model.n_ctx_train
        for n_ctx in (trained // 2, trained * 2):  # below: the control; above: the warning
            params = llama_cpp.llama_context_default_params()
            params.n_ctx = n_ctx
            params.n_batch = params.n_ubatch = 64
            context = llama_cpp.llama_init_from_model(model.handle, params)
            assert context is not None
            llama_cpp.llama_free(context)
            if n_ctx < trained:
                assert heard == []
    finally:
        model.close()
        capture.uninstall()
    assert heard == [
        f"the model was trained on {trained:,} tokens of context and is given {trained * 2:,}: "
        f"past {trained:,} tokens its answers may fall apart"
    ]


@pytest.mark.llama
def test_a_context_cut_to_the_training_context_is_said(heard: list[str], qwen35_gguf: Path) -> None:
    from frogdesk.config import Settings
    from frogdesk.core.model_ops import load_backend
    from frogdesk.models.gguf_info import inspect_gguf

    trained = inspect_gguf(qwen35_gguf).context_length
    load_backend(Settings.of(context_size=trained // 2), qwen35_gguf).close()
    assert heard == []  # control: a context the model holds is used as asked
    backend = load_backend(Settings.of(context_size=trained * 2), qwen35_gguf)
    assert backend.info.context_size == trained
    backend.close()
    assert heard == [
        f"{qwen35_gguf.name} was trained on {trained:,} tokens of context: FrogDesk uses "
        f"{trained:,}, not the {trained * 2:,} that context_size asks"
    ]


@pytest.mark.llama
def test_gpu_layers_asked_of_a_build_without_offload_is_said(
    heard: list[str], qwen35_gguf: Path
) -> None:
    import llama_cpp

    from frogdesk.config import Settings
    from frogdesk.core.model_ops import load_backend

    if llama_cpp.llama_supports_gpu_offload():
        pytest.skip("this llama.cpp build offloads to a GPU")
    load_backend(Settings.of(context_size=512, gpu_layers=0), qwen35_gguf).close()
    assert heard == []  # control: the CPU asked for, the CPU given
    backend = load_backend(Settings.of(context_size=512, gpu_layers=4), qwen35_gguf)
    assert backend.info.device == "CPU"
    backend.close()
    assert heard == [
        "gpu_layers asks for 4 layers on a GPU, but this llama.cpp cannot offload: the model "
        "runs on the CPU (`frogdesk doctor` shows the build)"
    ]


@pytest.mark.llama
@pytest.mark.slow
def test_a_headless_run_says_the_load_notices_on_stderr(
    tmp_path: Path, qwen35_gguf: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import llama_cpp

    from frogdesk.models.gguf_info import inspect_gguf
    from tests.support.scripted import frogdesk, make_repo

    trained = inspect_gguf(qwen35_gguf).context_length
    cut = (
        f"{qwen35_gguf.name} was trained on {trained:,} tokens of context: FrogDesk uses "
        f"{trained:,}, not the {trained * 2:,} that context_size asks"
    )
    no_offload = "gpu_layers asks for 4 layers on a GPU, but this llama.cpp cannot offload"
    repo = make_repo(tmp_path)

    def run(context_size: int, gpu_layers: int, out: str) -> str:
        monkeypatch.setenv("FROGDESK_CONTEXT_SIZE", str(context_size))
        monkeypatch.setenv("FROGDESK_GPU_LAYERS", str(gpu_layers))
        done = frogdesk(
            "run", "Say hello.", "--repo", str(repo), "--backend", "llama",
            "--model", str(qwen35_gguf), "--max-steps", "1", "--max-tokens-per-turn", "4",
            "--sandbox", "none", "--quiet", "--output", str(tmp_path / out), timeout=300,
        )  # fmt: skip
        assert "Traceback" not in done.stderr
        return done.stderr

    # control: a context the model holds, on the CPU asked for: nothing said
    quiet = run(trained // 2, 0, "asked")
    assert cut.split(":")[0] not in quiet and "gpu_layers asks" not in quiet
    stderr = run(trained * 2, 4, "cut")
    assert f"frogdesk: warning: {cut}" in stderr
    if not llama_cpp.llama_supports_gpu_offload():
        assert f"frogdesk: warning: {no_offload}" in stderr
