"""Settings: defaults, TOML file, environment and flag overrides, and clear errors."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from frogdesk import config
from frogdesk.logfile import listen_for_notices, route_library_logs


def test_defaults_are_the_vendor_budgets() -> None:
    settings = config.Settings()
    assert settings.model == "bartowski/FrogNano-4B-2609-GGUF:Q4_K_M"
    assert (
        settings.loop.max_steps,
        settings.loop.max_context_tokens,
        settings.loop.max_tokens_per_turn,
    ) == (
        150,
        131072,
        8192,
    )
    assert settings.loop.temperature == 0.6
    assert settings.sandbox.level == "auto"


def test_every_option_is_documented() -> None:
    docs = config.option_docs()
    fields = set(config.OPTIONS)
    assert set(docs) == fields
    assert all(doc.strip() for doc in docs.values())


def test_precedence_file_then_env_then_flags(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('max_steps = 40\ntemperature = 1\ntheme = "frogdesk-light"\n')
    env = {"FROGDESK_MAX_STEPS": "60", "FROGDESK_FLASH_ATTN": "yes", "FROGDESK_HOME": "/x"}
    settings = config.load(path, environ=env, overrides={"theme": "frogdesk-dark", "seed": None})
    assert settings.loop.max_steps == 60
    assert settings.loop.temperature == 1.0 and isinstance(settings.loop.temperature, float)
    assert settings.engine.flash_attn == "on" and settings.engine.flash_attn_choice is True
    assert settings.tui.theme == "frogdesk-dark"
    assert settings.loop.seed == -1


def test_missing_file_gives_defaults(tmp_path: Path) -> None:
    assert config.load(tmp_path / "absent.toml", environ={}) == config.Settings()


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("max_stpes = 3\n", "unknown key 'max_stpes'"),
        ('max_steps = "many"\n', "'max_steps' must be an integer"),
        ("flash_attn = 1\n", "'flash_attn' must be a string"),
        ('flash_attn = "maybe"\n', "'flash_attn' must be one of auto, on, off"),
        ("aliases = 3\n", "'aliases' must be a table of strings"),
        ("max_steps = \n", "invalid TOML"),
        ("temperature = -3\n", "'temperature' must be at least 0"),
        ("max_steps = 0\n", "'max_steps' must be at least 1"),
        ('sandbox = "docker"\n', "'sandbox' must be one of auto, bwrap, landlock, none"),
        ('kv_cache_type = "q3"\n', "'kv_cache_type' must be one of"),
    ],
)
def test_bad_file_names_file_and_key(tmp_path: Path, text: str, fragment: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(text)
    with pytest.raises(config.ConfigError) as info:
        config.load(path, environ={})
    message = str(info.value)
    assert str(path) in message
    assert fragment in message
    assert "\n" not in message


def test_bad_environment_value_names_the_variable(tmp_path: Path) -> None:
    with pytest.raises(config.ConfigError, match="FROGDESK_MAX_STEPS"):
        config.load(tmp_path / "c.toml", environ={"FROGDESK_MAX_STEPS": "lots"})
    with pytest.raises(config.ConfigError, match=r"FROGDESK_SANDBOX.*one of"):
        config.load(tmp_path / "c.toml", environ={"FROGDESK_SANDBOX": "off"})


def test_flags_are_checked_too(tmp_path: Path) -> None:
    with pytest.raises(config.ConfigError, match="flag: 'temperature' must be at least 0"):
        config.load(tmp_path / "c.toml", environ={}, overrides={"temperature": -1.0})


def test_save_option_keeps_comments(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("# my settings\nmax_steps = 80  # enough for me\n")
    config.save_option(path, "theme", "frogdesk-light")
    text = path.read_text()
    assert "# my settings" in text and "# enough for me" in text
    assert config.load(path, environ={}).tui.theme == "frogdesk-light"
    with pytest.raises(config.ConfigError):
        config.save_option(path, "nonsense", 1)
    assert "nonsense" not in path.read_text()


@pytest.mark.parametrize(
    ("text", "env", "word", "choice"),
    [
        ("", None, "auto", None),
        ("flash_attn = true\n", None, "on", True),
        ("flash_attn = false\n", None, "off", False),
        ('flash_attn = "off"\n', None, "off", False),
        ("", "0", "off", False),
        ("", "on", "on", True),
        ("flash_attn = false\n", "auto", "auto", None),
    ],
)
def test_flash_attention_is_auto_on_or_off_and_reads_old_booleans(
    tmp_path: Path, text: str, env: str | None, word: str, choice: bool | None
) -> None:
    path = tmp_path / "config.toml"
    path.write_text(text)
    environ = {} if env is None else {"FROGDESK_FLASH_ATTN": env}
    settings = config.load(path, environ=environ)
    assert settings.engine.flash_attn == word
    assert settings.engine.flash_attn_choice is choice


def test_a_sectioned_file_reads_each_option_from_its_section(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        'model = "a.gguf"\n'
        "[engine]\nthreads = 4\n"
        '[sandbox]\nlevel = "bwrap"\ndisk_reserve = 0\n'
        '[tui]\ntheme = "frogdesk-light"\nkeys = { review = "ctrl+r" }\n'
        "[loop]\nmax_steps = 20\n"
        '[hub]\nhf_endpoint = "http://127.0.0.1:1"\n'
    )
    settings = config.load(path, environ={})
    assert (settings.model, settings.engine.threads, settings.sandbox.level) == (
        "a.gguf",
        4,
        "bwrap",
    )
    assert settings.sandbox.disk_reserve == 0 and settings.tui.keys == {"review": "ctrl+r"}
    assert (settings.tui.theme, settings.loop.max_steps) == ("frogdesk-light", 20)
    assert settings.hub.hf_endpoint == "http://127.0.0.1:1"


def test_every_option_has_one_place_and_every_section_is_used() -> None:
    places = list(config.PLACES.values())
    assert len(set(places)) == len(places)
    assert {section for section, _ in places} == {None, *config.SECTIONS}
    assert config.shown_key("sandbox_tmpfs_size") == "[sandbox] tmpfs_size"
    assert config.shown_key("model") == "model"


def test_old_flat_keys_still_read_with_one_notice(tmp_path: Path) -> None:
    heard: list[str] = []
    route_library_logs(tmp_path / "frogdesk.log")  # as every command starts
    stop = listen_for_notices(heard.append)
    try:
        path = tmp_path / "config.toml"
        path.write_text('threads = 3\nsandbox = "none"\n[engine]\ncontext_size = 4096\n')
        first = config.load(path, environ={})
        again = config.load(path, environ={})
        assert (first.engine.threads, first.sandbox.level, first.engine.context_size) == (
            3,
            "none",
            4096,
        )
        assert again == first
        [notice] = heard
        assert "threads -> [engine] threads" in notice and "sandbox -> [sandbox] level" in notice
        # The control: a file in sections says nothing.
        fresh = tmp_path / "fresh.toml"
        fresh.write_text("[engine]\nthreads = 3\n")
        assert config.load(fresh, environ={}).engine.threads == 3
        assert heard == [notice]
    finally:
        stop()


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("[engine]\nthreds = 2\n", "unknown key 'threds' in [engine]"),
        ('[engine]\nthreads = "two"\n', "'[engine] threads' must be an integer"),
        ('[sandbox]\nlevel = "docker"\n', "'[sandbox] level' must be one of auto, bwrap"),
        ("[loop]\ntheme = 1\n", "unknown key 'theme' in [loop]"),
        ("[loop]\nmax_steps = 0\n", "'[loop] max_steps' must be at least 1"),
    ],
)
def test_a_bad_sectioned_key_is_named_as_written(tmp_path: Path, text: str, fragment: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(text)
    with pytest.raises(config.ConfigError) as info:
        config.load(path, environ={})
    assert fragment in str(info.value) and str(path) in str(info.value)


def test_saving_writes_the_section_and_moves_an_old_flat_key(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('# my settings\nmodel = "m.gguf"\ntheme = "frogdesk-dark"\nthreads = 2\n')
    config.save_option(path, "theme", "frogdesk-light")
    config.save_option(path, "sandbox", "landlock")
    config.save_option(path, "model", "n.gguf")
    text = path.read_text()
    assert "# my settings" in text
    assert "\ntheme" not in text.split("[tui]")[0]  # the flat spelling is gone
    settings = config.load(path, environ={})
    assert (
        settings.tui.theme,
        settings.sandbox.level,
        settings.model,
        settings.engine.threads,
    ) == (
        "frogdesk-light",
        "landlock",
        "n.gguf",
        2,
    )
    assert "[tui]" in text and 'level = "landlock"' in text


def test_the_readmes_example_file_loads(tmp_path: Path) -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    block = readme.split("The file has a table per part", 1)[1].split("```toml\n", 1)[1]
    path = tmp_path / "config.toml"
    path.write_text(block.split("```", 1)[0])
    assert config.load(path, environ={}) == config.Settings()
    for section in config.SECTIONS:
        assert f"[{section}]" in block
    named = set(re.findall(r"[a-z_]+", block))
    missing = [key for section, key in config.PLACES.values() if section and key not in named]
    assert missing == []
