"""What a sandboxed command may see and touch: writable paths, read-only views, masks, env."""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath

from frogdesk.paths import AppPaths
from frogdesk.sandbox.limits import CommandLimits
from frogdesk.sandbox.toolchain import (
    Forbidden,
    Toolchain,
    env_folder_names,
    is_venv,
    refusal,
    resolve_toolchain,
)
from frogdesk.scratch import scratch_root
from frogdesk.worktree.checkout import Worktree, session_private_dir
from frogdesk.worktree.objects import ObjectRoute
from frogdesk.worktree.record import verified

# Credentials a command never needs; hidden (bwrap) or left unreadable (landlock).
CREDENTIAL_PATHS = (
    ".ssh",
    ".aws",
    ".azure",
    ".gnupg",
    ".password-store",
    ".netrc",
    ".git-credentials",
    ".docker",
    ".kube",
    ".pypirc",
    ".npmrc",
    ".yarnrc",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".huggingface",
    ".cache/huggingface/token",
    ".config/gh",
    ".config/hub",
    ".config/gcloud",
    ".config/git/credentials",
    ".config/rclone",
    ".local/share/keyrings",
    ".mozilla",
    ".config/google-chrome",
    ".config/chromium",
    ".gitconfig",
    ".config/git",
    ".m2/settings.xml",
    ".gradle/gradle.properties",
    ".config/pip/pip.conf",
    ".pip/pip.conf",
    ".terraformrc",
    ".terraform.d/credentials.tfrc.json",
    ".config/containers/auth.json",
    ".vault-token",
)
# Toolchain folders of the user's home shown read-only inside the sandbox; the rest of the
# home is hidden. Credentials stay hidden even inside these.
HOME_TOOLCHAINS = (
    ".pyenv",
    ".cargo",
    ".rustup",
    ".nvm",
    ".volta",
    ".bun",
    ".deno",
    "go",
    ".local/bin",
    ".rbenv",
    ".sdkman",
    ".ghcup",
    ".elan",
    ".juliaup",
)
# System folders that hold the host's sockets (D-Bus, docker.sock, agents): replaced by
# empty ones at the bwrap level, unreadable at the landlock level.
SOCKET_FOLDERS = ("/run", "/var/run")
DEFAULT_MAX_TIMEOUT = 600.0
"""Longest a single command may run, in seconds, whatever the model asks."""

# Environment variables passed through to commands; everything else is dropped.
ENV_ALLOW = (
    "PATH",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "LC_MESSAGES",
    "TERM",
    "TZ",
    "COLORTERM",
)
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
AGENT_IDENTITY = {
    "GIT_AUTHOR_NAME": "FrogDesk agent",
    "GIT_AUTHOR_EMAIL": "agent@frogdesk.invalid",
    "GIT_COMMITTER_NAME": "FrogDesk agent",
    "GIT_COMMITTER_EMAIL": "agent@frogdesk.invalid",
}


@dataclass(frozen=True)
class ReadOnlyView:
    """An ignored directory of the user's repository shown read-only inside the worktree."""

    source: Path
    target: Path


@dataclass(frozen=True)
class SandboxPolicy:
    """Everything a shell needs to confine one session's commands."""

    workdir_root: Path
    """The folder commands run in and may write (the session worktree)."""
    git_readonly: tuple[Path, ...]
    """The main repository's git dir: visible, not writable (config, hooks, refs, objects)."""
    git_writable: tuple[Path, ...]
    """What `git add`/`git commit` in the worktree write: its admin dir, the private objects."""
    views: tuple[ReadOnlyView, ...]
    masked: tuple[Path, ...]
    """Existing credential files and folders of the user's home to hide."""
    home: Path
    """A private, writable HOME for the session."""
    tmp: Path
    """A private, writable tmp for the session."""
    env: dict[str, str] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    objects: ObjectRoute | None = None
    """Where sandboxed git writes objects, moved into the user's store after each command."""
    hidden: tuple[Path, ...] = ()
    """Folders shown empty (bwrap) or unreadable (landlock): the user's home, socket folders."""
    toolchains: tuple[Path, ...] = ()
    """Folders of the hidden home shown again, read-only."""
    pointers: tuple[Path, ...] = ()
    """git's pointer files of the worktree; read-only inside where the level can do it."""
    max_timeout: float = DEFAULT_MAX_TIMEOUT
    """Seconds after which any command is stopped, whatever timeout it asked for."""
    limits: CommandLimits = field(default_factory=CommandLimits)
    """Processes, memory and disk each command may use."""
    repo_root: Path | None = None
    """The user's repository (hidden): where editable installs and venv shebangs point."""
    toolchain: Toolchain | None = None
    """The developer's PATH, virtualenv and editable installs, as the shell gets them."""

    def writable_roots(self) -> list[Path]:
        """Where the session's commands can write on disk (the rest of their world is read-only)."""
        return [self.workdir_root, *self.git_writable, self.home, self.tmp]


