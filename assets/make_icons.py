"""Render assets/logo.svg to PNG icons at the usual sizes (needs cairosvg)."""

from __future__ import annotations

import sys
from pathlib import Path

SIZES = (16, 24, 32, 48, 64, 128, 256, 512)


def main() -> int:
    """Write assets/icons/frogdesk-SIZE.png for each size."""
    try:
        import cairosvg
    except ImportError:
        print("make_icons: pip install cairosvg (it needs the cairo library)", file=sys.stderr)
        return 2
    here = Path(__file__).resolve().parent
    source = (here / "logo.svg").read_bytes()
    out_dir = here / "icons"
    out_dir.mkdir(exist_ok=True)
    for size in SIZES:
        target = out_dir / f"frogdesk-{size}.png"
        cairosvg.svg2png(
            bytestring=source, write_to=str(target), output_width=size, output_height=size
        )
        print(target.relative_to(here.parent))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
