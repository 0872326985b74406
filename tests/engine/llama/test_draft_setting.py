"""The `speculative` setting from the config file to the loaded backend (the path both the
TUI and `frogdesk run` load through), and each reply's drafts counted per drafter."""

from __future__ import annotations

from pathlib import Path

import pytest

from frogdesk import config
from frogdesk.core.model_ops import load_backend
from frogdesk.engine.chat import GenerationSettings, Message, Reply
from frogdesk.engine.llama.backend import LlamaBackend
from tests.engine.llama.test_mtp import AlwaysVerify, AlwaysVerifyChoice

pytestmark = pytest.mark.llama

START = [Message("user", "Write a short function that adds two numbers.")]


def reply(backend: LlamaBackend) -> Reply:
    out = Reply()
    settings = GenerationSettings(max_tokens=24, temperature=0.0, seed=1, enable_thinking=False)
    for event in backend.generate(START, [], settings):
        out.add(event)
    assert out.usage is not None
    return out


def settings_from_file(tmp_path: Path, text: str) -> config.Settings:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return config.load(path, overrides={"context_size": 2048, "threads": 2})


@pytest.mark.parametrize("on", [False, True])
def test_the_config_setting_turns_drafting_off_and_on(
    mtp_gguf: Path, tmp_path: Path, on: bool
) -> None:
    settings = settings_from_file(tmp_path, f"speculative = {str(on).lower()}\n")
    assert settings.engine.speculative is on
    backend = load_backend(settings, mtp_gguf)
    assert isinstance(backend, LlamaBackend)
    try:
        assert backend.options.speculative is on
        assert backend.model.mtp_loaded is on
        assert backend.drafting.mtp_status == ("on" if on else "off: speculative decoding is off")
        usage = reply(backend).usage
        assert usage is not None
        if not on:
            assert (usage.drafted_tokens, usage.drafted_by, usage.accepted_by) == (0, {}, {})
    finally:
        backend.close()


def test_drafts_are_counted_per_drafter_in_the_usage(mtp_gguf: Path, tmp_path: Path) -> None:
    settings = settings_from_file(tmp_path, "")
    backend = load_backend(settings, mtp_gguf)
    assert isinstance(backend, LlamaBackend)
    try:
        assert backend.drafting.mtp is not None
        # every MTP proposal verified
        backend.drafting.drafter, backend.drafting.policy = backend.drafting.mtp, AlwaysVerify()
        usage = reply(backend).usage
        assert usage is not None and usage.drafted_tokens > 0
        assert usage.drafted_by == {"mtp": usage.drafted_tokens}
        assert usage.accepted_by == {"mtp": usage.accepted_tokens}
        # both drafters behind the choice: the counts split by drafter and add up
        choice = AlwaysVerifyChoice([backend.drafting.ngram, backend.drafting.mtp])
        backend.drafting.drafter, backend.drafting.policy = choice, choice
        usage = reply(backend).usage
        assert usage is not None
        assert set(usage.drafted_by) <= {"ngram", "mtp"} and usage.drafted_by
        assert sum(usage.drafted_by.values()) == usage.drafted_tokens
        assert sum(usage.accepted_by.values()) == usage.accepted_tokens
        assert all(0 <= usage.accepted_by[k] <= n for k, n in usage.drafted_by.items())
    finally:
        backend.close()
