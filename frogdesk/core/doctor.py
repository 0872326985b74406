"""`frogdesk doctor`: what this machine, this install and this configuration can do."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import shutil
import sys
import tempfile
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from frogdesk import __version__, config, system
from frogdesk.models.hub import offline_requested
from frogdesk.models.local import hf_cache_dir
from frogdesk.paths import AppPaths
from frogdesk.sandbox.confine import (
    LANDLOCK_REQUIRED_ABI,
    landlock_abi,
    landlock_gives,
    landlock_missing,
    landlock_refusal,
)
from frogdesk.sandbox.errors import SandboxError
from frogdesk.sandbox.levels import confined_shell, detect
from frogdesk.sandbox.tool_report import probe_lines, refused_entries
from frogdesk.sandbox.toolchain import TOOLS, env_folder_names, is_venv, probe_tools
from frogdesk.sessions.openings import KEEP as OPENINGS_KEPT
from frogdesk.sessions.openings import openings_on_disk
from frogdesk.sessions.saved_states import states_on_disk
from frogdesk.sizes import gib
from frogdesk.worktree.checkout import find_repo_root

PACKAGES = (
    "llama-cpp-python",
    "textual",
    "huggingface-hub",
    "gitpython",
    "watchdog",
    "pygments",
    "platformdirs",
    "gguf",
)
GPU_CMAKE = {
    "nvidia": ("cuda", "-DGGML_CUDA=on"),
    "apple": ("metal", "-DGGML_METAL=on"),
    "amd": ("rocm", "-DGGML_HIP=on"),
}


def gpu_install_hint(vendor: str) -> str:
    """The command that rebuilds llama.cpp with offload for this GPU vendor."""
    flag, cmake = GPU_CMAKE[vendor]
    return (
        f"packaging/install-gpu --{flag} (from a checkout), or: CMAKE_ARGS={cmake} "
        f"{sys.executable} -m pip install --force-reinstall --no-cache-dir --no-deps "
        "--no-binary llama-cpp-python llama-cpp-python"
    )


DEFAULT_HUB = "https://huggingface.co"


@dataclass
class DoctorReport:
    """Everything doctor reports; `problems` are the lines that need the user's attention."""

    frogdesk: str
    python: str
    platform: str
    packages: dict[str, str]
    llama: dict[str, Any]
    cpu: dict[str, int]
    memory: dict[str, int]
    gpus: list[dict[str, Any]]
    sandbox: dict[str, Any]
    paths: dict[str, str]
    config: dict[str, Any]
    hub: dict[str, Any]
    running_as_root: bool
    problems: list[str] = field(default_factory=list)
    toolchain: dict[str, Any] = field(default_factory=dict)
    """What a session's shell finds (python, pytest, node...) and what it is not shown."""
    saved_states: dict[str, int] = field(default_factory=dict)
    """Saved engine states of sessions: how many and their bytes."""
    shared_openings: dict[str, int] = field(default_factory=dict)
    """Saved openings every session on a model starts from: how many and their bytes."""

    def to_dict(self) -> dict[str, Any]:
        """The report as plain JSON-able data."""
        return asdict(self)


def package_versions() -> dict[str, str]:
    """Installed versions of FrogDesk's main dependencies ("missing" when absent)."""
    out: dict[str, str] = {}
    for name in PACKAGES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = "missing"
    return out


def llama_capabilities() -> dict[str, Any]:
    """Whether the llama.cpp build can offload to a GPU, and its system info line."""
    try:
        import llama_cpp
    except Exception as exc:  # a broken native build raises OSError, not ImportError
        return {"available": False, "error": f"{type(exc).__name__}: {exc}"}
    info = llama_cpp.llama_print_system_info()
    return {
        "available": True,
        "gpu_offload": bool(llama_cpp.llama_supports_gpu_offload()),
        "mmap": bool(llama_cpp.llama_supports_mmap()),
        "system_info": info.decode("utf-8", "replace").strip()
        if isinstance(info, bytes)
        else str(info),
    }


def landlock_status() -> dict[str, Any]:
    """The kernel's Landlock ABI, which of the landlock level's features it gives, which it lacks."""
    abi = landlock_abi()
    missing = landlock_missing(abi)
    return {
        "abi": abi,
        "required_abi": LANDLOCK_REQUIRED_ABI,
        "gives": [f"{f.name} (ABI {f.abi})" for f in landlock_gives(abi)],
        "missing": [f"{f.name} (ABI {f.abi})" for f in missing],
        "refusal": landlock_refusal(abi, missing) if missing else None,
    }


