"""The developer's toolchain inside the sandbox: PATH, the active virtualenv, editable installs.

The launch environment's PATH and virtualenv (VIRTUAL_ENV, CONDA_PREFIX) are carried into
the command's shell after its login profile; the folders they name are shown read-only
(a "toolchain folder"), except the dangerous ones, which are refused with a reason: the
file-system root, the home as a whole, the user's repository, FrogDesk's own folders,
credentials, and anything the sandbox can write. An editable install whose paths point
into the user's repository is pointed at the session's worktree instead.
"""

from __future__ import annotations

import ast
import os
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from frogdesk.sandbox.shells.protocol import Shell

DEFAULT_ENV_FOLDERS = (".venv", "venv", "node_modules")
"""The repository's ignored environment folders always looked for; a setting extends them,
and any top-level folder holding a `pyvenv.cfg` (a virtualenv by any name) is found too."""
ENV_VARIABLES = ("VIRTUAL_ENV", "CONDA_PREFIX")
"""The active environments carried from the launch environment into the shell."""
TOOL_HOMES = {
    "PYENV_ROOT": ".pyenv",
    "RBENV_ROOT": ".rbenv",
    "NVM_DIR": ".nvm",
    "VOLTA_HOME": ".volta",
    "RUSTUP_HOME": ".rustup",
    "SDKMAN_DIR": ".sdkman",
    "BUN_INSTALL": ".bun",
}
"""Where version managers look for their root, by default under HOME: the sandbox's HOME is
its own, so a shown manager's shims (`~/.pyenv/shims/python`) are told where the real one is.
(Not CARGO_HOME: cargo writes its registry cache there, which must stay the session's.)"""
PREFIX_NAMES = ("bin", "sbin", "shims")
"""A PATH entry with one of these names is shown with its parent (the prefix it belongs to:
`lib/` beside `bin/`), where that parent is itself a safe toolchain folder."""
FINDER_MAPPING = re.compile(r"^MAPPING\s*(?::[^=\n]*)?=\s*(\{.*?\})\s*$", re.MULTILINE | re.DOTALL)
"""setuptools' editable finder (`__editable___NAME_finder.py`): its import name -> path map."""


@dataclass(frozen=True)
class Forbidden:
    """What a toolchain folder may not be, be inside, or hold (see `refusal`)."""

    user_home: Path
    repo_root: Path | None = None
    own: tuple[Path, ...] = ()
    """FrogDesk's own folders (data, sessions, worktrees, config, cache)."""
    writable: tuple[Path, ...] = ()
    """Where the session's commands can write."""
    secrets: tuple[Path, ...] = ()
    """Credential paths (of the home): never shown, nor any folder inside one."""
    allowed_in_repo: tuple[Path, ...] = ()
    """Folders of the repository that are shown anyway (its environment folders)."""
    unseen: tuple[Path, ...] = ()
    """Folders the sandbox does not see (the home, the host's /tmp at bwrap): a toolchain
    folder inside one is shown again; any other is visible already."""


def _overlaps(a: Path, b: Path) -> bool:
    return a == b or a.is_relative_to(b) or b.is_relative_to(a)


def refusal(folder: Path, forbidden: Forbidden) -> str | None:
    """Why `folder` (resolved) may not be shown as a toolchain folder; None when it may."""
    if folder == Path("/"):
        return "the whole file system"
    home = forbidden.user_home
    if folder == home or home.is_relative_to(folder):
        return "your whole home folder"
    repo = forbidden.repo_root
    allowed = any(folder.is_relative_to(ok) for ok in forbidden.allowed_in_repo)
    if repo is not None and _overlaps(folder, repo) and not allowed:
        return "your repository itself (the session sees its own worktree)"
    if any(_overlaps(folder, own) for own in forbidden.own):
        return "FrogDesk's own data (sessions, worktrees, settings)"
    if any(_overlaps(folder, w) for w in forbidden.writable):
        return "a place the sandbox can write"
    if any(folder.is_relative_to(secret) for secret in forbidden.secrets):
        return "a credential folder"
    return None


