"""Pulling from the stand-in Hub: verified, resumable across processes, and clean on every failure."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from frogdesk.models.download import Expected, download
from frogdesk.models.errors import ChecksumError, DownloadCancelled, DownloadError
from frogdesk.models.gguf_info import inspect_gguf
from frogdesk.models.hf_cache import incomplete_path, lock_path
from frogdesk.models.hub import list_repo, resolve_url
from frogdesk.models.progress import Progress
from frogdesk.models.pull import plan_pull, pull
from frogdesk.models.spec import parse_spec
from frogdesk.paths import AppPaths
from tests.support.hub_server import COMMIT, PREFIX, REPO, RunningHub

CHILD = Path(__file__).with_name("pull_child.py")
ROOT = Path(__file__).resolve().parents[2]


def _listing(hub: RunningHub):  # type: ignore[no-untyped-def]
    return list_repo(REPO, endpoint=hub.endpoint, cache_dir=AppPaths.default().cache_dir)


def _leftovers(folder: Path) -> list[str]:
    """Files under folder, but huggingface_hub's lock files (it leaves them too)."""
    if not folder.exists():
        return []
    return sorted(p.name for p in folder.rglob("*") if p.is_file() and ".locks" not in p.parts)


def _blob(cache: Path, name: str, hub: RunningHub) -> Path:
    """Where the cache keeps a served file's bytes: blobs/<sha256>."""
    data = hub.state.repos[REPO].files[name]
    return cache / f"models--{REPO.replace('/', '--')}" / "blobs" / hashlib.sha256(data).hexdigest()


def _snapshot(cache: Path, name: str) -> Path:
    return cache / f"models--{REPO.replace('/', '--')}" / "snapshots" / COMMIT / name


def test_pull_downloads_and_verifies(hub: RunningHub, tmp_path: Path) -> None:
    seen: list[Progress] = []
    paths = pull(parse_spec(f"{REPO}:Q4_K_M"), _listing(hub), tmp_path, progress=seen.append)
    name = f"{PREFIX}-Q4_K_M.gguf"
    assert paths == [_snapshot(tmp_path, name)] and paths[0].is_symlink()
    assert paths[0].read_bytes() == hub.state.repos[REPO].files[name]
    assert _leftovers(tmp_path) == sorted([name, _blob(tmp_path, name, hub).name, "main"])
    assert seen and seen[-1].done == seen[-1].total == len(hub.state.repos[REPO].files[name])
    # pulling again transfers nothing
    before = dict(hub.state.served)
    pull(parse_spec(f"{REPO}:Q4_K_M"), _listing(hub), tmp_path)
    assert hub.state.served == before


def test_pull_split_model_fetches_every_part(
    hub: RunningHub, tmp_path: Path, model_quants: dict[str, Path]
) -> None:
    paths = pull(parse_spec(f"{REPO}:Q8_0"), _listing(hub), tmp_path)
    assert [p.name for p in paths] == [
        f"{PREFIX}-Q8_0-00001-of-00002.gguf",
        f"{PREFIX}-Q8_0-00002-of-00002.gguf",
    ]
    files = hub.state.repos[REPO].files
    for path in paths:
        assert path.read_bytes() == files[f"{PREFIX}-Q8_0/{path.name}"]
    split = inspect_gguf(paths[0])
    single = inspect_gguf(model_quants["Q8_0"])
    assert split.parts == tuple(paths)
    assert (split.parameters, split.tensor_bytes, split.file_type) == (
        single.parameters,
        single.tensor_bytes,
        "Q8_0",
    )


def test_pull_refuses_the_vision_projector_and_unknown_quants(
    hub: RunningHub, tmp_path: Path
) -> None:
    from frogdesk.models.errors import ModelError

    del hub.state.repos[REPO].files[f"{PREFIX}-f16.gguf"]  # leave the f16 mmproj the only F16
    with pytest.raises(ModelError, match="vision projector"):
        plan_pull(parse_spec(f"{REPO}:F16"), _listing(hub), tmp_path)
    with pytest.raises(ModelError, match=r"no IQ2_M model file; available: .*Q2_K.*Q4_K_M"):
        plan_pull(parse_spec(f"{REPO}:IQ2_M"), _listing(hub), tmp_path)


def test_checksum_mismatch_is_caught_and_nothing_is_left(hub: RunningHub, tmp_path: Path) -> None:
    name = f"{PREFIX}-Q4_0.gguf"
    hub.state.corrupt.add(name)
    with pytest.raises(ChecksumError, match="checksum mismatch"):
        pull(parse_spec(f"{REPO}:Q4_0"), _listing(hub), tmp_path)
    assert _leftovers(tmp_path) == []