def sandbox_status(requested: str) -> dict[str, Any]:
    """The shell isolation level FrogDesk would use, and why ("unavailable" when the level
    the settings name cannot work here)."""
    level: str
    try:
        level, reason = detect(requested)
    except SandboxError as exc:
        level, reason = "unavailable", str(exc)
    return {"requested": requested, "level": level, "reason": reason, "landlock": landlock_status()}


def landlock_line(landlock: dict[str, Any]) -> str:
    """One line: the ABI and what it gives the landlock level, or what it lacks."""
    if landlock["abi"] < 1:
        return "landlock         none (the kernel has no Landlock, or it is disabled)"
    gives = ", ".join(landlock["gives"])
    if not landlock["missing"]:
        return f"landlock         ABI {landlock['abi']}: {gives}"
    return (
        f"landlock         ABI {landlock['abi']}: {gives}; missing {', '.join(landlock['missing'])}, "
        f"so the landlock level is refused (it needs ABI {landlock['required_abi']})"
    )


def repository_envs(settings: config.Settings, cwd: Path | None = None) -> dict[str, Any]:
    """The environment folders of the repository around cwd that a session would show."""
    try:
        root = find_repo_root(cwd or Path.cwd())
    except Exception:
        return {}
    names = env_folder_names(root, settings.sandbox.visible_ignored, os.environ)
    found = [
        f"{name} (virtualenv)" if is_venv(root / name) else name
        for name in names
        if (root / name).is_dir() and not (root / name).is_symlink()
    ]
    return {"root": str(root), "env_folders": found}


def toolchain_status(level: str, settings: config.Settings) -> dict[str, Any]:
    """Run the tool probe in a shell of the level doctor found, in a scratch folder."""
    out: dict[str, Any] = {"level": level, **repository_envs(settings)}
    if level not in ("bwrap", "landlock", "none"):
        out["error"] = "no shell level is available"
        return out
    scratch = Path(tempfile.mkdtemp(prefix="frogdesk-doctor-"))
    try:
        work = scratch / "work"
        work.mkdir()
        choice = confined_shell(level, work, private_dir=scratch / "private")
        probe = probe_tools(choice.shell, work)
        refused = refused_entries(choice.shell)
        out.update(
            tools=probe.tools,
            python_version=probe.python_version,
            virtual_env=probe.virtual_env,
            error=probe.error,
            refused=refused,
            lines=probe_lines(probe, refused),
        )
    except Exception as exc:  # doctor reports, never raises
        out["error"] = f"{type(exc).__name__}: {exc}"
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return out


def toolchain_lines(toolchain: dict[str, Any]) -> list[str]:
    """doctor's lines for the toolchain: the tools found inside, the repository's folders."""
    if not toolchain:
        return []
    if toolchain.get("error"):
        lines = [f"shell tools      unknown: {toolchain['error']}"]
    else:
        found = []
        for tool in TOOLS:
            where = toolchain.get("tools", {}).get(tool)
            found.append(f"{tool} {where or 'not found'}")
        version = toolchain.get("python_version")
        lines = [
            f"shell tools      at {toolchain['level']}: "
            + "; ".join(found)
            + (f" (Python {version})" if version else "")
        ]
    if toolchain.get("root"):
        folders = ", ".join(toolchain.get("env_folders", [])) or "none found"
        lines.append(
            f"repository envs  {toolchain['root']}: {folders} (shown read-only to its sessions)"
        )
    return lines


def hub_status(endpoint: str, timeout: float = 3.0) -> dict[str, Any]:
    """Whether the Hub endpoint answers; offline is a normal answer (HF_HUB_OFFLINE: not asked)."""
    if offline_requested():
        return {
            "endpoint": endpoint,
            "reachable": False,
            "error": "not asked: HF_HUB_OFFLINE is set",
        }
    url = endpoint.rstrip("/") + "/api/models?limit=1"
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return {"endpoint": endpoint, "reachable": True, "status": response.status}
    except urllib.error.HTTPError as exc:
        return {"endpoint": endpoint, "reachable": True, "status": exc.code}
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        return {"endpoint": endpoint, "reachable": False, "error": str(reason)}


