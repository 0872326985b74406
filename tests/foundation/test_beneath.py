"""Opening beneath a folder: the kernel's openat2 and the by-hand walk refuse the same ways out."""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from frogdesk import beneath
from frogdesk.errors import EscapeError


@pytest.fixture(params=["openat2", "walk"])
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Each test once with the kernel's openat2 and once with the walk older kernels get."""
    if request.param == "openat2" and not beneath.has_openat2():
        pytest.skip("this kernel has no openat2")
    if request.param == "walk":
        monkeypatch.setitem(beneath._state, "openat2", False)
    yield request.param


@pytest.fixture
def tree(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """root/ with a folder, links inside and out, and a secret beside it."""
    root = tmp_path / "root"
    (root / "d").mkdir(parents=True)
    (root / "d" / "f").write_text("inside")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "secret").write_text("SECRET")
    (root / "in").symlink_to("d")
    (root / "in-file").symlink_to("d/f")
    (root / "up").symlink_to("../out")
    (root / "abs").symlink_to(tmp_path / "out")
    (root / "loop").symlink_to("loop")
    fd = beneath.open_root(root)
    yield fd, tmp_path
    os.close(fd)


def _read(root: int, path: str, *, follow_links: bool = True) -> str:
    with beneath.opened(beneath.open_beneath(root, path, follow_links=follow_links)) as fd:
        return os.read(fd, 100).decode()


@pytest.mark.parametrize("path", ["d/f", "in/f", "in-file", "d/../d/f", "./d//f"])
def test_paths_that_stay_inside_open(mode: str, tree: tuple[int, Path], path: str) -> None:
    assert _read(tree[0], path) == "inside"


@pytest.mark.parametrize(
    "path", ["up/secret", "abs/secret", "../out/secret", "d/../../out/secret", "/etc/hostname"]
)
def test_ways_out_are_refused(mode: str, tree: tuple[int, Path], path: str) -> None:
    # Positive control: each of these names the secret when resolved the ordinary way.
    if not path.startswith("/"):
        assert (tree[1] / "root" / path).read_text() == "SECRET"
    with pytest.raises(EscapeError):
        beneath.open_beneath(tree[0], path)


def test_no_links_at_all_when_asked(mode: str, tree: tuple[int, Path]) -> None:
    assert _read(tree[0], "d/f", follow_links=False) == "inside"
    for path in ("in/f", "in-file"):
        with pytest.raises(EscapeError):
            beneath.open_beneath(tree[0], path, follow_links=False)


def test_a_link_loop_is_an_error_not_a_hang(mode: str, tree: tuple[int, Path]) -> None:
    with pytest.raises(OSError) as caught:
        beneath.open_beneath(tree[0], "loop")
    assert caught.value.errno == errno.ELOOP


def test_folders_are_made_beneath_and_never_through_a_link_out(
    mode: str, tree: tuple[int, Path]
) -> None:
    root, top = tree
    with beneath.opened(beneath.makedirs_beneath(root, "x/y/z")) as fd:
        assert beneath.relative_to_root(root, fd) == Path("x/y/z")
    with pytest.raises(EscapeError):
        beneath.makedirs_beneath(root, "up/planted")
    assert not (top / "out" / "planted").exists()


def test_the_parent_is_opened_and_the_last_name_left_alone(
    mode: str, tree: tuple[int, Path]
) -> None:
    root = tree[0]
    fd, name = beneath.open_parent(root, "in/new")
    with beneath.opened(fd):
        assert name == "new"
        assert beneath.relative_to_root(root, fd) == Path("d")
    fd, name = beneath.open_parent(root, "up")
    with beneath.opened(fd):
        assert name == "up"  # the link itself, in the root: unlinkat would remove the link
    for bad in ("", "d/..", ".."):
        with pytest.raises(ValueError):
            beneath.split_parent(bad)


def test_a_nul_is_refused(mode: str, tree: tuple[int, Path]) -> None:
    with pytest.raises(ValueError):
        beneath.open_beneath(tree[0], "d/f\x00../../out/secret")
