"""A hostile or broken Hub: names that would escape the cache, downloads that trickle, token leaks."""

from __future__ import annotations

import os
import urllib.request
from pathlib import Path

import pytest

from frogdesk import cli
from frogdesk.models.errors import DownloadStalled, UnsafeName
from frogdesk.models.hub import list_repo
from frogdesk.models.hub_http import SameOriginAuth
from frogdesk.models.listing import HubFile, RepoListing
from frogdesk.models.names import name_problem
from frogdesk.models.pull import pull
from frogdesk.models.spec import parse_spec
from tests.support.hub_server import COMMIT, PREFIX, REPO, RunningHub


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    ("name", "rule"),
    [
        ("../../x-Q4_0.gguf", "'..'"),
        ("a/../../x-Q4_0.gguf", "'..'"),
        ("/abs/x-Q4_0.gguf", "absolute"),
        ("C:/x-Q4_0.gguf", "absolute"),
        ("dir\\..\\x-Q4_0.gguf", "backslash"),
        ("x\0-Q4_0.gguf", "NUL"),
        ("x\x1b]0;pwn\x07-Q4_0.gguf", "control"),
        ("a//x-Q4_0.gguf", "empty"),
    ],
)
def test_unsafe_names_are_named_by_their_rule(name: str, rule: str) -> None:
    problem = name_problem(name)
    assert problem is not None and rule in problem


def test_safe_nested_names_pass() -> None:
    assert name_problem(f"{PREFIX}-Q8_0/{PREFIX}-Q8_0-00001-of-00002.gguf") is None


