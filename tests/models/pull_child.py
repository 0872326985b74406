"""Run one pull in a child process (killed or resource-limited by the tests); prints progress lines."""

from __future__ import annotations

import resource
import signal
import sys
from pathlib import Path

from frogdesk.models.errors import ModelError
from frogdesk.models.hub import list_repo
from frogdesk.models.progress import Progress
from frogdesk.models.pull import pull
from frogdesk.models.spec import parse_spec


def main(argv: list[str]) -> int:
    """argv: endpoint, spec, models_dir, cache_dir, [file size limit in bytes]."""
    endpoint, spec, models_dir, cache_dir = argv[:4]
    if len(argv) > 4:
        limit = int(argv[4])
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes past the limit fail with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    def show(p: Progress) -> None:
        print(f"progress {p.done} {p.total}", flush=True)

    parsed = parse_spec(spec)
    listing = list_repo(parsed.repo, endpoint=endpoint, cache_dir=Path(cache_dir), offline=False)
    try:
        paths = pull(parsed, listing, Path(models_dir), progress=show)
    except ModelError as exc:
        print(f"error {type(exc).__name__}: {exc}", flush=True)
        return 1
    print("done " + " ".join(str(p) for p in paths), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
