"""Under an address-space cap (RLIMIT_AS) the llama backend fits its context or says it cannot."""

from __future__ import annotations

import dataclasses
import json
import resource
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from frogdesk.engine.llama.errors import DoesNotFitError, ModelLoadError
from frogdesk.engine.llama.load.fit import address_space_room, fit_under_cap, header_info, reserve
from frogdesk.engine.llama.load.gguf import read_gguf_header
from frogdesk.models.gguf_info import inspect_gguf
from frogdesk.models.memory import estimate


def needed(model: Path, context: int, threads: int = 2) -> int:
    info = header_info(model, read_gguf_header(model))
    return estimate(info, context).total + reserve(threads)


@pytest.mark.parametrize("context", [256, 4096, 8192])
def test_header_estimate_matches_the_full_reader(smollm2_gguf: Path, context: int) -> None:
    light = header_info(smollm2_gguf, read_gguf_header(smollm2_gguf))
    full = inspect_gguf(smollm2_gguf)
    assert estimate(light, context) == estimate(full, context)


def test_header_estimate_matches_the_full_reader_on_a_hybrid(qwen35_gguf: Path) -> None:
    light = header_info(qwen35_gguf, read_gguf_header(qwen35_gguf))
    full = inspect_gguf(qwen35_gguf)
    assert light.full_attention_layers == full.full_attention_layers
    assert light.recurrent_layers == full.recurrent_layers
    header = read_gguf_header(qwen35_gguf)
    mapped, counted = estimate(light, 2048), estimate(full, 2048)
    # the header counts the padding between tensors too (at most one alignment each)
    assert counted.weights <= mapped.weights <= counted.weights + 32 * header.n_tensors
    assert dataclasses.replace(mapped, weights=counted.weights) == counted


def test_largest_context_that_fits_is_chosen(smollm2_gguf: Path) -> None:
    room = needed(smollm2_gguf, 1024)
    fit = fit_under_cap(smollm2_gguf, room, n_ctx=0, n_threads=2)
    assert (fit.n_ctx, fit.needed) == (1024, room)
    assert fit_under_cap(smollm2_gguf, room - 1, n_ctx=0, n_threads=2).n_ctx == 768


def test_plenty_of_room_takes_the_ceiling_or_the_model_context(smollm2_gguf: Path) -> None:
    assert fit_under_cap(smollm2_gguf, 2**40, n_ctx=0, n_threads=2).n_ctx == 8192
    assert fit_under_cap(smollm2_gguf, 2**40, n_ctx=0, n_threads=2, ceiling=2048).n_ctx == 2048


def test_nothing_fits_names_the_model_and_the_sizes(smollm2_gguf: Path) -> None:
    smallest = needed(smollm2_gguf, 256)
    with pytest.raises(DoesNotFitError) as caught:
        fit_under_cap(smollm2_gguf, smallest - 1, n_ctx=0, n_threads=2)
    assert caught.value.shortfall.needed == smallest
    message = str(caught.value)
    assert message.startswith(f"not enough memory to load {smollm2_gguf.name}: it needs about ")
    assert "try a smaller quant or a smaller context" in message


def test_an_explicit_context_is_checked_as_asked(smollm2_gguf: Path) -> None:
    room = needed(smollm2_gguf, 2048)
    assert fit_under_cap(smollm2_gguf, room, n_ctx=2048, n_threads=2).n_ctx == 2048
    with pytest.raises(DoesNotFitError) as caught:
        fit_under_cap(smollm2_gguf, room, n_ctx=4096, n_threads=2)
    assert caught.value.shortfall.needed == needed(smollm2_gguf, 4096)


def test_a_file_larger_than_the_room_is_refused_before_it_is_read(tmp_path: Path) -> None:
    junk = tmp_path / "big.gguf"
    junk.write_bytes(b"not a gguf" * 1000)
    with pytest.raises(DoesNotFitError):
        fit_under_cap(junk, reserve(2) + 100, n_ctx=0, n_threads=2)
    with pytest.raises(ModelLoadError) as caught:  # with room, the header check speaks
        fit_under_cap(junk, 2**40, n_ctx=0, n_threads=2)
    assert caught.value.problem == "not_gguf"


def test_no_cap_means_no_room_limit() -> None:
    if resource.getrlimit(resource.RLIMIT_AS)[0] != resource.RLIM_INFINITY:
        pytest.skip("this test process already runs under an address-space cap")
    assert address_space_room() is None


def run_capped(code: str, extra: int, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    """Run `code` in a child capped at its own mapped size after imports plus `extra` bytes."""
    prelude = textwrap.dedent(
        f"""
        import json, resource, sys
        from pathlib import Path
        from frogdesk.config import Settings
        from frogdesk.engine.backends import BackendError, make_backend
        import llama_cpp
        for line in open("/proc/self/status"):
            if line.startswith("VmSize:"):
                cap = int(line.split()[1]) * 1024 + {extra}
        resource.setrlimit(resource.RLIMIT_AS, (cap, resource.RLIM_INFINITY))
        """
    )
    return subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=timeout,  # a hang guard only
        check=False,
    )


LOAD = """
settings = Settings.of(threads=2, context_size=0)
try:
    backend = make_backend(settings, model_path=Path({model!r}))
except BackendError as exc:
    print(json.dumps({{"error": str(exc)}}))
else:
    print(json.dumps({{"n_ctx": backend.context.n_ctx}}))
"""


@pytest.mark.llama
@pytest.mark.slow
def test_a_capped_process_loads_the_context_that_fits(smollm2_gguf: Path) -> None:
    extra = needed(smollm2_gguf, 2048) + 8 * 2**20
    done = run_capped(LOAD.format(model=str(smollm2_gguf)), extra)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert "error" not in result, result
    assert 2048 <= result["n_ctx"] < 8192


@pytest.mark.llama
def test_a_capped_process_too_small_gets_one_message(smollm2_gguf: Path) -> None:
    extra = needed(smollm2_gguf, 256) // 2
    done = run_capped(LOAD.format(model=str(smollm2_gguf)), extra)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["error"].startswith(f"not enough memory to load {smollm2_gguf.name}")


@pytest.mark.llama
@pytest.mark.slow
def test_frogdesk_run_under_a_cap_exits_2_and_leaves_no_worktree(
    tmp_path: Path, smollm2_gguf: Path
) -> None:
    from frogdesk.paths import AppPaths

    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "a.txt").write_text("a\n", encoding="utf-8")
    subprocess.run([*git, "add", "a.txt"], check=True)
    subprocess.run([*git, "commit", "-qm", "start"], check=True)
    cap = 400_000_000

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    done = subprocess.run(
        [sys.executable, "-m", "frogdesk", "run", "task", "--repo", str(repo),
         "--backend", "llama", "--model", str(smollm2_gguf), "--max-steps", "1"],
        capture_output=True, text=True, timeout=180, check=False, preexec_fn=limit,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("frogdesk: ")]
    assert len(lines) == 1, done.stderr
    assert f"not enough memory to load {smollm2_gguf.name}" in lines[0]
    worktrees = AppPaths.default().worktrees_dir
    assert not worktrees.exists() or not any(worktrees.iterdir())
    listed = subprocess.run(
        ["git", "-C", str(repo), "worktree", "list", "--porcelain"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert listed.count("worktree ") == 1