def sandbox_env(home: Path, tmp: Path, environ: Mapping[str, str]) -> dict[str, str]:
    """The cleared environment commands get: an allow-list, a private HOME and TMPDIR."""
    env = {k: environ[k] for k in ENV_ALLOW if k in environ}
    env.setdefault("PATH", DEFAULT_PATH)
    env.setdefault("LANG", "C.UTF-8")
    env.setdefault("TERM", "dumb")
    env.update(HOME=str(home), TMPDIR=str(tmp), SHELL="/bin/bash", USER="agent", LOGNAME="agent")
    env.update(AGENT_IDENTITY)
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["GIT_LFS_SKIP_SMUDGE"] = "1"
    # Python's bytecode cache trusts a source file's size and mtime in whole seconds: an Edit
    # that keeps the size, made in the same second as an earlier import, would go on
    # running the old code. Commands compile from the source every time instead.
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _views(
    worktree: Worktree, visible_ignored: Sequence[str]
) -> tuple[list[ReadOnlyView], list[str]]:
    views: list[ReadOnlyView] = []
    warnings: list[str] = []
    for raw in visible_ignored:
        rel = PurePosixPath(raw)
        if not raw or rel.is_absolute() or ".." in rel.parts or rel.parts[:1] == (".git",):
            warnings.append(
                f"ignored path {raw!r} is not a relative path inside the repository; not shown"
            )
            continue
        source = worktree.repo_root / rel
        target = worktree.path / rel
        if not source.is_dir() or source.is_symlink():
            continue  # not present in this repository: nothing to show
        if target.is_symlink():
            # The landlock level's link from an earlier start (or one the sandbox put there):
            # the view is still the user's folder. Never listed through the link.
            views.append(ReadOnlyView(source=source.resolve(), target=target))
            continue
        if target.exists() and any(target.iterdir()):
            warnings.append(
                f"{raw} is part of the snapshot already; not replaced by the user's copy"
            )
            continue
        views.append(ReadOnlyView(source=source.resolve(), target=target))
    return views, warnings


def hidden_folders(
    user_home: Path,
    environ: Mapping[str, str],
    repo_root: Path | None = None,
    own: Sequence[Path] | None = None,
) -> list[Path]:
    """The folders a command may not see: the user's home, where the host keeps sockets,
    FrogDesk's own folders (`own`, by default `frogdesk_folders()`), and the user's
    repository (its ignored files, `.env` and the like, are not in the snapshot; what the
    session needs of it, its git dir and shown folders, is mounted again).

    FrogDesk's folders hold every session's transcript and worktree, the settings, the
    models, the cache of shared openings and the log: where they lie outside the home
    (`FROGDESK_HOME`, `XDG_*_HOME` elsewhere) they are hidden on their own; the session's
    worktree and private folders inside them are mounted again as its writable places.
    Only the outermost of nested folders is kept: hiding a folder hides what lies in it.
    """
    candidates = [user_home.resolve(), *map(Path, SOCKET_FOLDERS)]
    runtime = environ.get("XDG_RUNTIME_DIR", "")
    if runtime and Path(runtime).is_absolute():
        candidates.append(Path(runtime))
    found: list[Path] = []
    for folder in candidates:
        # The home is hidden where it really is: a home that is a link (/home/alice ->
        # /data/alice) is resolved above; the socket folders' links (/var/run -> /run)
        # are hidden through their targets.
        if folder == Path("/") or folder.is_symlink() or not folder.is_dir():
            continue
        found.append(folder.resolve())
    extra = [*(frogdesk_folders() if own is None else own)]
    if repo_root is not None:
        extra.append(repo_root)
    for path in extra:
        real = Path(os.path.realpath(path))
        if real != Path("/") and real.is_dir():
            found.append(real)
    return outermost(found)