@dataclass(frozen=True)
class EditablePath:
    """A path of the user's repository that an editable install imports from."""

    rel: PurePosixPath
    """Relative to the repository root ("." for the root itself)."""
    import_root: PurePosixPath
    """The folder that goes on sys.path for it (rel itself, or its parent for a package)."""


@dataclass(frozen=True)
class Toolchain:
    """What the session's shell gets of the developer's toolchain."""

    path: tuple[str, ...]
    """PATH inside the sandbox, in order; restored after the login profile."""
    env: dict[str, str] = field(default_factory=dict)
    """VIRTUAL_ENV / CONDA_PREFIX (and PYTHONPATH for editable installs), as the shell sees them."""
    folders: tuple[Path, ...] = ()
    """Folders outside the repository shown read-only (resolved)."""
    venvs: tuple[Path, ...] = ()
    """The virtualenvs found (the repository's and the active one)."""
    editable: tuple[EditablePath, ...] = ()
    """Paths of the user's repository an installed editable package imports from."""
    refused: tuple[str, ...] = ()
    """One line per folder not shown, and why."""


def env_folder_names(
    repo_root: Path | None, extra: Sequence[str] = (), environ: Mapping[str, str] | None = None
) -> list[str]:
    """The repository's environment folders to show: the defaults, any top-level virtualenv,
    the active environment where it lies in the repository, and the setting's extra ones."""
    names = [*DEFAULT_ENV_FOLDERS]
    if repo_root is not None:
        try:
            entries = sorted(os.scandir(repo_root), key=lambda e: e.name)
        except OSError:
            entries = []
        for entry in entries:
            if (
                entry.name != ".git"
                and entry.is_dir(follow_symlinks=False)
                and is_venv(Path(entry.path))
            ):
                names.append(entry.name)
        for key in ENV_VARIABLES:
            value = (environ or {}).get(key, "")
            if value and Path(value).is_absolute():
                active = Path(os.path.realpath(value))
                root = Path(os.path.realpath(repo_root))
                if active != root and active.is_relative_to(root):
                    rel = active.relative_to(root).as_posix()
                    if not rel.startswith(".git/") and rel != ".git":
                        names.append(rel)
    names += [name for name in extra if name]
    return list(dict.fromkeys(names))


def is_venv(folder: Path) -> bool:
    """Whether folder is a Python virtualenv (it holds a pyvenv.cfg)."""
    return (folder / "pyvenv.cfg").is_file()


def venv_base(prefix: Path) -> Path | None:
    """The prefix of the interpreter a virtualenv was made from (its pyvenv.cfg `home`)."""
    try:
        text = (prefix / "pyvenv.cfg").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip() == "home" and value.strip():
            home = Path(value.strip())
            if not home.is_absolute():
                return None
            return home.parent if home.name in PREFIX_NAMES else home
    return None


def site_packages(prefix: Path) -> list[Path]:
    """The site-packages folders of an environment prefix (lib/pythonX.Y/site-packages)."""
    return sorted(p for p in prefix.glob("lib*/python*/site-packages") if p.is_dir())


