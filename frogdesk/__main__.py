"""Run FrogDesk with `python -m frogdesk`."""

from frogdesk.cli import main

raise SystemExit(main())
