"""Older kernels: the landlock level is refused where Landlock lacks what it relies on.

Emulated here by making landlockpy report a lower ABI in a Python process of the test's
own (FrogDesk's CLI through a sitecustomize, or a stand-in for the supervisor's child):
the kernel itself stays at its real ABI, so a ruleset built for the lower ABI is exactly
what best effort would have enforced there.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from frogdesk.sandbox.confine import LANDLOCK_REQUIRED_ABI, landlock_abi
from tests.attacks.harness import bash, frogdesk, run_attack
from tests.attacks.payloads import PY
from tests.support.e2e import changed_paths, make_user_repo, reply, repo_state
from tests.support.scripted import write_script

pytestmark = pytest.mark.skipif(
    landlock_abi() < LANDLOCK_REQUIRED_ABI,
    reason=f"emulating needs a kernel with Landlock ABI {LANDLOCK_REQUIRED_ABI} or later",
)

EMULATE = """
try:
    import landlockpy._syscall

    landlockpy._syscall.abi_version = lambda: {abi}
    import frogdesk.sandbox.levels

    frogdesk.sandbox.levels.find_bwrap = lambda: None  # as where user namespaces are blocked
except ImportError:  # a Python without FrogDesk (the sandbox's own) is left alone
    pass
"""
"""A sitecustomize that makes this Python see Landlock ABI {abi} and no bubblewrap."""

STAND_IN = """
import os, sys
from pathlib import Path
import frogdesk.sandbox.confine as confine
import frogdesk.sandbox.levels as levels
abi, check, folder, private, attack = int(sys.argv[1]), sys.argv[2], *sys.argv[3:]
shell = levels.confined_shell("landlock", Path(folder), private_dir=Path(private)).shell
if abi:  # from here on, as on a kernel with that ABI
    import landlockpy._syscall
    landlockpy._syscall.abi_version = lambda: abi
if check == "off":  # what FrogDesk did before: whatever the kernel offers, silently
    confine.landlock_missing = lambda abi: []
try:
    confine.apply(shell.confinement)
except Exception as exc:
    print(f"frogdesk sandbox: cannot confine the command: {exc}", file=sys.stderr)
    sys.exit(125)
os.execv("/bin/bash", ["/bin/bash", "-c", attack])
"""
"""What the supervisor's child does (confine with the landlock level's own confinement, then
exec the command), at an emulated ABI, with the feature check on or off. The level is
chosen at the real ABI, as for a session made on another kernel."""

TRUNCATE = """
import os, sys
try:
    open(sys.argv[1], "a").write("appended")
    print("WRITE-OK")
except OSError as exc:
    print("WRITE-REFUSED", exc.errno)
try:
    os.truncate(sys.argv[1], 0)
    print("TRUNCATE-OK")
except OSError as exc:
    print("TRUNCATE-REFUSED", exc.errno)
"""
PRECIOUS = b"the user's work, not the sandbox's\n"


def _kill_attack(pid: int) -> str:
    return f"kill -STOP {pid}; echo KILL-RC=$?"


def _truncate_attack(path: Path) -> str:
    return f"{PY} - '{path}' <<'PYEOF'\n{TRUNCATE}\nPYEOF"


def _state(pid: int) -> str:
    """The process's state letter in /proc (S sleeping, T stopped)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat.rsplit(")", 1)[1].split()[0]


@pytest.fixture
def victim() -> Iterator[int]:
    """A process of the user's outside any sandbox."""
    proc = subprocess.Popen(["sleep", "600"])
    yield proc.pid
    proc.send_signal(signal.SIGCONT)
    proc.kill()
    proc.wait()


@pytest.fixture
def precious(outside: Path) -> Path:
    """A file of the user's outside the sandbox."""
    path = outside / "precious.txt"
    path.write_bytes(PRECIOUS)
    return path


def _emulating(tmp: Path, abi: int) -> dict[str, str]:
    """The environment that makes FrogDesk's CLI (not the supervisor) see Landlock ABI abi."""
    site = tmp / f"site-abi{abi}"
    site.mkdir()
    (site / "sitecustomize.py").write_text(textwrap.dedent(EMULATE.format(abi=abi)))
    return {
        "PYTHONPATH": os.pathsep.join(p for p in [str(site), os.environ.get("PYTHONPATH")] if p)
    }


