"""`frogdesk models` end to end against the stand-in Hub, the HF cache layout and imported files."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from frogdesk import cli, config
from frogdesk.models.resolve import resolve_local
from frogdesk.paths import AppPaths
from tests.support.hub_server import PREFIX, REPO, RunningHub


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_list_repo_json(hub: RunningHub, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "models", "--endpoint", hub.endpoint, "list", REPO, "--json")
    assert code == 0
    rows = {r["file"]: r for r in json.loads(out)["models"]}
    q4 = rows[f"{PREFIX}-Q4_K_M.gguf"]
    assert q4["quant"] == "Q4_K_M" and q4["bits"] == 4.85 and q4["on_disk"] is None
    assert q4["size"] == len(hub.state.repos[REPO].files[f"{PREFIX}-Q4_K_M.gguf"])
    assert q4["fit"] == "CPU~" and q4["fit_basis"] == "size"
    assert q4["warnings"] == [
        "unvalidated-quant",
        "unvalidated-platform",
        "no-quality-eval",
        "license-ambiguous",
    ]
    assert "low-bits" in rows[f"{PREFIX}-Q2_K.gguf"]["warnings"]
    assert rows[f"mmproj-{PREFIX}-f16.gguf"]["warnings"] == ["vision-refused"]
    assert rows[f"{PREFIX}-Q8_0/{PREFIX}-Q8_0.gguf"]["parts"] == 2


def test_pull_info_list_rm(hub: RunningHub, capsys: pytest.CaptureFixture[str]) -> None:
    spec = f"{REPO}:Q4_K_M"
    code, out, err = _run(capsys, "models", "pull", spec, "--endpoint", hub.endpoint)
    assert code == 0, err
    path = Path(out.strip())
    assert path.read_bytes() == hub.state.repos[REPO].files[f"{PREFIX}-Q4_K_M.gguf"]
    assert "ETA" in err and "[license-ambiguous]" in err and "[unvalidated-quant]" in err
    settings = config.load(AppPaths.default().config_file, environ={})
    assert any(a.startswith("license-ambiguous:") for a in settings.tui.acknowledged)

    code, _, err = _run(capsys, "models", "pull", spec, "--endpoint", hub.endpoint)
    assert code == 0 and "license-ambiguous" not in err  # shown once per model

    assert resolve_local(spec, settings) == path
    code, out, _ = _run(capsys, "models", "info", spec, "--json", "--context", "2048")
    assert code == 0
    info = json.loads(out)
    assert info["metadata"]["architecture"] == "qwen35"
    assert info["metadata"]["full_attention_layers"] == 1
    assert info["estimate"]["context"] == 2048
    assert info["plan"]["offload"] in {"none", "all", "some"}

    code, out, _ = _run(capsys, "models", "--endpoint", hub.endpoint, "list", REPO, "--json")
    rows = {r["file"]: r for r in json.loads(out)["models"]}
    assert rows[f"{PREFIX}-Q4_K_M.gguf"]["on_disk"] == str(path)
    assert rows[f"{PREFIX}-Q4_K_M.gguf"]["fit_basis"] == "metadata"
    assert rows[f"{PREFIX}-Q4_0.gguf"]["fit_basis"] == "sibling"

    code, out, _ = _run(capsys, "models", "list")
    assert code == 0 and f"{PREFIX}-Q4_K_M.gguf" in out

    code, out, _ = _run(capsys, "models", "rm", spec)
    assert code == 0 and not path.exists()
    code, _, err = _run(capsys, "models", "info", spec)
    assert code == 2 and f"frogdesk models pull {spec}" in err


def test_pull_checksum_failure_exits_with_a_clear_message(
    hub: RunningHub, capsys: pytest.CaptureFixture[str]
) -> None:
    hub.state.corrupt.add(f"{PREFIX}-Q4_0.gguf")
    code, out, err = _run(capsys, "models", "pull", f"{REPO}:Q4_0", "--endpoint", hub.endpoint)
    assert code == 2 and out == ""
    assert "checksum mismatch" in err and "Traceback" not in err
    assert not list(AppPaths.default().models_dir.rglob("*.gguf*"))
    repo_cache = Path(os.environ["HF_HUB_CACHE"]) / f"models--{REPO.replace('/', '--')}"
    assert not [p for p in repo_cache.rglob("*") if p.is_file()]  # no blob, no partial, no link


def test_import_links_and_copies(
    model_quants: dict[str, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    source = tmp_path / "my-Q8_0.gguf"
    source.write_bytes(model_quants["Q8_0"].read_bytes())
    code, out, _ = _run(capsys, "models", "import", str(source))
    linked = Path(out.strip())
    assert code == 0 and linked.is_symlink() and linked.resolve() == source.resolve()
    code, out, _ = _run(capsys, "models", "info", str(linked))
    assert code == 0 and "qwen35" in out
    code, out, _ = _run(capsys, "models", "rm", str(linked))
    assert code == 0 and not linked.is_symlink() and source.exists()  # the user's file stays
    code, out, _ = _run(capsys, "models", "import", str(source), "--copy")
    copied = Path(out.strip())
    assert not copied.is_symlink() and copied.read_bytes() == source.read_bytes()


def test_import_refuses_non_gguf_and_projectors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = tmp_path / "notes.gguf"
    text.write_text("hello")
    code, _, err = _run(capsys, "models", "import", str(text))
    assert code == 2 and "not a GGUF" in err
    proj = tmp_path / "mmproj-x-f16.gguf"
    proj.write_bytes(b"GGUF" + bytes(64))
    code, _, err = _run(capsys, "models", "import", str(proj))
    assert code == 2 and "vision" in err


def test_rm_refuses_files_outside_frogdesk(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    victim = tmp_path / "keep.gguf"
    victim.write_bytes(b"GGUF")
    code, _, err = _run(capsys, "models", "rm", str(victim))
    assert code == 2 and victim.exists() and "only removes its own files" in err


def _hf_cache_model(root: Path, repo: str, name: str, data: bytes) -> Path:
    """Lay a file out as huggingface_hub's cache does: blobs, snapshot symlinks, refs."""
    folder = root / ("models--" + repo.replace("/", "--"))
    commit = "a" * 40
    blob = folder / "blobs" / hashlib.sha256(data).hexdigest()
    blob.parent.mkdir(parents=True)
    blob.write_bytes(data)
    link = folder / "snapshots" / commit / name
    link.parent.mkdir(parents=True)
    link.symlink_to(os.path.relpath(blob, link.parent))
    (folder / "refs").mkdir()
    (folder / "refs" / "main").write_text(commit)
    return link


