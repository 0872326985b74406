"""Pulls land in the Hugging Face cache as huggingface_hub writes it; rm and the old folder's move."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from frogdesk import cli
from frogdesk.paths import AppPaths
from tests.support.hub_server import COMMIT, PREFIX, REPO, RunningHub

NAME = f"{PREFIX}-Q4_K_M.gguf"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _pull(hub: RunningHub, capsys: pytest.CaptureFixture[str], quant: str = "Q4_K_M") -> Path:
    code, out, err = _run(capsys, "models", "pull", f"{REPO}:{quant}", "--endpoint", hub.endpoint)
    assert code == 0, err
    return Path(out.strip())


def test_pull_is_seen_by_huggingface_hub_with_its_revision(
    hub: RunningHub, capsys: pytest.CaptureFixture[str]
) -> None:
    from huggingface_hub import hf_hub_download, scan_cache_dir, try_to_load_from_cache

    path = _pull(hub, capsys)
    cache = Path(os.environ["HF_HUB_CACHE"])
    assert path.is_relative_to(cache)
    assert try_to_load_from_cache(REPO, NAME, cache_dir=cache) == str(path)
    assert try_to_load_from_cache(REPO, NAME, cache_dir=cache, revision=COMMIT) == str(path)
    # huggingface_hub's own download finds it without asking the server
    served = len(hub.state.requests)
    found = hf_hub_download(REPO, NAME, cache_dir=cache, local_files_only=True)
    assert found == str(path) and len(hub.state.requests) == served

    info = scan_cache_dir(cache)
    assert not info.warnings
    (repo,) = info.repos
    assert repo.repo_id == REPO and repo.repo_type == "model"
    (revision,) = repo.revisions
    assert revision.commit_hash == COMMIT and revision.refs == frozenset({"main"})
    (cached,) = revision.files
    data = hub.state.repos[REPO].files[NAME]
    assert cached.file_path == path and cached.size_on_disk == len(data)
    assert cached.blob_path.name == hashlib.sha256(data).hexdigest()


def test_hf_home_alone_places_the_cache(
    hub: RunningHub,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv("HF_HUB_CACHE")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "elsewhere"))
    path = _pull(hub, capsys)
    assert path == tmp_path / "elsewhere" / "hub" / f"models--{REPO.replace('/', '--')}" / (
        f"snapshots/{COMMIT}/{NAME}"
    )


def test_a_file_another_tool_downloaded_is_not_fetched_again(
    hub: RunningHub, capsys: pytest.CaptureFixture[str]
) -> None:
    from huggingface_hub import hf_hub_download

    cache = Path(os.environ["HF_HUB_CACHE"])
    theirs = hf_hub_download(REPO, NAME, cache_dir=cache, endpoint=hub.endpoint)
    hub.state.served.clear()
    ours = _pull(hub, capsys)
    assert str(ours) == theirs and NAME not in hub.state.served


def test_rm_removes_cleanly_from_the_cache(
    hub: RunningHub, capsys: pytest.CaptureFixture[str]
) -> None:
    from huggingface_hub import scan_cache_dir

    path = _pull(hub, capsys)
    kept = _pull(hub, capsys, "Q2_K")
    blob = path.resolve()
    code, out, err = _run(capsys, "models", "rm", f"{REPO}:Q4_K_M")
    assert code == 0, err
    assert f"removed {path}" in out and f"removed {blob}" in out
    assert not path.exists() and not blob.exists() and kept.exists()
    info = scan_cache_dir(Path(os.environ["HF_HUB_CACHE"]))
    assert not info.warnings
    code, out, err = _run(capsys, "models", "rm", f"{REPO}:Q2_K")
    assert code == 0, err
    info = scan_cache_dir(Path(os.environ["HF_HUB_CACHE"]))
    assert not info.warnings and all(not r.revisions for r in info.repos)
    code, _, err = _run(capsys, "models", "rm", f"{REPO}:Q2_K")
    assert code == 2 and "not on this machine" in err


def test_rm_says_when_the_blob_is_shared(
    hub: RunningHub, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = _pull(hub, capsys)
    blob = path.resolve()
    other_tool = tmp_path / "lmstudio" / NAME
    other_tool.parent.mkdir()
    os.link(blob, other_tool)  # another tool's copy of the same bytes, as a hard link
    code, out, err = _run(capsys, "models", "rm", f"{REPO}:Q4_K_M")
    assert code == 0, err
    assert "hard link(s) by another tool keep its bytes on disk" in out
    assert not path.exists() and other_tool.read_bytes() == hub.state.repos[REPO].files[NAME]


def test_rm_keeps_a_blob_another_revision_still_names(
    hub: RunningHub, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _pull(hub, capsys)
    older = path.parents[1] / ("f" * 40) / NAME
    older.parent.mkdir()
    older.symlink_to(os.path.relpath(path.resolve(), older.parent))
    code, out, err = _run(capsys, "models", "rm", f"{REPO}:Q4_K_M")
    assert code == 0, err
    assert "also the file of revision" in out
    left = [link for link in (path, older) if link.is_symlink()]
    assert len(left) == 1 and left[0].read_bytes() == hub.state.repos[REPO].files[NAME]


def test_the_old_models_folder_is_moved_once_with_a_message(
    hub: RunningHub, capsys: pytest.CaptureFixture[str]
) -> None:
    old = AppPaths.default().models_dir / "bartowski" / REPO.split("/")[1] / NAME
    old.parent.mkdir(parents=True)
    old.write_bytes(hub.state.repos[REPO].files[NAME])
    stale = old.with_name(f"{PREFIX}-Q2_K.gguf")
    stale.write_bytes(b"GGUF" + bytes(100))  # not the listed bytes: it stays where it is
    code, _, err = _run(capsys, "models", "--endpoint", hub.endpoint, "list", REPO)
    assert code == 0, err
    assert err.count("moved ") == 1 and f"moved {NAME} from FrogDesk's old models folder" in err
    assert not old.exists() and stale.exists()
    code, _, err = _run(capsys, "models", "--endpoint", hub.endpoint, "list", REPO)
    assert "moved" not in err
    hub.state.served.clear()
    path = _pull(hub, capsys)
    assert path.read_bytes() == hub.state.repos[REPO].files[NAME] and not hub.state.served


def test_offline_pull_uses_the_cache_and_asks_nothing(
    hub: RunningHub, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _pull(hub, capsys)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    served = len(hub.state.requests)
    assert _pull(hub, capsys) == path
    code, _, err = _run(capsys, "models", "pull", f"{REPO}:Q2_K", "--endpoint", hub.endpoint)
    assert code == 2 and "HF_HUB_OFFLINE" in err.strip().splitlines()[-1]
    assert "Traceback" not in err and len(hub.state.requests) == served
