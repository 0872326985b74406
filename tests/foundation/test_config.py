"""Settings: defaults, TOML file, environment and flag overrides, and clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from frogdesk import config


def test_defaults_are_the_vendor_budgets() -> None:
    settings = config.Settings()
    assert settings.model == "bartowski/FrogNano-4B-2609-GGUF:Q4_K_M"
    assert (settings.max_steps, settings.max_context_tokens, settings.max_tokens_per_turn) == (
        150,
        131072,
        8192,
    )
    assert settings.temperature == 0.6
    assert settings.sandbox == "auto"


def test_every_option_is_documented() -> None:
    docs = config.option_docs()
    fields = set(config.Settings.__dataclass_fields__)
    assert set(docs) == fields
    assert all(doc.strip() for doc in docs.values())


def test_precedence_file_then_env_then_flags(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('max_steps = 40\ntemperature = 1\ntheme = "frogdesk-light"\n')
    env = {"FROGDESK_MAX_STEPS": "60", "FROGDESK_FLASH_ATTN": "yes", "FROGDESK_HOME": "/x"}
    settings = config.load(path, environ=env, overrides={"theme": "frogdesk-dark", "seed": None})
    assert settings.max_steps == 60
    assert settings.temperature == 1.0 and isinstance(settings.temperature, float)
    assert settings.flash_attn == "on" and settings.flash_attn_choice is True
    assert settings.theme == "frogdesk-dark"
    assert settings.seed == -1


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
    assert config.load(path, environ={}).theme == "frogdesk-light"
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
    assert settings.flash_attn == word
    assert settings.flash_attn_choice is choice