def test_models_in_the_hf_cache_are_found_and_removed_cleanly(
    model_quants: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    cache = tmp_path / "hf" / "hub"
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    link = _hf_cache_model(
        cache,
        "someone/FrogNano-4B-2609-GGUF",
        "FrogNano-4B-2609-Q4_0.gguf",
        model_quants["Q4_0"].read_bytes(),
    )
    settings = config.load(AppPaths.default().config_file, environ={})
    assert resolve_local("someone/FrogNano-4B-2609-GGUF:Q4_0", settings) == link
    code, out, _ = _run(capsys, "models", "list", "--json")
    rows = json.loads(out)["models"]
    assert [r["on_disk"] for r in rows] == [str(link)]
    blob = link.resolve()
    code, out, err = _run(capsys, "models", "rm", "someone/FrogNano-4B-2609-GGUF:Q4_0")
    assert code == 0, err
    assert f"removed {link}" in out and not link.is_symlink() and not blob.exists()
    assert not (cache / "models--someone--FrogNano-4B-2609-GGUF" / "refs" / "main").exists()


def test_hf_endpoint_environment_is_honoured(
    hub: RunningHub, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
    code, out, _ = _run(capsys, "models", "list", REPO, "--json")
    assert code == 0 and json.loads(out)["source"] == hub.endpoint


def test_list_offline_uses_the_saved_listing(
    hub: RunningHub, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _run(capsys, "models", "--endpoint", hub.endpoint, "list", REPO)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    served = len(hub.state.requests)
    code, out, err = _run(capsys, "models", "--endpoint", hub.endpoint, "list", REPO)
    assert code == 0 and f"{PREFIX}-Q4_K_M.gguf" in out and "saved listing" in err
    assert len(hub.state.requests) == served


def test_pull_without_spec_takes_the_model_setting(
    hub: RunningHub, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("FROGDESK_MODEL", f"{REPO}:Q2_K")
    code, out, err = _run(capsys, "models", "pull", "--endpoint", hub.endpoint)
    assert code == 0, err
    assert Path(out.strip()).name == f"{PREFIX}-Q2_K.gguf"
    assert "[low-bits]" in err
