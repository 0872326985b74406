"""Which folders a sandboxed command may not see: the home, the socket folders, the user's
repository and FrogDesk's own folders, each once and only the outermost of nested ones
(Landlock's read rules are built from the list). The shells' tests run the result for real."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from frogdesk.paths import AppPaths
from frogdesk.sandbox.confine import readable_roots
from frogdesk.sandbox.policy import (
    frogdesk_folders,
    hidden_folders,
    hub_token_files,
    outermost,
    outside_hidden,
)
from frogdesk.scratch import scratch_root


def test_frogdesk_folders_outside_the_home_are_hidden(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("FROGDESK_HOME", str(tmp_path / "portable"))
    paths = AppPaths.default()
    for folder in (paths.config_dir, paths.data_dir, paths.cache_dir):
        folder.mkdir(parents=True)
    hidden = hidden_folders(home, {})
    for folder in (paths.config_dir, paths.data_dir, paths.cache_dir):
        assert folder.resolve() in hidden, hidden
    assert paths.state_dir is not None and paths.state_dir not in hidden  # not made yet
    # control: with no FrogDesk folder given, the same call hides none of them
    assert not set(hidden_folders(home, {}, own=())) & set(frogdesk_folders())


def test_frogdesk_folders_inside_the_home_go_with_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    data = home / ".local" / "share" / "frogdesk"
    data.mkdir(parents=True)
    assert home in hidden_folders(home, {}, own=(data,))
    assert data not in hidden_folders(home, {}, own=(data,))


def test_a_folder_that_is_a_link_is_hidden_where_it_lies(tmp_path: Path) -> None:
    real = tmp_path / "disk" / "frogdesk-data"
    real.mkdir(parents=True)
    (tmp_path / "data-link").symlink_to(real)
    home = tmp_path / "home"
    home.mkdir()
    assert real in hidden_folders(home, {}, own=(tmp_path / "data-link",))


def test_only_the_outermost_of_nested_folders_is_kept() -> None:
    a, b, c = Path("/srv/a"), Path("/srv/a/b"), Path("/srv/c")
    assert outermost([b, a, c, a]) == [a, c]
    assert outermost([c]) == [c]


def test_readable_roots_of_the_kept_list_cover_nothing_hidden(tmp_path: Path) -> None:
    """Nested hidden folders, inner first, would leave the outer one's other entries readable:
    the control shows the leak, the outermost list does not have it."""
    outer = tmp_path / "frogdesk"
    inner = outer / "data"
    (inner / "worktrees").mkdir(parents=True)
    (outer / "cache").mkdir()
    leaked = readable_roots([inner, outer], tmp_path)
    assert outer / "cache" in leaked  # the control: the leak is real
    roots = readable_roots(outermost([inner, outer]), tmp_path)
    assert not any(r == outer or r.is_relative_to(outer) for r in roots), roots


def test_hub_token_files_are_found_wherever_the_environment_puts_them(tmp_path: Path) -> None:
    home, hf, elsewhere = tmp_path / "home", tmp_path / "hf", tmp_path / "tok"
    (home / ".cache" / "huggingface").mkdir(parents=True)
    hf.mkdir()
    (home / ".cache" / "huggingface" / "token").write_text("a")
    (hf / "token").write_text("b")
    (hf / "stored_tokens").write_text("c")
    elsewhere.write_text("d")
    env = {"HF_HOME": str(hf), "HF_TOKEN_PATH": str(elsewhere)}
    found = hub_token_files(env, home)
    assert set(found) == {
        hf / "token",
        hf / "stored_tokens",
        elsewhere,
        home / ".cache" / "huggingface" / "token",
    }
    # the home's own token is masked by the hidden home already: only the others stay
    kept = outside_hidden(found, [home], [])
    assert set(kept) == {hf / "token", hf / "stored_tokens", elsewhere}
    # control: with nothing set, only the home's default place is looked at
    assert hub_token_files({}, home) == (home / ".cache" / "huggingface" / "token",)


def test_the_short_lived_host_folders_are_hidden(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    root = scratch_root()
    assert root.parent == tmp_path / "tmp"
    assert root.resolve() not in hidden_folders(home, {})  # control: not made yet
    root.mkdir(parents=True, mode=0o700)
    assert root.resolve() in hidden_folders(home, {})
