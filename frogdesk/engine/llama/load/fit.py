"""Whether a model fits in the address space this process may still map (RLIMIT_AS, `ulimit -v`).

Under an address-space cap every mapping counts: the model file llama.cpp maps, its
buffers, thread stacks, and the Python objects of any GGUF reader. When the cap is
reached, CPython can spin forever unwinding a MemoryError, so the fit is checked here,
from the GGUF header alone and before anything large is mapped.
"""

from __future__ import annotations

import resource
from dataclasses import dataclass
from pathlib import Path

from frogdesk.engine.llama.errors import DoesNotFitError, Shortfall
from frogdesk.engine.llama.load.gguf import GgufHeader, check_loadable
from frogdesk.models.gguf_info import GgufInfo, info_from_headers
from frogdesk.models.memory import CONTEXT_PAD, estimate, largest_fitting

BASE_RESERVE = 96 * 2**20
"""Address space kept for Python, the sampler and llama.cpp's small allocations."""
DEFAULT_STACK = 8 * 2**20
"""Thread stack size assumed when RLIMIT_STACK is unlimited."""
PROC_STATUS = Path("/proc/self/status")


def address_space_room(status: Path = PROC_STATUS) -> int | None:
    """Bytes this process may still map under RLIMIT_AS, or None when there is no cap
    (or the mapped size cannot be read)."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        return None
    try:
        lines = status.read_text(encoding="ascii", errors="replace").splitlines()
    except OSError:
        return None
    for line in lines:
        if line.startswith("VmSize:"):
            return soft - int(line.split()[1]) * 1024
    return None


def reserve(n_threads: int) -> int:
    """Address space beyond the model's own buffers: a base plus one stack per thread."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_STACK)
    stack = DEFAULT_STACK if soft == resource.RLIM_INFINITY else max(soft, DEFAULT_STACK)
    return BASE_RESERVE + (n_threads + 2) * stack


def header_info(path: Path, header: GgufHeader) -> GgufInfo:
    """The model's GgufInfo from the header already read (one file, not a split one)."""
    return info_from_headers((path,), [header])


@dataclass(frozen=True)
class CapFit:
    """How one model is loaded under an address-space cap."""

    room: int
    n_ctx: int
    needed: int


def fit_under_cap(
    path: Path,
    room: int,
    *,
    n_ctx: int,
    n_threads: int,
    kv_type: str = "f16",
    flash_attn: bool | None = None,
    ceiling: int = 0,
    drafting: bool = True,
) -> CapFit:
    """The context to load `path` with in `room` bytes of address space.

    `n_ctx` > 0 is checked as asked; 0 takes the largest multiple of 256 that fits (at
    most `ceiling` and the model's own); `drafting` counts the MTP draft context a file with
    an MTP head gets while speculative decoding is on. Raises `DoesNotFitError` when nothing
    fits, and the header's own `ModelLoadError` for a file llama.cpp could not load anyway.
    """
    extra = reserve(n_threads)
    try:
        file_size = path.stat().st_size
    except OSError:
        file_size = 0  # check_loadable says what is wrong with the path
    if file_size + extra > room:
        # even mapping the header to read it could hit the cap
        raise DoesNotFitError(Shortfall(path.name, file_size + extra, room))
    info = header_info(path, check_loadable(path))

    def needed(context: int) -> int:
        return (
            estimate(info, context, kv_type, flash_attn=flash_attn, drafting=drafting).total + extra
        )

    if n_ctx > 0:
        if needed(n_ctx) > room:
            raise DoesNotFitError(Shortfall(path.name, needed(n_ctx), room))
        return CapFit(room, n_ctx, needed(n_ctx))
    top = info.context_length or 262144
    if ceiling:
        top = min(top, ceiling)
    context = largest_fitting(top, lambda ctx: needed(ctx) <= room)
    if context == 0:
        raise DoesNotFitError(Shortfall(path.name, needed(CONTEXT_PAD), room))
    return CapFit(room, context, needed(context))
