"""A Hub that never stops answering, or lists what no file can be: each ends in one clear line."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from frogdesk import cli
from frogdesk.models.download import DownloadLimits, Expected, download
from frogdesk.models.errors import DownloadStalled, ModelError
from frogdesk.models.hub import list_repo, resolve_url
from frogdesk.paths import AppPaths
from tests.support.hub_server import (
    COMMIT,
    PREFIX,
    REPO,
    HubState,
    RunningHub,
    git_blob_sha1,
    serve_hub,
)

HANG = 30.0
"""Generous bound on a call that must end (old code waited forever)."""


def _within(call: Callable[[], object]) -> object:
    """What call returned or raised; the test fails if it is still running after HANG s."""
    outcome: list[object] = []

    def run() -> None:
        try:
            outcome.append(call())
        except Exception as exc:
            outcome.append(exc)

    thread = threading.Thread(target=run, name="bounded-call", daemon=True)
    thread.start()
    thread.join(HANG)
    assert outcome, f"still running after {HANG:g} s"
    return outcome[0]


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _entry(name: str, size: bytes) -> bytes:
    oid = git_blob_sha1(name.encode())
    return b'{"type":"file","path":"%s","oid":"%s","size":%s}' % (
        name.encode(),
        oid.encode(),
        size,
    )


@pytest.mark.parametrize("size", [b"1e999", str(10**400).encode(), b"-1"])
def test_a_size_no_file_can_have_is_refused_in_one_line(
    hub: RunningHub, capsys: pytest.CaptureFixture[str], size: bytes
) -> None:
    sound = _entry(f"{PREFIX}-Q4_0.gguf", b"1000")
    bad = _entry(f"{PREFIX}-IQ4_XS.gguf", size)
    hub.state.tree_body = b"[" + sound + b"," + bad + b"]"
    code, out, err = _run(capsys, "models", "--endpoint", hub.endpoint, "list", REPO)
    assert code == 0, err
    assert "Q4_0" in out  # the control: the sound entry beside it is listed
    assert "IQ4_XS" not in out
    (line,) = [x for x in err.splitlines() if "IQ4_XS" in x]
    assert line.startswith("refused") and "size is not a whole number of bytes" in line
    assert "Traceback" not in err


def test_a_reply_nested_too_deeply_is_one_clear_error(hub: RunningHub, tmp_path: Path) -> None:
    hub.state.tree_body = b"[" * 100_000
    with pytest.raises(ModelError, match="nested too deeply to read") as caught:
        list_repo(REPO, endpoint=hub.endpoint, cache_dir=tmp_path)
    assert "\n" not in str(caught.value)
    hub.state.tree_body = None  # the control: the same Hub's sound reply lists
    assert list_repo(REPO, endpoint=hub.endpoint, cache_dir=tmp_path).files


@pytest.mark.parametrize(
    ("mode", "why"), [("loop", "loop back"), ("endless", "runs past 100 pages")]
)
def test_listing_pages_are_followed_but_a_loop_or_no_end_is_refused(
    hub: RunningHub, tmp_path: Path, mode: str, why: str
) -> None:
    hub.state.page_size = 3
    listing = list_repo(REPO, endpoint=hub.endpoint, cache_dir=tmp_path / "paged")
    assert {f.path for f in listing.files} == set(hub.state.repos[REPO].files)  # the control
    hub.state.pages = mode
    outcome = _within(lambda: list_repo(REPO, endpoint=hub.endpoint, cache_dir=tmp_path / mode))
    assert isinstance(outcome, ModelError) and why in str(outcome), outcome


def test_a_listing_that_drips_ends_at_its_deadline(hub: RunningHub, tmp_path: Path) -> None:
    def listing() -> object:
        return list_repo(REPO, endpoint=hub.endpoint, cache_dir=tmp_path, timeout=5, seconds=3)

    assert not isinstance(_within(listing), Exception)  # the control: a sound Hub lists
    (tmp_path / "hub-listings").rename(tmp_path / "kept")  # no saved copy to fall back on
    hub.state.drip = "api"  # a space every 0.05 s: each read is quick, the reply has no end
    outcome = _within(listing)
    assert isinstance(outcome, ModelError), outcome
    assert "did not finish answering within 3 s" in str(outcome)


def test_the_download_deadline_covers_headers_that_drip(hub: RunningHub, tmp_path: Path) -> None:
    data = hub.state.repos[REPO].files["README.md"]
    url = resolve_url(hub.endpoint, REPO, COMMIT, "README.md")
    expected = Expected(size=len(data), git_blob_sha1=git_blob_sha1(data))
    limits = DownloadLimits(deadline=3.0, min_rate=0, timeout=5.0)
    done = download(url, tmp_path / "sound" / "README.md", expected, limits=limits)
    assert done.read_bytes() == data  # the control: the same limits let a sound download finish
    hub.state.drip = "headers"  # a header byte every 0.05 s, never the end of the headers
    outcome = _within(
        lambda: download(url, tmp_path / "dripped" / "README.md", expected, limits=limits)
    )
    assert isinstance(outcome, DownloadStalled), outcome
    assert "3 s download deadline" in str(outcome)


def test_an_edited_saved_listing_cannot_send_the_token_to_another_host(
    hub: RunningHub, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HF_TOKEN", "hf_SECRET")
    code, _, err = _run(capsys, "models", "--endpoint", hub.endpoint, "list", REPO)
    assert code == 0, err
    (saved,) = (AppPaths.default().cache_dir / "hub-listings").rglob("*.json")
    hub.stop()  # from here on the Hub cannot be reached
    code, out, err = _run(capsys, "models", "--endpoint", hub.endpoint, "list", REPO)
    assert code == 0 and "saved listing from" in err  # the control: the saved copy stands in
    with serve_hub(HubState(repos=dict(hub.state.repos))) as other:
        saved.write_text(json.dumps({**json.loads(saved.read_text()), "endpoint": other.endpoint}))
        code, out, err = _run(capsys, "models", "--endpoint", hub.endpoint, "pull", f"{REPO}:Q4_0")
        assert other.state.requests == []  # nothing, let alone the token, went to the other host
    assert code == 2 and out == ""
    assert err.count("no saved listing") == 1 and len(err.strip().splitlines()) == 1
