"""Listing a repo from a real HTTP stand-in of the Hub, and from the saved listing when offline."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from frogdesk.models.errors import ModelError
from frogdesk.models.hub import list_repo, resolve_endpoint
from frogdesk.models.listing import age_text
from frogdesk.models.spec import group_files
from frogdesk.paths import AppPaths
from tests.support.hub_server import PREFIX, REPO, RunningHub


def test_listing_has_sizes_and_lfs_sha256(hub: RunningHub) -> None:
    cache = AppPaths.default().cache_dir
    listing = list_repo(REPO, endpoint=hub.endpoint, cache_dir=cache)
    served = hub.state.repos[REPO].files
    assert not listing.from_cache
    assert {f.path for f in listing.files} == set(served)
    for item in listing.files:
        assert item.size == len(served[item.path])
        if item.path.endswith(".gguf"):
            assert item.sha256 == hashlib.sha256(served[item.path]).hexdigest()
        else:
            assert item.sha256 is None  # small files live in git, not LFS
    groups = {g.label: g for g in group_files(f.path for f in listing.files)}
    split = groups[f"{PREFIX}-Q8_0/{PREFIX}-Q8_0.gguf"]
    assert split.name.split_count == 2 and split.complete and len(split.parts) == 2
    assert groups[f"mmproj-{PREFIX}-f16.gguf"].name.mmproj
    assert any(path.startswith("/api/models/") for _, path, _ in hub.state.requests)


def test_offline_listing_comes_from_the_saved_copy(
    hub: RunningHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = AppPaths.default().cache_dir
    online = list_repo(REPO, endpoint=hub.endpoint, cache_dir=cache)
    before = len(hub.state.requests)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    offline = list_repo(REPO, endpoint=hub.endpoint, cache_dir=cache)
    assert offline.from_cache
    assert offline.files == online.files
    assert len(hub.state.requests) == before  # no request reached the server


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("path", "../../outside.gguf"),  # downloads name their files after listed paths
        ("path", 5),
        ("blob_id", "../x"),
        ("sha256", "not-a-digest"),
        ("size", "big"),
        ("size", 10**400),  # a float overflow wherever sizes are added up or compared
        ("size", -1),
    ],
)
def test_a_damaged_saved_listing_counts_as_none(hub: RunningHub, field: str, value: object) -> None:
    cache = AppPaths.default().cache_dir
    list_repo(REPO, endpoint=hub.endpoint, cache_dir=cache)
    (saved,) = (cache / "hub-listings").rglob("*.json")
    intact = saved.read_text()
    # control: the intact copy is what an offline listing reads
    assert list_repo(REPO, endpoint=hub.endpoint, cache_dir=cache, offline=True).from_cache
    data = json.loads(intact)
    gguf = next(f for f in data["files"] if f["path"].endswith(".gguf"))
    gguf[field] = value
    saved.write_text(json.dumps(data))
    with pytest.raises(ModelError, match="offline and no saved listing"):
        list_repo(REPO, endpoint=hub.endpoint, cache_dir=cache, offline=True)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("endpoint", "http://127.0.0.1:9"),  # pull would send the token there
        ("endpoint", "https://other.example"),
        ("repo", "someone/Other-GGUF"),
        ("revision", "dev"),
        ("commit", "../../x"),
        ("fetched_at", float("nan")),
        ("fetched_at", float("-inf")),
    ],
)
def test_a_saved_listing_serves_only_the_endpoint_repo_and_revision_it_was_saved_for(
    hub: RunningHub, field: str, value: object
) -> None:
    cache = AppPaths.default().cache_dir
    list_repo(REPO, endpoint=hub.endpoint, cache_dir=cache)
    (saved,) = (cache / "hub-listings").rglob("*.json")
    listing = list_repo(REPO, endpoint=hub.endpoint, cache_dir=cache, offline=True)
    assert listing.from_cache and listing.endpoint == hub.endpoint  # the control
    saved.write_text(json.dumps({**json.loads(saved.read_text()), field: value}))
    with pytest.raises(ModelError, match="offline and no saved listing"):
        list_repo(REPO, endpoint=hub.endpoint, cache_dir=cache, offline=True)


def test_a_saved_listing_nested_too_deeply_counts_as_none(hub: RunningHub) -> None:
    cache = AppPaths.default().cache_dir
    list_repo(REPO, endpoint=hub.endpoint, cache_dir=cache)
    (saved,) = (cache / "hub-listings").rglob("*.json")
    assert list_repo(REPO, endpoint=hub.endpoint, cache_dir=cache, offline=True).from_cache
    saved.write_text("[" * 100_000)
    with pytest.raises(ModelError, match="offline and no saved listing"):
        list_repo(REPO, endpoint=hub.endpoint, cache_dir=cache, offline=True)


def test_an_age_that_is_not_a_number_reads_as_unknown() -> None:
    assert age_text(float("nan")) == age_text(float("inf")) == "an unknown time"
    assert age_text(30) == "30 s"  # the control


def test_offline_without_saved_listing_says_how_to_fix(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="offline and no saved listing"):
        list_repo(REPO, endpoint="http://127.0.0.1:9", cache_dir=tmp_path, offline=True)


def test_unknown_repo_is_a_clear_error(hub: RunningHub, tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="no such repo"):
        list_repo("nobody/nothing-GGUF", endpoint=hub.endpoint, cache_dir=tmp_path)


def test_private_repo_needs_a_token(hub: RunningHub, tmp_path: Path) -> None:
    hub.state.token = "secret-token"
    with pytest.raises(ModelError, match="HF_TOKEN"):
        list_repo(REPO, endpoint=hub.endpoint, cache_dir=tmp_path)
    listing = list_repo(REPO, endpoint=hub.endpoint, cache_dir=tmp_path, token="secret-token")
    assert listing.files


def test_endpoint_precedence(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_ENDPOINT", "http://env.example/")
    assert resolve_endpoint(None, "") == "http://env.example"
    assert resolve_endpoint(None, "http://config.example") == "http://config.example"
    assert (
        resolve_endpoint("http://flag.example/", "http://config.example") == "http://flag.example"
    )
    monkeypatch.delenv("HF_ENDPOINT")
    assert resolve_endpoint(None, "") == "https://huggingface.co"