def outermost(folders: Sequence[Path]) -> list[Path]:
    """The folders that lie inside none of the others, in their first order, once each.

    Landlock's read rules are built from this list (a folder hidden inside one already
    hidden would otherwise hand its outer folder's other entries back).
    """
    kept: list[Path] = []
    for folder in dict.fromkeys(folders):
        if any(folder.is_relative_to(other) for other in folders if other != folder):
            continue
        kept.append(folder)
    return kept


def home_view(
    user_home: Path, extra_toolchains: Sequence[str] = ()
) -> tuple[tuple[Path, ...], tuple[Path, ...]]:
    """The toolchain folders of the home that exist, and the credentials to mask among them.

    A folder that is (or lies inside) a credential path is never shown; credential paths
    inside a shown folder are masked, counted from the home and from the folder itself.
    """
    secrets = [user_home / rel for rel in CREDENTIAL_PATHS]
    toolchains: list[Path] = []
    for rel in (*HOME_TOOLCHAINS, *extra_toolchains):
        path = PurePosixPath(rel)
        if not rel or path.is_absolute() or ".." in path.parts:
            continue
        folder = user_home / path
        if any(folder.is_relative_to(secret) for secret in secrets):
            continue
        if folder.is_dir() and not folder.is_symlink() and folder.resolve() not in toolchains:
            toolchains.append(folder.resolve())
    return tuple(toolchains), credential_masks(user_home, toolchains)


def credential_masks(user_home: Path, folders: Sequence[Path]) -> tuple[Path, ...]:
    """The credential paths that exist inside shown folders, counted from the home and from
    each folder itself: hidden (bwrap) or left out of the read rules (landlock)."""
    secrets = [user_home / rel for rel in CREDENTIAL_PATHS]
    masked: list[Path] = []
    for folder in folders:
        for candidate in (*secrets, *(folder / rel for rel in CREDENTIAL_PATHS)):
            if candidate.is_relative_to(folder) and os.path.lexists(candidate):
                masked.append(candidate)
    return tuple(dict.fromkeys(masked))


def hub_token_files(environ: Mapping[str, str], user_home: Path) -> tuple[Path, ...]:
    """The Hugging Face token files huggingface_hub reads, wherever the environment puts
    them (`HF_TOKEN_PATH`, `HF_HOME`, `XDG_CACHE_HOME`): outside the home no credential
    rule of the home covers them. Only the ones that exist."""
    homes = [Path(environ["HF_HOME"]).expanduser()] if environ.get("HF_HOME") else []
    cache = environ.get("XDG_CACHE_HOME")
    homes.append((Path(cache) if cache else user_home / ".cache") / "huggingface")
    files = [home / name for home in homes for name in ("token", "stored_tokens")]
    if environ.get("HF_TOKEN_PATH"):
        files.append(Path(environ["HF_TOKEN_PATH"]).expanduser())
    found = [Path(os.path.realpath(f)) for f in files if f.is_absolute() and os.path.lexists(f)]
    return tuple(dict.fromkeys(found))


def outside_hidden(
    paths: Sequence[Path], hidden: Sequence[Path], shown: Sequence[Path]
) -> tuple[Path, ...]:
    """The paths a hidden folder does not already cover (or that a shown folder shows again)."""
    return tuple(
        p
        for p in paths
        if not any(p.is_relative_to(h) for h in hidden) or any(p.is_relative_to(s) for s in shown)
    )


def frogdesk_folders() -> tuple[Path, ...]:
    """FrogDesk's own folders (settings, data with sessions and worktrees, cache, state, and
    the short-lived host folders of `frogdesk.scratch`, which lie in the shared /tmp)."""
    paths = AppPaths.default()
    folders = [paths.config_dir, paths.data_dir, paths.cache_dir, scratch_root()]
    if paths.state_dir is not None:
        folders.append(paths.state_dir)
    return tuple(Path(os.path.realpath(f)) for f in folders)


