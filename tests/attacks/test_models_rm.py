"""`frogdesk models rm` removes only files inside the models folder, decided on the real path."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from frogdesk.cli import main
from frogdesk.paths import AppPaths


def _models() -> Path:
    folder = AppPaths.default().models_dir
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _rm(capsys: pytest.CaptureFixture[str], spec: str) -> tuple[int, str, str]:
    code = main(["models", "rm", spec])
    out, err = capsys.readouterr()
    return code, out, err


def test_dot_dot_out_of_the_models_folder_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    models = _models()
    victim = models.parent.parent / "victim.gguf"
    victim.write_bytes(b"GGUF the user's own model")
    digest = _digest(victim)
    spec = f"{models}/../../victim.gguf"
    # Positive control: the old, lexical check let this path in, and it names the victim.
    lexical = Path(spec).expanduser().absolute()
    assert lexical.is_relative_to(models.resolve())
    assert os.path.samefile(lexical, victim)

    code, _, err = _rm(capsys, spec)
    assert code == 2 and "only removes its own files" in err, err
    assert victim.exists() and _digest(victim) == digest


def test_a_linked_folder_leading_out_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    models = _models()
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    victim = outside / "victim.gguf"
    victim.write_bytes(b"GGUF keep me")
    (models / "escape").symlink_to(outside)
    spec = str(models / "escape" / "victim.gguf")
    assert Path(spec).absolute().is_relative_to(models.resolve())  # the old check's answer

    code, _, err = _rm(capsys, spec)
    assert code == 2 and "only removes its own files" in err, err
    assert victim.read_bytes() == b"GGUF keep me"
    assert (models / "escape").is_symlink()


def test_files_inside_the_folder_are_removed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Positive control: FrogDesk's own files go, also named through `..` that stays inside."""
    models = _models()
    (models / "sub").mkdir()
    own = models / "m.gguf"
    own.write_bytes(b"GGUF own")
    (models / "m.gguf.partial").write_bytes(b"part")
    code, out, err = _rm(capsys, str(own))
    assert code == 0, err
    assert not own.exists() and not (models / "m.gguf.partial").exists()
    assert f"removed {own.resolve()}" in out

    other = models / "n.gguf"
    other.write_bytes(b"GGUF other")
    code, _, err = _rm(capsys, f"{models}/sub/../n.gguf")
    assert code == 0, err
    assert not other.exists()


def test_an_imported_link_is_removed_and_its_target_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    models = _models()
    source = tmp_path / "mine.gguf"
    source.write_bytes(b"GGUF the user's file")
    link = models / "mine.gguf"
    link.symlink_to(source)
    code, _, err = _rm(capsys, str(link))
    assert code == 0, err
    assert not link.is_symlink() and source.read_bytes() == b"GGUF the user's file"