def _editable_targets(site: Path) -> Iterable[tuple[Path, bool]]:
    """(path, is_import_root) for each path the .pth files and editable finders name."""
    try:
        entries = sorted(os.scandir(site), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        if not entry.is_file():
            continue
        try:
            text = Path(entry.path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if entry.name.endswith(".pth"):
            for line in text.splitlines():
                line = line.strip()
                if not line or line.startswith(("#", "import ", "import\t")):
                    continue
                yield (site / line if not Path(line).is_absolute() else Path(line)), True
        elif entry.name.startswith("__editable__") and entry.name.endswith("_finder.py"):
            found = FINDER_MAPPING.search(text)
            if found is None:
                continue
            try:
                mapping = ast.literal_eval(found.group(1))
            except (ValueError, SyntaxError):
                continue
            if isinstance(mapping, dict):
                for value in mapping.values():
                    if isinstance(value, str) and Path(value).is_absolute():
                        yield Path(value), False


def editable_paths(venvs: Sequence[Path], repo_root: Path) -> list[EditablePath]:
    """The paths of the repository the venvs' editable installs import from."""
    root = Path(os.path.realpath(repo_root))
    out: list[EditablePath] = []
    for venv in venvs:
        for site in site_packages(venv):
            for target, is_root in _editable_targets(site):
                resolved = Path(os.path.normpath(target))
                if not resolved.is_relative_to(root):
                    resolved = Path(os.path.realpath(target))
                if not resolved.is_relative_to(root):
                    continue
                rel = PurePosixPath(resolved.relative_to(root).as_posix())
                if rel.parts[:1] == (".git",) or any(
                    Path(root / rel).is_relative_to(v) for v in venvs
                ):
                    continue
                import_root = rel if is_root else rel.parent
                item = EditablePath(rel=rel, import_root=import_root)
                if item not in out:
                    out.append(item)
    return out


def _expose(
    entry: Path,
    forbidden: Forbidden,
    shown: list[Path],
    refused: list[str],
    covered: Sequence[Path],
) -> bool:
    """Add the folder to show for a PATH entry (its prefix where safe); whether it may be used."""
    resolved = Path(os.path.realpath(entry))
    why = refusal(resolved, forbidden)
    if why is not None:
        refused.append(f"{entry}: not shown in the sandbox ({why})")
        return False
    folder = resolved
    if resolved.name in PREFIX_NAMES and refusal(resolved.parent, forbidden) is None:
        folder = resolved.parent
    if not any(folder.is_relative_to(u) for u in forbidden.unseen):
        return True  # the sandbox sees it already, read-only like the rest of the system
    if not any(folder.is_relative_to(c) for c in [*covered, *shown]):
        shown[:] = [s for s in shown if not s.is_relative_to(folder)]
        shown.append(folder)
    return True


def resolve_toolchain(
    environ: Mapping[str, str],
    forbidden: Forbidden,
    *,
    repo_venvs: Sequence[Path] = (),
    node_modules: Sequence[Path] = (),
    worktree: Path | None = None,
    covered: Sequence[Path] = (),
    default_path: str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
) -> Toolchain:
    """The toolchain the session's shell gets from the launch environment and the repository.

    `repo_venvs`: the repository's virtualenvs shown to the session (their original paths);
    the first is activated when the launch environment has no active one. `node_modules`:
    the repository's top-level node_modules (NODE_PATH, and its `.bin` on PATH). `covered`:
    folders shown already (the home's toolchain folders), not listed again.
    """
    shown: list[Path] = []
    refused: list[str] = []
    env: dict[str, str] = {}
    venvs: list[Path] = []
    path: list[str] = []
    for key in ENV_VARIABLES:
        value = environ.get(key, "")
        if not value:
            continue
        prefix = Path(value)
        if not prefix.is_absolute() or not prefix.is_dir():
            refused.append(f"{key}={value}: not a folder; not carried into the sandbox")
            continue
        if any(Path(os.path.realpath(prefix)) == Path(os.path.realpath(v)) for v in repo_venvs):
            env[key] = value  # the repository's own environment folder: shown already
        elif _expose(prefix, forbidden, shown, refused, covered):
            env[key] = value
        else:
            continue
        if key == "VIRTUAL_ENV":
            venvs.append(prefix)
    if "VIRTUAL_ENV" not in env and "CONDA_PREFIX" not in env:
        for venv in repo_venvs:
            if is_venv(venv):
                env["VIRTUAL_ENV"] = str(venv)
                path.append(str(venv / "bin"))
                venvs.append(venv)
                break
    for venv in [*venvs, *(v for v in repo_venvs if v not in venvs and is_venv(v))]:
        base = venv_base(venv)
        if base is not None and base.is_dir():
            _expose(base, forbidden, shown, refused, covered)
        if venv not in venvs:
            venvs.append(venv)
    for modules in node_modules:
        env.setdefault("NODE_PATH", str(modules))
        if (modules / ".bin").is_dir():
            path.append(str(modules / ".bin"))
    for raw in (environ.get("PATH") or default_path).split(os.pathsep):
        if raw in path:
            continue
        entry = Path(raw)
        if not raw or not entry.is_absolute():
            refused.append(
                f"PATH entry {raw!r}: not used in the sandbox (relative: it names the worktree)"
            )
            continue
        if not entry.is_dir():
            continue  # missing here: nothing to find in it
        in_repo_venv = any(
            Path(os.path.realpath(entry)).is_relative_to(os.path.realpath(v)) for v in repo_venvs
        )
        if in_repo_venv or _expose(entry, forbidden, shown, refused, covered):
            resolved = os.path.realpath(entry)
            hidden_link = resolved != raw and any(entry.is_relative_to(u) for u in forbidden.unseen)
            # A link in a hidden folder (~/bin -> ~/dotfiles/bin) is not there inside: the
            # folder it names is.
            if (resolved if hidden_link else raw) not in path:
                path.append(resolved if hidden_link else raw)
    for raw in default_path.split(os.pathsep):
        if raw not in path:
            path.append(raw)  # what the login profile would have given, after the user's own
    editable: list[EditablePath] = []
    if forbidden.repo_root is not None:
        editable = editable_paths(venvs, forbidden.repo_root)
    if editable and worktree is not None:
        roots = dict.fromkeys(str(worktree / e.import_root) for e in editable)
        env["PYTHONPATH"] = os.pathsep.join(roots)
    for key, default in TOOL_HOMES.items():
        value = environ.get(key) or str(forbidden.user_home / default)
        where = Path(os.path.realpath(value))
        if any(where.is_relative_to(f) for f in [*covered, *shown]):
            env[key] = value
    return Toolchain(
        path=tuple(path),
        env=env,
        folders=tuple(shown),
        venvs=tuple(venvs),
        editable=tuple(editable),
        refused=tuple(dict.fromkeys(refused)),
    )


def after_profile(command: str, env: Mapping[str, str]) -> str:
    """The command with the toolchain's PATH and environments set again after the login
    profile (`bash -l` reads /etc/profile, which resets PATH), on the same line."""
    parts = [f"PATH={shlex.quote(env['PATH'])}"] if "PATH" in env else []
    parts += [f"{key}={shlex.quote(env[key])}" for key in ENV_VARIABLES if key in env]
    if not parts:
        return command
    names = " ".join(p.split("=", 1)[0] for p in parts)
    return f"{' '.join(parts)}; export {names}; {command}"


TOOLS = ("python", "python3", "pytest", "node", "npm")
"""What `frogdesk doctor` and a session's first screen say the shell finds."""
PROBE_SCRIPT = (
    f'for t in {" ".join(TOOLS)}; do printf \'%s=%s\\n\' "$t" "$(command -v "$t")"; done; '
    "printf 'venv=%s\\n' \"$VIRTUAL_ENV\"; "
    "py=$(command -v python || command -v python3) && printf 'python-version=%s\\n' "
    '"$("$py" -c \'import sys; print(sys.version.split()[0])\' 2>/dev/null)"; true'
)


@dataclass(frozen=True)
class ToolchainProbe:
    """What the session's shell finds: each tool's path inside the sandbox (None: not found)."""

    tools: dict[str, str | None]
    python_version: str | None = None
    virtual_env: str | None = None
    error: str | None = None
    """Why the probe could not run (the tools are then unknown, not missing)."""


def probe_tools(shell: Shell, workdir: Path, timeout: float = 30.0) -> ToolchainProbe:
    """Run `command -v` for each of TOOLS in the shell, as a session's command would run."""
    try:
        result = shell.run(PROBE_SCRIPT, workdir, timeout)
    except Exception as exc:  # a refused level, a missing folder: the probe says so, never raises
        return ToolchainProbe(tools={}, error=f"{type(exc).__name__}: {exc}")
    if result.timed_out or result.exit_code != 0:
        why = "timed out" if result.timed_out else f"exit code {result.exit_code}"
        return ToolchainProbe(tools={}, error=f"{why}: {result.stderr.strip()[-300:]}")
    found: dict[str, str] = {}
    for line in result.stdout.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            found[key] = value.strip()
    return ToolchainProbe(
        tools={tool: found.get(tool) or None for tool in TOOLS},
        python_version=found.get("python-version") or None,
        virtual_env=found.get("venv") or None,
    )
