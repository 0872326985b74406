"""Which Hub repo the quant switch offers: the session's model's repo, from a spec or from the
Hugging Face cache folder a file sits in, else the configured model's."""

from __future__ import annotations

from pathlib import Path

import pytest

from frogdesk import cli
from frogdesk.config import Settings
from frogdesk.core.chooser import session_repo
from frogdesk.paths import AppPaths
from tests.support.hub_server import REPO, RunningHub


def test_the_session_repo_comes_from_its_spec_its_cache_folder_or_the_settings(
    hub: RunningHub, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    paths = AppPaths.default()
    other = Settings.of(model="someone/Other-GGUF:Q4_K_M")
    assert session_repo(f"{REPO}:Q8_0", other, paths) == REPO
    assert cli.main(["models", "pull", f"{REPO}:Q4_K_M", "--endpoint", hub.endpoint]) == 0
    pulled = Path(capsys.readouterr().out.strip())
    assert session_repo(str(pulled), other, paths) == REPO
    loose = tmp_path / "loose-Q4_0.gguf"
    assert session_repo(str(loose), other, paths) == "someone/Other-GGUF"
    assert session_repo(str(loose), Settings.of(model=str(loose)), paths) == ""
    assert session_repo("", other, paths) == "someone/Other-GGUF"
