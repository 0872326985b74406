"""Files FrogDesk pulls are found by llama.cpp's tools: llama-cpp-python's `Llama.from_pretrained`
(run for real) and llama.cpp's own `-hf` cache lookup (its rules ported below from the llama.cpp
source that llama-cpp-python 0.3.36 vendors, common/hf-cache.cpp and common/download.cpp)."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from frogdesk import cli
from tests.support.hub_server import COMMIT, PREFIX, REPO, RunningHub

ROOT = Path(__file__).resolve().parents[2]
Q4 = f"{PREFIX}-Q4_K_M.gguf"


def _pull(hub: RunningHub, capsys: pytest.CaptureFixture[str], quant: str) -> Path:
    code = cli.main(["models", "pull", f"{REPO}:{quant}", "--endpoint", hub.endpoint])
    out, err = capsys.readouterr()
    assert code == 0, err
    return Path(out.strip())


def llama_cache_dir(environ: dict[str, str]) -> Path:
    """hf_cache::get_cache_directory: the first of these variables that is set wins."""
    for name, below in (
        ("LLAMA_CACHE", ""),
        ("HF_HUB_CACHE", ""),
        ("HUGGINGFACE_HUB_CACHE", ""),
        ("HF_HOME", "hub"),
        ("XDG_CACHE_HOME", "huggingface/hub"),
        ("HOME", ".cache/huggingface/hub"),
    ):
        if environ.get(name):
            return Path(environ[name]) / below if below else Path(environ[name])
    raise AssertionError("no cache directory")


def _cached_ref(repo_folder: Path) -> str:
    """hf_cache::get_cached_ref: refs/main, else the first valid ref; a ref is 40 hex digits."""
    refs = repo_folder / "refs"
    if not refs.is_dir():
        return ""
    fallback = ""
    for entry in refs.iterdir():
        if not entry.is_file():
            continue
        lines = entry.read_text().splitlines()
        commit = lines[0] if lines else ""
        if not re.fullmatch(r"[0-9A-Fa-f]{40}", commit):
            continue
        if entry.name == "main":
            return commit
        fallback = fallback or commit
    return fallback


def llama_cached_files(cache: Path, repo: str) -> dict[str, Path]:
    """hf_cache::get_cached_files(repo): path in the repo -> the snapshot file llama.cpp opens."""
    folder = cache / ("models--" + repo.replace("/", "--"))
    snapshots = folder / "snapshots"
    commit = _cached_ref(folder)
    if not snapshots.exists() or not commit or not (snapshots / commit).is_dir():
        return {}
    found = {}
    for entry in sorted((snapshots / commit).rglob("*")):
        if entry.is_file() or entry.is_symlink():
            found[entry.relative_to(snapshots / commit).as_posix()] = entry
    return found


def _is_model(path: str) -> bool:
    """gguf_filename_is_model."""
    name = path.rsplit("/", 1)[-1]
    skipped = ("mmproj", "imatrix", "mtp-", "eagle3-", "dflash-", "dspark-")
    return path.endswith(".gguf") and not any(word in name for word in skipped)


def _split(path: str) -> tuple[str, int, int]:
    """get_gguf_split_info: (prefix, index, count)."""
    prefix = path.removesuffix(".gguf")
    m = re.fullmatch(r"(.+)-([0-9]{5})-of-([0-9]{5})", prefix, re.IGNORECASE)
    return (m[1], int(m[2]), int(m[3])) if m else (prefix, 1, 1)


def llama_best_model(files: dict[str, Path], tag: str) -> list[str]:
    """find_best_model then get_split_files: the parts `-hf REPO:TAG` loads ([] if none)."""
    for wanted in [tag] if tag else ["Q4_K_M", "Q8_0"]:
        pattern = re.compile(wanted + "[.-]", re.IGNORECASE)
        for path in files:
            prefix, index, count = _split(path)
            if _is_model(path) and pattern.search(path) and (count == 1 or index == 1):
                if count == 1:
                    return [path]
                return [p for p in files if _split(p)[0] == prefix and _split(p)[2] == count]
    return []


def test_llama_cpp_hf_lookup_finds_frogdesk_pulls(
    hub: RunningHub, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = llama_cache_dir({k: v for k, v in os.environ.items() if k != "LLAMA_CACHE"})
    assert cache == Path(os.environ["HF_HUB_CACHE"])
    assert llama_cached_files(cache, REPO) == {}  # control: nothing before the pull

    q4 = _pull(hub, capsys, "Q4_K_M")
    split = _pull(hub, capsys, "Q8_0")
    files = llama_cached_files(cache, REPO)
    assert llama_best_model(files, "Q4_K_M") == [Q4]
    assert llama_best_model(files, "") == [Q4]  # -hf REPO with no tag takes Q4_K_M
    assert files[Q4] == q4
    served = hub.state.repos[REPO].files
    assert q4.read_bytes() == served[Q4]
    parts = llama_best_model(files, "Q8_0")
    assert len(parts) == 2 and files[parts[0]] == split
    for part in parts:
        assert files[part].read_bytes() == served[part]
    # online, -hf names each file snapshots/<commit>/<path> and uses it when it exists; the
    # blob it would fetch is blobs/<LFS sha256>: both are what the pull wrote
    folder = cache / ("models--" + REPO.replace("/", "--"))
    assert (folder / "snapshots" / COMMIT / Q4).resolve() == (
        folder / "blobs" / hashlib.sha256(served[Q4]).hexdigest()
    )
    assert llama_best_model(files, "Q2_K") == []  # control: a quant not pulled is not found

    # control: the lookup refuses a ref that is not a commit, as llama.cpp does
    (folder / "refs" / "main").write_text("not-a-commit")
    assert llama_cached_files(cache, REPO) == {}


FROM_PRETRAINED = """
import sys
from llama_cpp import Llama
llm = Llama.from_pretrained(sys.argv[1], sys.argv[2], n_ctx=256, verbose=False)
print(llm.model_path)
print(llm.n_vocab())
"""


@pytest.mark.llama
def test_llama_cpp_python_from_pretrained_loads_the_pulled_file(
    hub: RunningHub, capsys: pytest.CaptureFixture[str]
) -> None:
    pulled = _pull(hub, capsys, "Q4_K_M")
    hub.state.served.clear()
    env = {**os.environ, "HF_ENDPOINT": hub.endpoint, "PYTHONPATH": str(ROOT)}
    env.pop("HF_HUB_OFFLINE", None)
    done = subprocess.run(
        [sys.executable, "-c", FROM_PRETRAINED, REPO, "*Q4_K_M.gguf"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    path, vocab = done.stdout.split()
    assert Path(path) == pulled and int(vocab) > 0
    assert Q4 not in hub.state.served  # asked the Hub what the file is, fetched no byte of it
