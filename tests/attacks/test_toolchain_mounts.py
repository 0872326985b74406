"""Attacks on the developer's toolchain shown to the sandbox: writing through it, replacing it
with links, planting files in it, and PATH entries that would show too much.

Every run goes through `frogdesk run --backend script` at each confining level, against a
real repository whose `.venv` has pytest and the package installed editable. Each attack
has its positive control: the same write succeeding on the session's own files, the link
the attack made leading to the secret for a reader that follows it, the old mount by name
exposing it, the refused PATH entries finding their tool on the host.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from frogdesk.paths import AppPaths
from frogdesk.sandbox.shells.bwrap import find_bwrap
from frogdesk.sessions.store import SessionStore
from tests.attacks.harness import Outcome, bash, resume, run_attack
from tests.support.scripted import make_repo
from tests.support.toolchain_repo import PACKAGE_FILE, SECRET, tree_hashes, venv_repo


@pytest.fixture(scope="module")
def repo() -> Path:
    """The developer's repository with its `.venv` (built once per test run)."""
    return venv_repo()


def _site(repo: Path) -> Path:
    return next((repo / ".venv" / "lib").glob("python*/site-packages"))


def _worktree(outcome: Outcome) -> Path:
    store = SessionStore(AppPaths.default().sessions_dir)
    return Path(store.get(outcome.session_id).worktree)


def test_writes_through_the_toolchain_mounts_fail(level: str, repo: Path, tmp_path: Path) -> None:
    site = _site(repo)
    rel_site = site.relative_to(repo)
    targets = [
        repo / ".venv" / "bin" / "pytest",  # a console script, by the path its shebang names
        Path(".venv/bin/pytest"),  # the same through the worktree's view
        site / "zz_planted.pth",  # a .pth runs at every interpreter start, the user's too
        rel_site / "zz_planted_view.pth",
        repo / PACKAGE_FILE,  # the editable install's path in the user's repository
        repo / "src" / "planted.py",
        repo / ".venv" / "pyvenv.cfg",
    ]
    writes = "; ".join(
        f"(echo 'import os' > {target}) 2>/dev/null && echo WROTE:{target}" for target in targets
    )
    more = (
        f"mkdir {repo}/.venv/newdir 2>/dev/null && echo WROTE:mkdir; "
        f"rm -f {repo}/.venv/bin/python 2>/dev/null; "
        f"mv .venv/pyvenv.cfg .venv/moved 2>/dev/null && echo WROTE:mv; "
        f"ln -s /etc {site}/planted-link 2>/dev/null && echo WROTE:ln"
    )
    # Positive controls: the paths are there and readable, and the session's own files take
    # the same write.
    controls = (
        f"head -1 {repo}/.venv/pyvenv.cfg; head -1 .venv/pyvenv.cfg; "
        "(echo 'import os' > zz_planted.pth) && echo CONTROL-WROTE"
    )
    before = tree_hashes(repo)
    outcome = run_attack(repo, [bash(f"{controls}; {writes}; {more}")], tmp_path, level)
    seen = outcome.observations[0]
    assert "CONTROL-WROTE" in seen, seen
    assert seen.count("home = ") == 2, seen
    assert "WROTE:" not in seen, seen
    assert tree_hashes(repo) == before
    assert not (site / "zz_planted.pth").exists()
    assert "zz_planted.pth" in outcome.summary["files_changed"]  # type: ignore[operator]


def test_the_views_cannot_be_swapped_for_links_to_secrets(
    level: str, repo: Path, tmp_path: Path
) -> None:
    """Replace `.venv` with a link to the user's repository (its untracked `.env`), then read
    through it, in that command, in the next one, and after the session is resumed (the
    landlock level lays its links again then: it must not follow the sandbox's)."""
    swap = (
        f"rm -rf .venv 2>/dev/null; ln -sfn {repo} .venv 2>&1 && echo LINKED; "
        f"ln -s {repo} planted-link && echo CONTROL-LINKED; cat .venv/.env 2>&1"
    )
    read = f"cat .venv/.env {repo}/.env planted-link/.env 2>&1; ls -a .venv/ 2>&1"
    before = tree_hashes(repo)
    first = run_attack(repo, [bash(swap), bash(read), bash(read)], tmp_path, level, max_steps=2)
    worktree = _worktree(first)
    later = resume(first.session_id, tmp_path)
    seen = "\n".join(later.observations)
    assert "CONTROL-LINKED" in seen, seen
    # Positive control: the planted link leads to the secret for a reader that follows it.
    assert SECRET in (worktree / "planted-link" / ".env").read_text(encoding="utf-8")
    if level == "landlock":  # the view is a link of the worktree: the sandbox can replace it
        assert "LINKED" in seen.replace("CONTROL-LINKED", ""), seen
        assert os.readlink(worktree / ".venv") == str(repo)
    else:  # a mount point: it cannot
        assert "LINKED" not in seen.replace("CONTROL-LINKED", ""), seen
    assert SECRET not in seen, seen
    assert len(later.observations) == 3, later.observations
    assert tree_hashes(repo) == before