def test_pull_refuses_traversal_names_and_writes_nothing_outside(
    hub: RunningHub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = hub.state.repos[REPO].files
    payload = files[f"{PREFIX}-Q4_0.gguf"]
    escape = tmp_path / "escaped"
    depth = "../" * 12
    hostile = {
        f"{depth}{str(escape).lstrip('/')}/ESCAPED-IQ4_XS.gguf": payload,
        f"{escape}/ABSOLUTE-IQ4_XS.gguf": payload,
        "dir\\..\\BACKSLASH-IQ4_XS.gguf": payload,
        "CTRL\x1b[2J-IQ4_XS.gguf": payload,
    }
    files.update(hostile)
    code, out, err = _run(capsys, "models", "--endpoint", hub.endpoint, "list", REPO)
    assert code == 0
    refusals = [line for line in err.splitlines() if line.startswith("refused the name")]
    assert len(refusals) == 4 and "\x1b" not in err
    assert "IQ4_XS" not in out
    code, out, err = _run(capsys, "models", "pull", f"{REPO}:IQ4_XS", "--endpoint", hub.endpoint)
    assert code == 2 and "no IQ4_XS model file" in err
    assert not escape.exists()
    assert not any(p.name.endswith("IQ4_XS.gguf") for p in tmp_path.rglob("*"))
    # positive control: the same bytes under a plain nested name are pulled
    files[f"sub/SAFE-{PREFIX}-IQ4_XS.gguf"] = payload
    code, out, err = _run(capsys, "models", "pull", f"{REPO}:IQ4_XS", "--endpoint", hub.endpoint)
    assert code == 0, err
    assert Path(out.strip()).read_bytes() == payload


def test_a_tampered_saved_listing_cannot_lead_pull_outside(hub: RunningHub, tmp_path: Path) -> None:
    listing = list_repo(REPO, endpoint=hub.endpoint, cache_dir=tmp_path / "listings")
    good = listing.file(f"{PREFIX}-Q4_0.gguf")
    evil = HubFile("../../../ESCAPED-IQ4_XS.gguf", good.size, good.sha256, good.blob_id)
    tampered = RepoListing(REPO, "main", hub.endpoint, (evil,), 0.0, commit=COMMIT)
    with pytest.raises(UnsafeName, match=r"contains '\.\.'"):
        pull(parse_spec(f"{REPO}:IQ4_XS"), tampered, tmp_path / "cache")
    bad_sha = HubFile(f"{PREFIX}-IQ4_XS.gguf", good.size, "../../x", good.blob_id)
    with pytest.raises(UnsafeName, match="object id"):
        pull(
            parse_spec(f"{REPO}:IQ4_XS"),
            RepoListing(REPO, "main", hub.endpoint, (bad_sha,), 0.0, commit=COMMIT),
            tmp_path / "cache",
        )
    assert not list(tmp_path.rglob("*IQ4_XS*"))


def test_a_trickling_download_stalls_with_a_clear_message_and_resumes(
    hub: RunningHub,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    name = f"{PREFIX}-f16.gguf"
    size = len(hub.state.repos[REPO].files[name])
    hub.state.step = 2048
    hub.state.bytes_per_second = 8192  # a quarter of a second per 2 kB
    monkeypatch.setenv("FROGDESK_DOWNLOAD_MIN_RATE", "1000000")
    monkeypatch.setenv("FROGDESK_DOWNLOAD_STALL_SECONDS", "0.5")
    code, out, err = _run(capsys, "models", "pull", f"{REPO}:F16", "--endpoint", hub.endpoint)
    assert code == 2 and out == ""
    assert "stalled at" in err and "below the minimum" in err and "run again to resume" in err
    blobs = Path(os.environ["HF_HUB_CACHE"]) / f"models--{REPO.replace('/', '--')}" / "blobs"
    (partial,) = blobs.glob("*.incomplete")
    kept = partial.stat().st_size
    assert 0 < kept < size
    hub.state.bytes_per_second = 0
    code, out, err = _run(capsys, "models", "pull", f"{REPO}:F16", "--endpoint", hub.endpoint)
    assert code == 0, err
    assert Path(out.strip()).read_bytes() == hub.state.repos[REPO].files[name]
    assert hub.state.requests[-1][2] == f"bytes={kept}-"


def test_a_download_that_never_sends_a_byte_ends(hub: RunningHub, tmp_path: Path) -> None:
    from frogdesk.models.download import DownloadLimits

    hub.state.step = 1
    hub.state.bytes_per_second = 0.5  # one byte, then two seconds of silence
    listing = list_repo(REPO, endpoint=hub.endpoint, cache_dir=tmp_path / "l")
    with pytest.raises(DownloadStalled, match=r"nothing received for 0\.3 s"):
        pull(
            parse_spec(f"{REPO}:Q4_0"),
            listing,
            tmp_path / "cache",
            limits=DownloadLimits(min_rate=0, window=0.3, timeout=0.3),
        )
    with pytest.raises(DownloadStalled, match="deadline"):
        hub.state.bytes_per_second = 20_000
        hub.state.step = 1000
        pull(
            parse_spec(f"{REPO}:Q4_0"),
            listing,
            tmp_path / "cache",
            limits=DownloadLimits(deadline=0.2, min_rate=0),
        )
    (partial,) = (tmp_path / "cache").rglob("*.incomplete")  # kept for the next run
    assert partial.stat().st_size > 0


@pytest.mark.parametrize(
    ("old", "new", "kept"),
    [
        ("https://hub.example/a", "https://hub.example/b", True),  # positive control
        ("https://hub.example/a", "http://hub.example/b", False),  # scheme downgrade
        ("https://hub.example/a", "https://cdn.example/b", False),  # another host
        ("https://hub.example/a", "https://hub.example:8443/b", False),  # another port
    ],
)
def test_the_token_follows_only_same_origin_redirects(old: str, new: str, kept: bool) -> None:
    request = urllib.request.Request(old, headers={"Authorization": "Bearer tok"})
    follow = SameOriginAuth().redirect_request(request, None, 302, "Found", {}, new)  # type: ignore[arg-type]
    assert follow is not None and follow.has_header("Authorization") is kept
