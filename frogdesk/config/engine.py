"""`[engine]`: the backend and llama.cpp's runtime (read by `frogdesk.engine` and the core's
model loading)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from frogdesk.config.option import option

BackendName = Literal["llama", "openai", "script"]
"""Engine backends: embedded llama.cpp, an OpenAI-compatible endpoint, a replayed script."""
KvCacheType = Literal["f32", "f16", "bf16", "q8_0", "q5_1", "q5_0", "q4_1", "q4_0", "iq4_nl"]
FlashAttn = Literal["auto", "on", "off"]


@dataclass
class EngineSettings:
    """Which backend answers, and how llama.cpp runs the model file."""

    SECTION: ClassVar[str] = "engine"

    backend: BackendName = option("llama")
    """Engine backend: llama (embedded llama.cpp), openai (remote endpoint) or script (replay)."""
    openai_endpoint: str = option("")
    """Base URL of an OpenAI-compatible server for the openai backend, e.g. http://gpu:8000/v1."""
    openai_model: str = option("")
    """Model name sent to the openai backend; empty asks the server for its first model."""
    threads: int = option(0, minimum=0)
    """CPU threads for llama.cpp; 0 picks the number of physical cores."""
    gpu_layers: int = option(-1, minimum=-1)
    """Layers offloaded to the GPU; -1 lets the memory plan decide, 0 keeps everything on the CPU."""
    context_size: int = option(0, minimum=0)
    """llama.cpp context in tokens; 0 takes the largest that fits, at most max_context_tokens."""
    flash_attn: FlashAttn = option("auto")
    """Flash attention in llama.cpp: on, off, or auto (on for a quantized KV cache, which
    needs it, and where measured faster for the model's architecture; true and false are
    read as on and off)."""
    kv_cache_type: KvCacheType = option("f16")
    """KV cache element type: f16, or q8_0 (half the memory) or q4_0 (a quarter), which turn
    flash attention on under auto and cannot be used with it off."""
    speculative: bool = option(True)
    """Draft tokens from the conversation's own text and let the model verify several per
    step (llama backend; the output is the same, only faster when the model copies text)."""
    saved_state_max_bytes: int = option(2 << 30, minimum=0)
    """Bytes of saved engine state kept for resuming sessions without re-reading them, oldest removed first; 0 saves none."""

    @property
    def flash_attn_choice(self) -> bool | None:
        """`flash_attn` as the engine takes it: True (on), False (off) or None (auto)."""
        return {"on": True, "off": False}.get(self.flash_attn)
