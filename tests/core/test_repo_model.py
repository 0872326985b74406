"""A repository pins its model in `.frogdesk.toml`: only `model` is taken from that file
(a clone never sets the sandbox), it is read as outside input, and the user's own choice wins."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from frogdesk import cli
from frogdesk.config import Settings
from frogdesk.core.repo_model import REPO_CONFIG, repository_model, with_repository_model
from tests.support.scripted import make_repo


def test_only_the_model_is_taken_from_the_repositorys_file(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    (repo / REPO_CONFIG).write_text(
        'model = "team/Model-GGUF:Q4_K_M"\nsandbox = "none"\nbash_approval = "never"\n'
    )
    spec, line = repository_model(repo)
    assert spec == "team/Model-GGUF:Q4_K_M"
    assert "bash_approval, sandbox ignored" in line
    settings = with_repository_model(Settings(), repo, tmp_path / "absent.toml")
    assert settings.model == "team/Model-GGUF:Q4_K_M"
    assert (settings.sandbox.level, settings.sandbox.bash_approval) == ("auto", "auto")


def test_the_users_own_choice_wins(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    (repo / REPO_CONFIG).write_text('model = "team/Model-GGUF:Q4_K_M"\n')
    mine = Settings.of(model="/models/mine.gguf")
    assert with_repository_model(mine, repo, tmp_path / "absent.toml") == mine
    config = tmp_path / "config.toml"
    config.write_text('model = "bartowski/FrogNano-4B-2609-GGUF:Q4_K_M"\n')  # the default, pinned
    assert with_repository_model(Settings(), repo, config).model == Settings().model


def test_a_link_a_large_file_or_bad_toml_pins_nothing(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    elsewhere = tmp_path / "elsewhere.toml"
    elsewhere.write_text('model = "team/Model-GGUF:Q4_K_M"\n')
    # The control: the same text as the repository's own file is read.
    (repo / REPO_CONFIG).write_text(elsewhere.read_text())
    assert repository_model(repo)[0] == "team/Model-GGUF:Q4_K_M"
    (repo / REPO_CONFIG).unlink()
    os.symlink(elsewhere, repo / REPO_CONFIG)
    spec, line = repository_model(repo)
    assert spec is None and "not read" in line
    (repo / REPO_CONFIG).unlink()
    (repo / REPO_CONFIG).write_text('model = "x"\n' + "#" * 70_000 + "\n")
    assert repository_model(repo) == (
        None,
        f"{repo / REPO_CONFIG}: not a small regular file; no model pinned by the repository",
    )
    (repo / REPO_CONFIG).write_text("model = \n")
    spec, line = repository_model(repo)
    assert spec is None and "not valid TOML" in line
    (repo / REPO_CONFIG).unlink()
    assert repository_model(repo) == (None, "")


def test_frogdesk_run_uses_the_pin_and_a_flag_overrides_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path)
    pinned = tmp_path / "pinned" / "Pinned-Q4_K_M.gguf"
    (repo / REPO_CONFIG).write_text(f'model = "{pinned}"\n')
    code = cli.main(["run", "fix it", "--repo", str(repo), "--backend", "llama"])
    assert code == 2
    err = capsys.readouterr().err
    assert f"no such model file: {pinned}" in err and f"pins the model {pinned}" in err
    flag = tmp_path / "flag" / "Flag-Q4_K_M.gguf"
    code = cli.main(
        ["run", "fix it", "--repo", str(repo), "--backend", "llama", "--model", str(flag)]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert f"no such model file: {flag}" in err and str(pinned) not in err.split("no such")[1]


def test_the_tui_starts_on_the_pin(tmp_path: Path) -> None:
    from frogdesk.models.errors import ModelError
    from frogdesk.tui.launch import build_app

    repo = make_repo(tmp_path)
    pinned = tmp_path / "pinned" / "Pinned-Q4_K_M.gguf"
    (repo / REPO_CONFIG).write_text(f'model = "{pinned}"\n')
    with pytest.raises(ModelError, match=f"no such model file: {pinned}"):
        build_app(repo, Settings(), tmp_path / "absent.toml")
    # The control: without the file the default is looked for instead (and is not refused).
    (repo / REPO_CONFIG).unlink()
    assert build_app(repo, Settings(), tmp_path / "absent.toml") is not None
