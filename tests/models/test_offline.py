"""An unreachable Hub ends a listing at once with one line; transient failures retry visibly."""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path

import pytest

from frogdesk import cli
from frogdesk.models.errors import HubCancelled, ModelError
from frogdesk.models.hub import list_repo
from frogdesk.models.retry import RetryPolicy
from frogdesk.paths import AppPaths
from tests.support.hub_server import PREFIX, REPO, RunningHub

UNRESOLVABLE = "http://frogdesk-hub.invalid"
RETRY_WORDS = ("Retry", "retry", "Retrying", "thrown while requesting", "Traceback")


@pytest.fixture
def connections(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """Every TCP connection attempt this process makes (the real call still runs)."""
    seen: list[tuple[str, int]] = []
    real = socket.create_connection

    def counting(address: tuple[str, int], *args: object, **kwargs: object) -> socket.socket:
        seen.append(address)
        return real(address, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(socket, "create_connection", counting)
    return seen


@pytest.fixture
def refused_endpoint() -> str:
    """A port on 127.0.0.1 that refuses connections (bound, never listening)."""
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    port = holder.getsockname()[1]
    yield f"http://127.0.0.1:{port}"  # type: ignore[misc]
    holder.close()


def _list(capfd: pytest.CaptureFixture[str], endpoint: str) -> tuple[int, str, str]:
    code = cli.main(["models", "--endpoint", endpoint, "list", REPO])
    out, err = capfd.readouterr()
    return code, out, err


@pytest.mark.parametrize("kind", ["unresolvable", "refused"])
def test_unreachable_hub_one_attempt_one_line_no_retry_text(
    kind: str,
    refused_endpoint: str,
    connections: list[tuple[str, int]],
    capfd: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    endpoint = UNRESOLVABLE if kind == "unresolvable" else refused_endpoint
    code, out, err = _list(capfd, endpoint)
    assert code == 2 and out == ""
    assert len(connections) == 1
    (line,) = err.strip().splitlines()
    reason = "does not resolve" if kind == "unresolvable" else "refused the connection"
    assert reason in line and "no saved listing" in line
    assert not any(word in err for word in RETRY_WORDS)


def test_refused_connection_falls_back_to_the_saved_listing_with_its_age(
    model_quants: dict[str, Path],
    split_q8: list[Path],
    connections: list[tuple[str, int]],
    capfd: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    hub: RunningHub,
) -> None:
    endpoint = hub.endpoint
    code, _, _ = _list(capfd, endpoint)
    assert code == 0
    hub_port = int(endpoint.rsplit(":", 1)[1])
    # the same endpoint with nobody listening any more: stop the server, keep its port bound
    with socket.socket() as holder:
        holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        hub.stop()
        holder.bind(("127.0.0.1", hub_port))
        connections.clear()
        code, out, err = _list(capfd, endpoint)
    assert code == 0 and f"{PREFIX}-Q4_K_M.gguf" in out
    assert len(connections) == 1
    assert "saved listing from 0 s ago" in err or "saved listing from 1 s ago" in err
    assert "refused the connection" in err
    assert not any(word in err for word in RETRY_WORDS)


def test_unresolvable_host_json_and_library_call_fall_back(
    hub: RunningHub, connections: list[tuple[str, int]], tmp_path: Path
) -> None:
    cache = tmp_path / "listings"
    online = list_repo(REPO, endpoint=hub.endpoint, cache_dir=cache)
    saved = next(cache.rglob("main.json"))
    target = cache / "hub-listings" / "frogdesk-hub.invalid" / saved.parent.name / "main.json"
    target.parent.mkdir(parents=True)
    earlier = {**json.loads(saved.read_text()), "endpoint": UNRESOLVABLE}
    target.write_text(json.dumps(earlier))  # as if listed from that host earlier
    connections.clear()
    offline = list_repo(REPO, endpoint=UNRESOLVABLE, cache_dir=cache, retry=RetryPolicy())
    assert len(connections) == 1  # a retry policy does not retry what cannot heal
    assert offline.from_cache and offline.files == online.files
    assert "does not resolve" in offline.offline_reason


def test_transient_failures_retry_with_a_countdown(hub: RunningHub, tmp_path: Path) -> None:
    hub.state.fail_api = [503, 502]
    waits: list[tuple[int, int, str]] = []
    listing = list_repo(
        REPO,
        endpoint=hub.endpoint,
        cache_dir=tmp_path,
        retry=RetryPolicy(waits=(0.05, 0.05, 0.05), on_wait=lambda *a: waits.append(a)),
    )
    assert not listing.from_cache and listing.files
    assert [w[1] for w in waits] == [2, 3] and "HTTP 503" in waits[0][2]


def test_the_countdown_can_be_cancelled(hub: RunningHub, tmp_path: Path) -> None:
    hub.state.fail_api = [503, 503, 503]
    cancel = threading.Event()
    with pytest.raises(HubCancelled, match="cancelled"):
        list_repo(
            REPO,
            endpoint=hub.endpoint,
            cache_dir=tmp_path,
            retry=RetryPolicy(waits=(30.0,), on_wait=lambda *a: cancel.set(), cancel=cancel),
        )


def test_cli_shows_the_countdown_and_then_the_listing(
    hub: RunningHub, capfd: pytest.CaptureFixture[str]
) -> None:
    hub.state.fail_api = [503]
    code, out, err = _list(capfd, hub.endpoint)
    assert code == 0 and f"{PREFIX}-Q4_K_M.gguf" in out
    assert "HTTP 503" in err and "trying again in 2 s (try 2), Ctrl+C cancels" in err


def test_transient_failures_exhausted_fall_back_or_say_so(hub: RunningHub, tmp_path: Path) -> None:
    hub.state.fail_api = [500, 500]
    with pytest.raises(ModelError, match="HTTP 500"):
        list_repo(REPO, endpoint=hub.endpoint, cache_dir=tmp_path, retry=RetryPolicy(waits=(0.01,)))
    list_repo(REPO, endpoint=hub.endpoint, cache_dir=tmp_path)
    hub.state.fail_api = [500, 500]
    listing = list_repo(
        REPO, endpoint=hub.endpoint, cache_dir=tmp_path, retry=RetryPolicy(waits=(0.01,))
    )
    assert listing.from_cache and "HTTP 500" in listing.offline_reason


def test_hf_hub_offline_makes_no_connection(
    hub: RunningHub,
    connections: list[tuple[str, int]],
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    _list(capfd, hub.endpoint)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    connections.clear()
    code = cli.main(["models", "--endpoint", hub.endpoint, "list", REPO, "--json"])
    out, err = capfd.readouterr()
    assert code == 0 and connections == [], err
    assert json.loads(out)["source"].startswith("saved listing from")
    assert AppPaths.default().cache_dir.exists()
