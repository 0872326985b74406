"""Entry point of the standalone build."""

from frogdesk.cli import main

raise SystemExit(main())