def _old_bind_by_name(worktree: Path, repo: Path) -> str:
    """The mount the bwrap level would make by name: what `cat <repo>/src/.env` shows then."""
    bwrap = find_bwrap()
    assert bwrap is not None
    argv = [str(bwrap), "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/"]
    argv += ["--dev", "/dev", "--tmpfs", str(repo)]
    argv += ["--ro-bind", str(worktree / "src"), str(repo / "src"), "--"]
    argv += ["cat", str(repo / "src" / ".env")]
    return subprocess.run(argv, capture_output=True, text=True, check=False).stdout


def test_an_editable_path_swapped_for_a_link_is_not_shown(
    level: str, repo: Path, tmp_path: Path
) -> None:
    """`src/` (where the editable install imports from) replaced by a link to the user's
    repository: the next command's mount must not follow it to the `.env`."""
    show = "python -c 'import calcpkg; print(calcpkg.__file__, calcpkg.add(2, 3))'"
    swap = f"mv src src.real && ln -s {repo} src && echo SWAPPED"
    read = (
        f"cat {repo}/src/.env src/.env 2>&1; ls -a {repo}/src 2>&1; "
        "python -c 'import calcpkg' 2>&1 | tail -1"
    )
    before = tree_hashes(repo)
    outcome = run_attack(repo, [bash(show), bash(swap), bash(read)], tmp_path, level)
    shown, swapped, after = outcome.observations[:3]
    # Positive controls: the package is imported from the worktree before the swap, the
    # swap happened, and the link leads to the secret for a reader that follows it.
    assert "calcpkg/__init__.py -1" in shown, shown
    assert "SWAPPED" in swapped, swapped
    worktree = _worktree(outcome)
    assert SECRET in (worktree / "src" / ".env").read_text(encoding="utf-8")
    if level == "bwrap":
        assert SECRET in _old_bind_by_name(worktree, repo)  # the old way would show it
    assert SECRET not in after, after
    assert "ModuleNotFoundError" in after, after
    assert tree_hashes(repo) == before


def _tool(folder: Path, name: str, says: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(f"#!/bin/sh\necho {says}\n", encoding="utf-8")
    (folder / name).chmod(0o755)


def test_path_entries_that_would_show_too_much_are_refused(
    level: str, tmp_path: Path, outside: Path
) -> None:
    home = outside / "home"
    _tool(home / "tools" / "bin", "mytool", "TOOL-RAN")
    _tool(home / "bin", "homebin", "HOMEBIN-RAN")
    (home / "tools" / ".netrc").write_text("password SECRET-IN-TOOLCHAIN\n", encoding="utf-8")
    (home / "notes.txt").write_text("SECRET-HOME-NOTES\n", encoding="utf-8")
    (home / "code").mkdir()
    repo = make_repo(home / "code")
    _tool(repo / "scripts", "evil", "EVIL-RAN")  # untracked: copied into the worktree too
    data_bin = AppPaths.default().data_dir / "bin"
    _tool(data_bin, "evil", "EVIL-RAN")
    refused = [str(repo / "scripts"), ".", str(data_bin), str(home), str(home / "code")]
    path = os.pathsep.join(
        [str(home / "tools" / "bin"), *refused, str(home / "bin"), os.environ["PATH"]]
    )
    # Positive control: on the host these entries are real and find their tools.
    assert shutil.which("evil", path=os.pathsep.join(refused)) is not None
    command = (
        "echo PATH=$PATH; mytool; homebin; command -v evil || echo NO-EVIL; "
        f"cat {home}/tools/.netrc {home}/notes.txt {repo}/scripts/evil 2>&1; "
        f"touch {home}/tools/bin/planted 2>&1 && echo WROTE"
    )
    before = tree_hashes(home)
    outcome = run_attack(
        repo, [bash(command)], tmp_path, level, env={"HOME": str(home), "PATH": path}
    )
    seen = outcome.observations[0]
    assert "TOOL-RAN" in seen and "HOMEBIN-RAN" in seen, seen
    assert "NO-EVIL" in seen and "EVIL-RAN" not in seen, seen
    inside = seen.split("PATH=", 1)[1].split("\n", 1)[0].split(os.pathsep)
    assert not set(refused) & set(inside), inside
    assert "SECRET-" not in seen, seen
    assert "WROTE" not in seen, seen
    assert tree_hashes(home) == before
