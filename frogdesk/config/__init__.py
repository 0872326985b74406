"""Typed settings: defaults, a TOML file under the user config dir, FROGDESK_* env, flags.

Each section is its own dataclass in a module named for it (`engine.py` is `[engine]`),
with every field's type, bound and documentation beside it; `settings.py` puts them
together, `files.py` reads and writes them. The sections live here, below every package
that reads them, so that each package can take its own section without importing another.
"""

from frogdesk.config.engine import BackendName, EngineSettings, FlashAttn, KvCacheType
from frogdesk.config.errors import ConfigError
from frogdesk.config.files import (
    ENV_PREFIX,
    SWITCHES,
    load,
    read_env,
    read_file,
    save_option,
    validate,
)
from frogdesk.config.hub import HubSettings
from frogdesk.config.loop import (
    DEFAULT_MAX_CONTEXT_TOKENS,
    DEFAULT_MAX_STEPS,
    DEFAULT_MAX_TOKENS_PER_TURN,
    LoopSettings,
)
from frogdesk.config.sandbox import (
    APPROVAL_SETTINGS,
    DEFAULT_BASH_ALLOWLIST,
    ApprovalMode,
    SandboxLevel,
    SandboxSettings,
)
from frogdesk.config.settings import (
    CHOICES,
    DEFAULT_MODEL,
    MINIMUM,
    OPTIONS,
    PLACES,
    SECTIONS,
    Settings,
    option_docs,
    shown_key,
)
from frogdesk.config.tui import TuiSettings

__all__ = [
    "APPROVAL_SETTINGS",
    "CHOICES",
    "DEFAULT_BASH_ALLOWLIST",
    "DEFAULT_MAX_CONTEXT_TOKENS",
    "DEFAULT_MAX_STEPS",
    "DEFAULT_MAX_TOKENS_PER_TURN",
    "DEFAULT_MODEL",
    "ENV_PREFIX",
    "MINIMUM",
    "OPTIONS",
    "PLACES",
    "SECTIONS",
    "SWITCHES",
    "ApprovalMode",
    "BackendName",
    "ConfigError",
    "EngineSettings",
    "FlashAttn",
    "HubSettings",
    "KvCacheType",
    "LoopSettings",
    "SandboxLevel",
    "SandboxSettings",
    "Settings",
    "TuiSettings",
    "load",
    "option_docs",
    "read_env",
    "read_file",
    "save_option",
    "shown_key",
    "validate",
]
