"""The starter suite's shell tasks (checked with `sh`)."""

from __future__ import annotations

from frogdesk.evals.starter.build import sh_task

COUNT = sh_task(
    "sh-count-lines",
    "bugfix",
    "The tests in test_count.sh fail. Fix count.sh so that it counts only the non-empty lines.",
    (
        "count.sh",
        """#!/bin/sh
# Prints how many non-empty lines the file "$1" has.
wc -l < "$1" | tr -d ' '
""",
    ),
    (
        "test_count.sh",
        """#!/bin/sh
set -u
tmp=$(mktemp)
printf 'one\\n\\ntwo\\n\\n\\nthree\\n' > "$tmp"
got=$(sh ./count.sh "$tmp")
rm -f "$tmp"
if [ "$got" != "3" ]; then
  echo "FAIL: expected 3 non-empty lines, got '$got'"
  exit 1
fi
echo "all tests passed"
""",
    ),
    """#!/bin/sh
# Prints how many non-empty lines the file "$1" has.
grep -c . "$1"
""",
)

GREET = sh_task(
    "sh-greet",
    "feature",
    "Write greet.sh: it prints 'Hello, NAME!' for its first argument, and 'Hello, world!' "
    "without one. test_greet.sh has the tests.",
    (
        "greet.sh",
        """#!/bin/sh
# TODO: greet the name given as the first argument (or the world).
exit 1
""",
    ),
    (
        "test_greet.sh",
        """#!/bin/sh
set -u
fail=0
[ "$(sh ./greet.sh Ada)" = "Hello, Ada!" ] || { echo "FAIL: greet.sh Ada"; fail=1; }
[ "$(sh ./greet.sh)" = "Hello, world!" ] || { echo "FAIL: greet.sh without a name"; fail=1; }
[ "$fail" = 0 ] && echo "all tests passed"
exit "$fail"
""",
    ),
    """#!/bin/sh
# Greets the name given as the first argument (or the world).
echo "Hello, ${1:-world}!"
""",
)

SHELL_TASKS = (COUNT, GREET)