def collect(config_file: os.PathLike[str] | str, *, hub_timeout: float = 3.0) -> DoctorReport:
    """Gather the report; never raises for a broken config or an unreachable Hub."""
    from pathlib import Path

    paths = AppPaths.default()
    problems: list[str] = []
    config_info: dict[str, Any] = {"file": str(config_file), "exists": Path(config_file).exists()}
    try:
        settings = config.load(Path(config_file))
        config_info["valid"] = True
    except config.ConfigError as exc:
        settings = config.Settings()
        config_info["valid"] = False
        config_info["error"] = str(exc)
        problems.append(str(exc))

    llama = llama_capabilities()
    gpu_list = system.gpus()
    hint = system.gpu_present_hint()
    if not llama.get("available"):
        problems.append(f"llama-cpp-python cannot be imported: {llama.get('error')}")
    elif hint in GPU_CMAKE and not llama.get("gpu_offload"):
        llama["enable_gpu"] = gpu_install_hint(hint)
        problems.append(
            f"a {hint} GPU is present but this llama.cpp build cannot offload to it; "
            f"run {llama['enable_gpu']}"
        )
    sandbox = sandbox_status(settings.sandbox.level)
    if sandbox["level"] == "unavailable":
        problems.append(sandbox["reason"])
    if sandbox["level"] == "none":
        problems.append("no shell sandbox: every Bash command will need your approval")
    as_root = hasattr(os, "geteuid") and os.geteuid() == 0
    if as_root:
        problems.append("FrogDesk is running as root: a sandbox escape would have root rights")
    toolchain = toolchain_status(sandbox["level"], settings)
    problems += toolchain.get("refused", [])
    ram = system.memory()
    endpoint = settings.hub.hf_endpoint or os.environ.get("HF_ENDPOINT") or DEFAULT_HUB
    return DoctorReport(
        frogdesk=__version__,
        python=sys.version.split()[0],
        platform=f"{platform.system()} {platform.release()} {platform.machine()}",
        packages=package_versions(),
        llama=llama,
        cpu={"logical": system.logical_cpus(), "physical": system.physical_cores()},
        memory={"total": ram.total, "available": ram.available},
        gpus=[asdict(gpu) for gpu in gpu_list],
        sandbox=sandbox,
        paths={
            "config_file": str(config_file),
            "data_dir": str(paths.data_dir),
            "models_dir": str(paths.models_dir),
            "sessions_dir": str(paths.sessions_dir),
            "worktrees_dir": str(paths.worktrees_dir),
            "cache_dir": str(paths.cache_dir),
            "hf_cache": str(hf_cache_dir()),
            "log_file": str(paths.log_file),
        },
        config=config_info,
        hub=hub_status(endpoint, timeout=hub_timeout),
        running_as_root=as_root,
        problems=problems,
        toolchain=toolchain,
        saved_states=asdict(states_on_disk(paths.sessions_dir)),
        shared_openings=dict(
            zip(("count", "total"), openings_on_disk(paths.openings_dir), strict=True)
        ),
    )


def format_text(report: DoctorReport) -> str:
    """The report as aligned lines for a terminal."""
    llama = report.llama
    if llama.get("available"):
        offload = "yes" if llama.get("gpu_offload") else "no (CPU-only build)"
        llama_line = f"llama.cpp        GPU offload: {offload}"
    else:
        llama_line = f"llama.cpp        unavailable: {llama.get('error')}"
    gpu_lines = [
        f"gpu              {g['name']}: {gib(g['free'])} free of {gib(g['total'])}"
        for g in report.gpus
    ] or ["gpu              none found"]
    hub = report.hub
    hub_line = (
        f"hub              {hub['endpoint']} answers (HTTP {hub['status']})"
        if hub["reachable"]
        else f"hub              {hub['endpoint']} unreachable (offline is fine for local models): {hub.get('error')}"
    )
    config_state = "ok" if report.config.get("valid") else f"INVALID: {report.config.get('error')}"
    lines = [
        f"frogdesk         {report.frogdesk}",
        f"python           {report.python} on {report.platform}",
        "packages         " + ", ".join(f"{k} {v}" for k, v in report.packages.items()),
        llama_line,
        f"cpu              {report.cpu['physical']} physical cores, {report.cpu['logical']} threads",
        f"memory           {gib(report.memory['available'])} available of {gib(report.memory['total'])}",
        *gpu_lines,
        f"sandbox          {report.sandbox['level']}: {report.sandbox['reason']}",
        landlock_line(report.sandbox["landlock"]),
        *toolchain_lines(report.toolchain),
        f"config           {report.paths['config_file']} ({'exists' if report.config['exists'] else 'not created yet'}, {config_state})",
        f"data             {report.paths['data_dir']}",
        f"models           {report.paths['hf_cache']} (the Hugging Face cache); imported: {report.paths['models_dir']}",
        f"saved states     {gib(report.saved_states.get('total', 0))} in {report.saved_states.get('count', 0)} sessions (cap: saved_state_max_bytes)",
        f"shared openings  {gib(report.shared_openings.get('total', 0))} in {report.shared_openings.get('count', 0)} files (the newest {OPENINGS_KEPT} kept)",
        f"log              {report.paths['log_file']} (huggingface_hub and llama.cpp messages)",
        hub_line,
    ]
    if report.problems:
        lines.append("")
        lines.extend(f"! {problem}" for problem in report.problems)
    return "\n".join(lines)