def test_lost_connection_keeps_the_partial_and_resumes(hub: RunningHub, tmp_path: Path) -> None:
    name = f"{PREFIX}-f16.gguf"
    size = len(hub.state.repos[REPO].files[name])
    hub.state.drop_after[name] = 300_000
    with pytest.raises(DownloadError, match="run again to resume"):
        pull(parse_spec(f"{REPO}:F16"), _listing(hub), tmp_path)
    dest = _blob(tmp_path, name, hub)
    assert not dest.exists()
    assert incomplete_path(dest).stat().st_size == 300_000
    hub.state.served.clear()
    pull(parse_spec(f"{REPO}:F16"), _listing(hub), tmp_path)
    assert hub.state.served[name] == size - 300_000
    assert hub.state.requests[-1][2] == "bytes=300000-"
    assert (
        hashlib.sha256(dest.read_bytes()).hexdigest()
        == hashlib.sha256(hub.state.repos[REPO].files[name]).hexdigest()
    )


def test_server_ignoring_range_restarts_cleanly(hub: RunningHub, tmp_path: Path) -> None:
    name = f"{PREFIX}-f16.gguf"
    hub.state.drop_after[name] = 200_000
    with pytest.raises(DownloadError):
        pull(parse_spec(f"{REPO}:F16"), _listing(hub), tmp_path)
    hub.state.ignore_range = True
    (path,) = pull(parse_spec(f"{REPO}:F16"), _listing(hub), tmp_path)
    assert path.read_bytes() == hub.state.repos[REPO].files[name]


def test_cancel_keeps_partial(hub: RunningHub, tmp_path: Path) -> None:
    hub.state.bytes_per_second = 2_000_000
    cancel = threading.Event()

    def on_progress(p: Progress) -> None:
        if p.done > 0:
            cancel.set()

    with pytest.raises(DownloadCancelled):
        pull(
            parse_spec(f"{REPO}:F16"), _listing(hub), tmp_path, progress=on_progress, cancel=cancel
        )
    dest = _blob(tmp_path, f"{PREFIX}-f16.gguf", hub)
    assert not dest.exists() and incomplete_path(dest).stat().st_size > 0


def test_small_git_file_is_verified_by_blob_id(hub: RunningHub, tmp_path: Path) -> None:
    listing = _listing(hub)
    readme = listing.file("README.md")
    url = resolve_url(hub.endpoint, REPO, "main", "README.md")
    dest = download(url, tmp_path / "README.md", Expected(readme.size, None, readme.blob_id))
    assert dest.read_bytes() == hub.state.repos[REPO].files["README.md"]
    hub.state.corrupt.add("README.md")
    with pytest.raises(ChecksumError):
        download(url, tmp_path / "again.md", Expected(readme.size, None, readme.blob_id))
    assert not (tmp_path / "again.md").exists()


def test_token_is_sent_and_its_absence_explained(hub: RunningHub, tmp_path: Path) -> None:
    listing = _listing(hub)
    hub.state.token = "tok"
    with pytest.raises(DownloadError, match="gated or private"):
        pull(parse_spec(f"{REPO}:Q4_0"), listing, tmp_path)
    (path,) = pull(parse_spec(f"{REPO}:Q4_0"), listing, tmp_path, token="tok")
    assert path.exists()