def _stand_in(
    tmp: Path, attack: str, *, abi: int = 0, check: str = "on"
) -> subprocess.CompletedProcess[str]:
    folder, private = tmp / "stand-in", tmp / "stand-in-private"
    folder.mkdir(exist_ok=True)
    return subprocess.run(
        [sys.executable, "-c", STAND_IN, str(abi), check, str(folder), str(private), attack],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


CASES = [
    pytest.param(4, "signal scoping", id="abi4-kill"),
    pytest.param(2, "truncate", id="abi2-truncate"),
]


def _attack_for(abi: int, victim: int, precious: Path) -> str:
    return _kill_attack(victim) if abi == 4 else _truncate_attack(precious)


def _attack_happened(abi: int, victim: int, precious: Path) -> bool:
    if abi == 4:
        return _state(victim) == "T"
    return precious.read_bytes() != PRECIOUS


@pytest.mark.parametrize(("abi", "lacking"), CASES)
def test_explicit_landlock_is_refused_with_one_line(
    abi: int, lacking: str, tmp_path: Path, victim: int, precious: Path
) -> None:
    repo = make_user_repo(tmp_path)
    before = repo_state(repo)
    attack = _attack_for(abi, victim, precious)
    script = write_script(tmp_path / "script.jsonl", [bash(attack), reply("Done.", answer="Done.")])
    done = frogdesk(
        "run", "Do the task.", "--repo", str(repo), "--backend", "script", "--script",
        str(script), "--sandbox", "landlock", "--output", str(tmp_path / "out"), "--json",
        "--quiet", env=_emulating(tmp_path, abi),
    )  # fmt: skip
    assert done.returncode != 0, done
    assert "Traceback" not in done.stderr, done.stderr
    refusal = [line for line in done.stderr.splitlines() if "sandbox = landlock, but" in line]
    assert len(refusal) == 1, done.stderr
    assert f"Landlock ABI {abi} lacks what the landlock level relies on" in refusal[0]
    assert lacking in refusal[0]
    assert not _attack_happened(abi, victim, precious)
    assert changed_paths(before, repo_state(repo)) == set()


@pytest.mark.parametrize(("abi", "lacking"), CASES)
def test_auto_goes_on_to_the_next_level_and_says_why(
    abi: int, lacking: str, tmp_path: Path, victim: int, precious: Path
) -> None:
    repo = make_user_repo(tmp_path)
    before = repo_state(repo)
    attack = _attack_for(abi, victim, precious)
    run = run_attack(repo, [bash(attack)], tmp_path, "auto", env=_emulating(tmp_path, abi))
    notice = [line for line in run.done.stderr.splitlines() if line.startswith("sandbox: none")]
    assert len(notice) == 1, run.done.stderr
    assert f"Landlock ABI {abi} lacks what the landlock level relies on" in notice[0]
    assert lacking in notice[0]
    # At none nothing runs unapproved, and nobody approved it.
    assert "KILL-RC" not in run.observations[0] and "TRUNCATE" not in run.observations[0]
    assert not _attack_happened(abi, victim, precious)
    assert changed_paths(before, repo_state(repo)) == set()


@pytest.mark.parametrize(("abi", "lacking"), CASES)
def test_the_confinement_itself_refuses_an_old_abi(
    abi: int, lacking: str, tmp_path: Path, victim: int, precious: Path
) -> None:
    """Also where the level was chosen elsewhere (a resumed session on another kernel)."""
    done = _stand_in(tmp_path, _attack_for(abi, victim, precious), abi=abi)
    assert done.returncode == 125, done
    assert f"Landlock ABI {abi} lacks what the landlock level relies on" in done.stderr
    assert lacking in done.stderr
    assert not _attack_happened(abi, victim, precious)


@pytest.mark.parametrize(("abi", "lacking"), CASES)
def test_positive_control_without_the_check_the_attack_works(
    abi: int, lacking: str, tmp_path: Path, victim: int, precious: Path
) -> None:
    """Why the check exists: best effort at that ABI lets the attack through."""
    done = _stand_in(tmp_path, _attack_for(abi, victim, precious), abi=abi, check="off")
    assert done.returncode == 0, done
    assert _attack_happened(abi, victim, precious)
    if abi == 2:
        assert "WRITE-REFUSED 13" in done.stdout, done  # writing was refused all along
        assert "TRUNCATE-OK" in done.stdout, done


@pytest.mark.parametrize(("abi", "lacking"), CASES)
def test_at_the_real_abi_the_kernel_refuses_the_attack(
    abi: int, lacking: str, tmp_path: Path, victim: int, precious: Path
) -> None:
    done = _stand_in(tmp_path, _attack_for(abi, victim, precious))
    assert done.returncode == 0, done
    assert not _attack_happened(abi, victim, precious)

    repo = make_user_repo(tmp_path)
    before = repo_state(repo)
    run = run_attack(repo, [bash(_attack_for(abi, victim, precious))], tmp_path, "landlock")
    seen = run.observations[0]
    assert any(line.startswith("sandbox: landlock") for line in run.done.stderr.splitlines())
    if abi == 4:
        assert "KILL-RC=1" in seen, seen
    else:
        assert "WRITE-REFUSED 13" in seen and "TRUNCATE-REFUSED 13" in seen, seen
    assert not _attack_happened(abi, victim, precious)
    assert changed_paths(before, repo_state(repo)) == set()


def test_doctor_shows_the_abi_and_what_it_gives(tmp_path: Path) -> None:
    offline = {"HF_HUB_OFFLINE": "1"}
    real = frogdesk("doctor", "--hub-timeout", "1", env=offline)
    line = next(x for x in real.stdout.splitlines() if x.startswith("landlock "))
    assert f"ABI {landlock_abi()}:" in line and "signal scoping (ABI 6)" in line, line
    assert "missing" not in line

    old = frogdesk("doctor", "--hub-timeout", "1", env={**offline, **_emulating(tmp_path, 4)})
    assert old.returncode == 0, old.stderr
    line = next(x for x in old.stdout.splitlines() if x.startswith("landlock "))
    assert "ABI 4: file rules (ABI 1), refer (ABI 2), truncate (ABI 3), TCP rules (ABI 4)" in line
    assert "missing device ioctl (ABI 5), signal scoping (ABI 6)" in line, line
    assert "the landlock level is refused" in line, line
    report = json.loads(
        frogdesk(
            "doctor", "--json", "--hub-timeout", "1", env={**offline, **_emulating(tmp_path, 2)}
        ).stdout
    )
    assert report["sandbox"]["landlock"]["abi"] == 2
    assert "truncate (ABI 3)" in report["sandbox"]["landlock"]["missing"]