def developer_toolchain(
    environ: Mapping[str, str],
    user_home: Path,
    home_toolchains: Sequence[Path],
    *,
    writable: Sequence[Path],
    unseen: Sequence[Path] = (),
    repo_root: Path | None = None,
    views: Sequence[ReadOnlyView] = (),
    worktree: Path | None = None,
) -> tuple[Toolchain, tuple[Path, ...], tuple[Path, ...]]:
    """The shell's toolchain, every folder to show read-only, and the credentials to mask
    (those inside the shown folders, and the Hugging Face token outside the hidden ones).

    The home's toolchain folders go through the same refusals as the launch environment's
    (a `~/go` that holds the repository would show it again).
    """
    forbidden = Forbidden(
        user_home=user_home,
        repo_root=Path(os.path.realpath(repo_root)) if repo_root is not None else None,
        own=frogdesk_folders(),
        writable=tuple(Path(os.path.realpath(w)) for w in writable),
        secrets=tuple(user_home / rel for rel in CREDENTIAL_PATHS),
        allowed_in_repo=tuple(view.source for view in views),
        unseen=(*unseen, Path("/tmp")),
    )
    refused: list[str] = []
    kept: list[Path] = []
    for folder in home_toolchains:
        why = refusal(folder, forbidden)
        if why is None:
            kept.append(folder)
        else:
            refused.append(f"{folder}: not shown in the sandbox ({why})")
    toolchain = resolve_toolchain(
        environ,
        forbidden,
        repo_venvs=[view.source for view in views if is_venv(view.source)],
        node_modules=[
            view.source
            for view in views
            if worktree is not None and view.target == worktree / "node_modules"
        ],
        worktree=worktree,
        covered=kept,
        default_path=DEFAULT_PATH,
    )
    if refused:
        toolchain = replace(toolchain, refused=(*refused, *toolchain.refused))
    folders = (*kept, *toolchain.folders)
    # The Hub token, wherever the environment keeps it outside what is hidden anyway.
    tokens = outside_hidden(hub_token_files(environ, user_home), unseen, folders)
    return (
        toolchain,
        folders,
        tuple(dict.fromkeys((*credential_masks(user_home, folders), *tokens))),
    )


def toolchain_warning(toolchain: Toolchain) -> list[str]:
    """One line naming what of the launch environment the sandbox does not show, if anything."""
    if not toolchain.refused:
        return []
    return ["Not shown to the sandbox's commands: " + "; ".join(toolchain.refused)]


def _with_toolchain(env: dict[str, str], toolchain: Toolchain) -> dict[str, str]:
    return {**env, "PATH": os.pathsep.join(toolchain.path), **toolchain.env}


def build_policy(
    worktree: Worktree,
    visible_ignored: Sequence[str] = (),
    *,
    private_dir: Path | None = None,
    user_home: Path | None = None,
    environ: Mapping[str, str] | None = None,
    home_toolchains: Sequence[str] = (),
    max_timeout: float = DEFAULT_MAX_TIMEOUT,
    limits: CommandLimits | None = None,
) -> SandboxPolicy:
    """The policy for one session's worktree, from its record; creates its private HOME and tmp.

    TamperedWorktree if the worktree's git metadata no longer matches the record: a policy
    is never built from pointers the sandbox could have written.
    """
    paths = verified(worktree)
    private = private_dir if private_dir is not None else session_private_dir(worktree)
    home, tmp = private / "home", private / "tmp"
    home.mkdir(parents=True, exist_ok=True)
    tmp.mkdir(parents=True, exist_ok=True)
    objects = ObjectRoute(private=private / "objects", git_dir=paths.common_dir)
    objects.prepare()
    environ = os.environ if environ is None else environ
    names = env_folder_names(worktree.repo_root, visible_ignored, environ)
    views, warnings = _views(worktree, names)
    user_home = (Path(user_home) if user_home is not None else Path.home()).resolve()
    home_folders, _ = home_view(user_home, home_toolchains)
    hidden = hidden_folders(user_home, environ, worktree.repo_root)
    toolchain, toolchains, masked = developer_toolchain(
        environ,
        user_home,
        home_folders,
        writable=(worktree.path, paths.git_dir, objects.private, home, tmp),
        unseen=hidden,
        repo_root=worktree.repo_root,
        views=views,
        worktree=worktree.path,
    )
    env = _with_toolchain({**sandbox_env(home, tmp, environ), **objects.env()}, toolchain)
    return SandboxPolicy(
        workdir_root=worktree.path,
        git_readonly=(paths.common_dir,),
        git_writable=(paths.git_dir, objects.private),
        views=tuple(views),
        masked=masked,
        home=home,
        tmp=tmp,
        env=env,
        warnings=(*warnings, *toolchain_warning(toolchain)),
        objects=objects,
        hidden=tuple(hidden),
        toolchains=toolchains,
        pointers=tuple(p for p in paths.pointer_files() if p.is_file() and not p.is_symlink()),
        max_timeout=max_timeout,
        limits=limits or CommandLimits(),
        repo_root=Path(os.path.realpath(worktree.repo_root)),
        toolchain=toolchain,
    )