def _child(hub: RunningHub, spec: str, models: Path, *extra: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("HF_HUB_OFFLINE", None)
    return subprocess.Popen(
        [
            sys.executable,
            str(CHILD),
            hub.endpoint,
            spec,
            str(models),
            str(models / "cache"),
            *extra,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )


@pytest.mark.slow
def test_download_killed_midway_resumes_in_a_new_process(hub: RunningHub, tmp_path: Path) -> None:
    name = f"{PREFIX}-f16.gguf"
    size = len(hub.state.repos[REPO].files[name])
    hub.state.bytes_per_second = 1_000_000  # about two seconds for the file
    child = _child(hub, f"{REPO}:F16", tmp_path)
    dest = _blob(tmp_path, name, hub)
    partial = incomplete_path(dest)
    deadline = time.monotonic() + 120
    while not (partial.exists() and partial.stat().st_size >= size // 3):
        assert child.poll() is None, child.communicate()[0]
        assert time.monotonic() < deadline, "the child never got a third of the way"
        time.sleep(0.02)
    child.send_signal(signal.SIGKILL)
    child.wait()
    kept = partial.stat().st_size
    assert size // 3 <= kept < size and not dest.exists()

    hub.state.bytes_per_second = 0
    first_request = len(hub.state.requests)
    child = _child(hub, f"{REPO}:F16", tmp_path)
    out, _ = child.communicate(timeout=120)
    assert child.returncode == 0, out
    assert dest.read_bytes() == hub.state.repos[REPO].files[name]
    assert _snapshot(tmp_path, name).read_bytes() == dest.read_bytes()
    resumed = [r for r in hub.state.requests[first_request:] if r[1].endswith(name)]
    assert resumed == [("GET", f"/{REPO}/resolve/{COMMIT}/{name}", f"bytes={kept}-")]
    sent = hub.state.served_by_range[(name, f"bytes={kept}-")]
    assert sent == size - kept  # only the missing tail crossed the wire
    assert sent < size * 0.7


@pytest.mark.slow
def test_full_disk_leaves_nothing_half_written(hub: RunningHub, tmp_path: Path) -> None:
    name = f"{PREFIX}-f16.gguf"
    child = _child(hub, f"{REPO}:F16", tmp_path, "500000")  # RLIMIT_FSIZE: writes past 500 kB fail
    out, _ = child.communicate(timeout=120)
    assert child.returncode == 1, out
    assert "DiskFullError" in out and "nothing was kept" in out
    repo_dir = tmp_path / f"models--{REPO.replace('/', '--')}"
    assert _leftovers(repo_dir) == []
    assert name not in _leftovers(tmp_path)


def test_a_second_download_of_the_same_file_is_refused(hub: RunningHub, tmp_path: Path) -> None:
    import fcntl

    listing = _listing(hub)
    name = f"{PREFIX}-Q4_0.gguf"
    sha = hashlib.sha256(hub.state.repos[REPO].files[name]).hexdigest()
    lock = lock_path(tmp_path, REPO, sha)
    lock.parent.mkdir(parents=True)
    with lock.open("ab") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)  # as huggingface_hub's filelock holds it
        with pytest.raises(DownloadError, match="another download"):
            pull(parse_spec(f"{REPO}:Q4_0"), listing, tmp_path)
    (path,) = pull(parse_spec(f"{REPO}:Q4_0"), listing, tmp_path)
    assert path.read_bytes() == hub.state.repos[REPO].files[name]


def test_a_partial_of_another_version_is_not_resumed(hub: RunningHub, tmp_path: Path) -> None:
    name = f"{PREFIX}-f16.gguf"
    hub.state.drop_after[name] = 100_000
    with pytest.raises(DownloadError):
        pull(parse_spec(f"{REPO}:F16"), _listing(hub), tmp_path)
    # the repo gets a new version of the file: the old partial bytes must not be reused
    new_bytes = hub.state.repos[REPO].files[name][::-1]
    hub.state.repos[REPO].files[name] = new_bytes
    (path,) = pull(parse_spec(f"{REPO}:F16"), _listing(hub), tmp_path)
    assert path.read_bytes() == new_bytes
    assert hub.state.requests[-1][2] == ""  # started from zero, no Range


def test_redirect_to_another_host_does_not_carry_the_token(hub: RunningHub, tmp_path: Path) -> None:
    port = hub.endpoint.rsplit(":", 1)[1]
    hub.state.cdn_host = f"localhost:{port}"  # another host name for the same server, like a CDN
    hub.state.token = "tok"
    listing = list_repo(REPO, endpoint=hub.endpoint, cache_dir=tmp_path / "c", token="tok")
    name = f"{PREFIX}-Q4_0.gguf"
    (path,) = pull(parse_spec(f"{REPO}:Q4_0"), listing, tmp_path, token="tok")
    assert path.read_bytes() == hub.state.repos[REPO].files[name]
    seen = [(p, auth) for p, auth in hub.state.authorization_seen if p.endswith(name)]
    assert seen == [
        (f"/{REPO}/resolve/{COMMIT}/{name}", True),
        (f"/cdn/{REPO}/resolve/{COMMIT}/{name}", False),
    ]


def test_file_shrunk_on_the_server_resets_the_partial(hub: RunningHub, tmp_path: Path) -> None:
    name = f"{PREFIX}-f16.gguf"
    listing = _listing(hub)  # kept while the server's file changes under it
    dest = _blob(tmp_path, name, hub)
    hub.state.drop_after[name] = 100_000
    with pytest.raises(DownloadError):
        pull(parse_spec(f"{REPO}:F16"), listing, tmp_path)
    hub.state.repos[REPO].files[name] = b"GGUF" + bytes(2000)
    with pytest.raises(DownloadError, match="changed"):
        pull(parse_spec(f"{REPO}:F16"), listing, tmp_path)
    assert incomplete_path(dest).stat().st_size == 0 and not dest.exists()
