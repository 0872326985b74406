"""Benchmark: listing a repo with the Hub unreachable, FrogDesk (the `models list` listing and
the quant switch's) against huggingface_hub's own listing (ratio)."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

REPO = "bartowski/FrogNano-4B-2609-GGUF"


@contextlib.contextmanager
def refused_endpoint() -> Iterator[str]:
    """A port on 127.0.0.1 that refuses connections (bound, never listening)."""
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    try:
        yield f"http://127.0.0.1:{holder.getsockname()[1]}"
    finally:
        holder.close()


class Attempts:
    """Counts TCP connection attempts (the real call still runs) while it is entered."""

    def __init__(self) -> None:
        self.count = 0
        self._real = socket.create_connection

    def __enter__(self) -> Attempts:
        def counting(*args: Any, **kwargs: Any) -> socket.socket:
            self.count += 1
            return self._real(*args, **kwargs)

        socket.create_connection = counting
        return self

    def __exit__(self, *exc: object) -> None:
        socket.create_connection = self._real


def timed(call: Callable[[], object]) -> tuple[float, int]:
    """Seconds the call took to give up and the connection attempts it made."""
    with Attempts() as attempts:
        start = time.perf_counter()
        with contextlib.suppress(Exception):  # both fail: only the time and tries matter
            call()
        return time.perf_counter() - start, attempts.count


def main() -> int:
    """Time one listing each way against an unresolvable host and a refused port; print JSON."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--skip-reference", action="store_true", help="time FrogDesk alone")
    args = parser.parse_args()
    root = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(root))
    os.environ.pop("HF_HUB_OFFLINE", None)

    import logging

    import huggingface_hub.utils.logging  # noqa: F401  (its retry warnings would flood stderr)
    from huggingface_hub import HfApi

    hf_logger = logging.getLogger("huggingface_hub")
    hf_logger.handlers[:] = [logging.NullHandler()]
    hf_logger.propagate = False

    from frogdesk.config import Settings
    from frogdesk.core.chooser import remote_choices
    from frogdesk.models.hub import list_repo
    from frogdesk.models.retry import RetryPolicy
    from frogdesk.paths import AppPaths

    results: dict[str, object] = {}
    with refused_endpoint() as refused, tempfile.TemporaryDirectory() as tmp:
        os.environ["FROGDESK_HOME"] = tmp  # the switch also lists the disk: an empty one
        for case, endpoint in (
            ("unresolvable", "http://frogdesk-bench.invalid"),
            ("refused", refused),
        ):
            ours, our_tries = timed(
                lambda e=endpoint: list_repo(  # type: ignore[misc]
                    REPO, endpoint=e, cache_dir=Path(tmp), retry=RetryPolicy()
                )
            )
            switch, switch_tries = timed(
                lambda e=endpoint: remote_choices(  # type: ignore[misc]
                    Settings.of(hf_endpoint=e), AppPaths.default(), REPO, retry=RetryPolicy()
                )
            )
            row: dict[str, object] = {
                "frogdesk_seconds": round(ours, 3),
                "frogdesk_connection_attempts": our_tries,
                "frogdesk_switch_seconds": round(switch, 3),
                "frogdesk_switch_connection_attempts": switch_tries,
            }
            if not args.skip_reference:
                theirs, their_tries = timed(
                    lambda e=endpoint: list(  # type: ignore[misc]
                        HfApi(endpoint=e, token=False).list_repo_tree(REPO, recursive=True)
                    )
                )
                row["huggingface_hub_seconds"] = round(theirs, 3)
                row["frogdesk_over_huggingface_hub"] = round(ours / theirs, 4)
                row["frogdesk_switch_over_huggingface_hub"] = round(switch / theirs, 4)
                row["huggingface_hub_connection_attempts"] = their_tries
            results[case] = row
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