def git_sockets(policy: SandboxPolicy) -> list[Path]:
    """Unix sockets in the user's git dir (git's fsmonitor--daemon.ipc, a tool's own), to mask.

    A read-only bind does not stop connect() on a socket, so the bwrap level binds
    /dev/null over each one; scanned for each command, since a daemon may start at any time.
    The sandbox's own writable folders are skipped (what it binds there is its own), links
    are not followed. The landlock level needs none of this: it allows no socket() at all.
    """
    own = {*policy.git_writable, policy.workdir_root}
    found: list[Path] = []
    pending = [p for p in policy.git_readonly if p not in own]
    while pending:
        folder = pending.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue  # gone or unreadable: nothing in it for the sandbox to reach either
        for entry in entries:
            path = Path(entry.path)
            if entry.is_dir(follow_symlinks=False):
                if path not in own and not _object_folder(path):
                    pending.append(path)
            elif not entry.is_file(follow_symlinks=False) and not entry.is_symlink():
                with contextlib.suppress(OSError):
                    if stat.S_ISSOCK(entry.stat(follow_symlinks=False).st_mode):
                        found.append(path)
    return sorted(found)


def _object_folder(path: Path) -> bool:
    """A fan-out or pack folder of an object store: thousands of entries git alone writes, so
    the socket scan, which runs before every command, does not walk them."""
    if path.parent.name != "objects":
        return False
    name = path.name
    return name == "pack" or (len(name) == 2 and all(c in "0123456789abcdef" for c in name))


def bare_policy(
    private_dir: Path,
    environ: Mapping[str, str] | None = None,
    limits: CommandLimits | None = None,
) -> SandboxPolicy:
    """A policy with no repository: commands may write only private_dir/work, HOME and tmp."""
    return folder_policy(private_dir / "work", private_dir, environ, limits=limits)


def folder_policy(
    folder: Path,
    private_dir: Path,
    environ: Mapping[str, str] | None = None,
    *,
    user_home: Path | None = None,
    max_timeout: float = DEFAULT_MAX_TIMEOUT,
    limits: CommandLimits | None = None,
) -> SandboxPolicy:
    """A policy confined to one folder: commands may write only it and a private HOME and tmp."""
    work, home, tmp = folder, private_dir / "home", private_dir / "tmp"
    for path in (work, home, tmp):
        path.mkdir(parents=True, exist_ok=True)
    environ = os.environ if environ is None else environ
    user_home = (Path(user_home) if user_home is not None else Path.home()).resolve()
    home_folders, _ = home_view(user_home)
    hidden = hidden_folders(user_home, environ)
    toolchain, toolchains, masked = developer_toolchain(
        environ, user_home, home_folders, writable=(work, home, tmp), unseen=hidden
    )
    return SandboxPolicy(
        workdir_root=work,
        git_readonly=(),
        git_writable=(),
        views=(),
        masked=masked,
        home=home,
        tmp=tmp,
        env=_with_toolchain(sandbox_env(home, tmp, environ), toolchain),
        warnings=tuple(toolchain_warning(toolchain)),
        hidden=tuple(hidden),
        toolchains=toolchains,
        max_timeout=max_timeout,
        limits=limits or CommandLimits(),
        toolchain=toolchain,
    )
