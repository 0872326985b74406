"""Memory estimate of a model at a context size, the GPU-offload plan, and the largest context that fits."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

from frogdesk.models.gguf_info import GgufInfo
from frogdesk.models.system_memory import MemoryAvailable
from frogdesk.sizes import gib
from frogdesk.system import cpu_flags

KV_TYPE_BYTES = {"f16": 2.0, "bf16": 2.0, "f32": 4.0, "q8_0": 34 / 32, "q4_0": 18 / 32}
"""Bytes per KV-cache element for each cache type llama.cpp accepts."""
CONTEXT_PAD = 256
"""llama.cpp rounds the context up to a multiple of this."""
HEADROOM = 0.9
"""Share of free memory a plan may use; the rest is left to the system and other programs."""


def cpu_repack_types(flags: frozenset[str] | None = None) -> frozenset[str]:
    """Quant types llama.cpp's CPU backend repacks into its SIMD layout on this CPU.

    x86 with AVX2 repacks Q4_0, Q4_K and IQ4_NL; ARM with the dot-product extension
    Q4_0 and IQ4_NL. A repacked tensor is copied into a `CPU_REPACK` buffer.
    """
    flags = cpu_flags() if flags is None else flags
    if "avx2" in flags:
        return frozenset({"Q4_0", "Q4_K", "IQ4_NL"})
    if "asimddp" in flags:
        return frozenset({"Q4_0", "IQ4_NL"})
    return frozenset()


def repacked(repackable: Mapping[str, int], types: frozenset[str] | None = None) -> int:
    """Bytes of the repackable weights (bytes by quant type) repacked on this CPU."""
    types = cpu_repack_types() if types is None else types
    return sum(size for kind, size in repackable.items() if kind in types)


def repack_bytes(info: GgufInfo, types: frozenset[str] | None = None) -> int:
    """Bytes of `info`'s weights llama.cpp repacks on this CPU (`types`: the repacked quants)."""
    return repacked(info.repackable_bytes, types)


CPU_UBATCH = 256
"""Tokens llama.cpp computes at once inside a prefill call when no layer is offloaded. The
compute buffer grows with it (without flash attention the attention matrix is context x
ubatch per head: 4.3 GiB at 131K context on FrogNano's shape with 512), and on the CPU 256
prefills as fast as 512 or faster (`python -m bench.levers --configs base,ubatch_256`: a
2,048-token prompt 0.99x on SmolLM2, 1.10x on the FrogNano-shaped model)."""
OFFLOAD_UBATCH = 512
"""The same with layers on a GPU, whose prefill wants larger batches (llama.cpp's default)."""


def default_ubatch(offloaded: bool) -> int:
    """The ubatch FrogDesk loads with, with layers offloaded to a GPU or none."""
    return OFFLOAD_UBATCH if offloaded else CPU_UBATCH


MTP_ARCHITECTURES = ("qwen35",)
"""Architectures whose MTP (NextN) block FrogDesk drafts with: llama.cpp's MTP graph for
them runs the one NextN block as FrogDesk drives it."""


def loads_nextn(info: GgufInfo, drafting: bool = True) -> bool:
    """Whether FrogDesk loads the NextN (MTP) tensors of `info`'s file: only with speculative
    decoding on (`drafting`), for an architecture it drafts with; llama.cpp skips them
    otherwise, mapped or read."""
    return drafting and info.nextn_layers > 0 and info.architecture in MTP_ARCHITECTURES


MTP_UBATCH = 64
"""Tokens the MTP draft context computes at once. It drafts one token at a time and follows
the target batch by batch; a prefill batch of 512 is split into pieces of this size, so its
compute buffer (the KQ matrix without flash attention, which grows with the context) is an
eighth of a prefill batch's: on a FrogNano-sized file 0.14 GiB instead of 1.1 GiB at 32K
context, 0.54 GiB instead of 4.3 GiB at 131K."""


def drafts_with_mtp(info: GgufInfo, drafting: bool = True) -> bool:
    """Whether loading `info`'s file with speculative decoding on (`drafting`) runs its MTP
    head in a second llama.cpp context (one NextN block, an architecture FrogDesk drives)."""
    return loads_nextn(info, drafting) and info.nextn_layers == 1


def nextn_bytes(info: GgufInfo) -> int:
    """Tensor bytes of the file's NextN blocks (the last `nextn_layers` blk.N; 0 when the
    per-layer sizes are not known, as from the light header parse)."""
    if not info.nextn_layers or len(info.layer_bytes) < info.block_count:
        return 0
    return sum(info.layer_bytes[info.block_count - info.nextn_layers : info.block_count])


MMAP_REPACK_SHARE = 0.25
"""Share of the weights repacked for the CPU from which a file is read rather than mapped."""


def default_use_mmap(
    repackable: Mapping[str, int], tensor_bytes: int, types: frozenset[str] | None = None
) -> bool:
    """Whether FrogDesk maps a file (`repackable`: its repackable bytes by quant type).

    Mapped, the pages of the tensors llama.cpp repacks stay resident beside their repacked
    copy; read, those tensors exist once. So a file whose repacked share reaches
    `MMAP_REPACK_SHARE` is read (the FrogNano-shaped Q4_K_M: 61% repacked, 1,571 MiB less
    resident when read, decode as fast; see bench/shaped.py), any other file is mapped.
    """
    if tensor_bytes <= 0:
        return True
    return repacked(repackable, types) < MMAP_REPACK_SHARE * tensor_bytes


UNQUANTIZED_KV = frozenset({"f32", "f16", "bf16"})
"""KV cache types llama.cpp can use without flash attention (a quantized V cache needs it)."""
FLASH_ATTN_HYBRID = False
"""Whether flash attention is on by default for the hybrid architecture (see below)."""


def default_flash_attn(kv_type: str, hybrid: bool) -> bool:
    """Whether FrogDesk turns flash attention on when the settings leave it to FrogDesk.

    A quantized KV cache needs it: llama.cpp refuses a quantized V cache without it.
    Otherwise it stays off, on transformers and on the hybrid architecture alike, because
    on the CPU it decodes faster only near the start of a conversation and much slower
    where an agent works, a few thousand tokens in (`python -m bench.levers`, 2 threads, a
    quiet machine): SmolLM2 1.12x at depth 0 but 0.79x at 2,048; one FrogNano-shaped block
    (three DeltaNet layers and one attention layer of 16 heads of 256, `--block`) 1.01x at
    depth 0, 0.88x at 2,048 and 0.66x at 8,192.
    """
    if kv_type not in UNQUANTIZED_KV:
        return True
    return hybrid and FLASH_ATTN_HYBRID


@dataclass(frozen=True)
class Estimate:
    """Bytes llama.cpp will allocate for one model at one context size (one sequence)."""

    context: int
    weights: int
    kv_cache: int
    recurrent_state: int
    compute: int
    output: int
    repack: int = 0
    """The `CPU_REPACK` copy of the weights llama.cpp repacks for this CPU: beside the whole
    mapped file, or instead of those tensors' part of a file that is read."""
    mtp_kv_cache: int = 0
    """KV cache of the MTP draft context (its one NextN attention block; 0 without it)."""
    mtp_compute: int = 0
    """Compute and output buffers of the MTP draft context (0 without it)."""

    @property
    def parts(self) -> tuple[tuple[str, int], ...]:
        """Every part of the total, named as `models info` shows them (the total is their sum)."""
        return (
            ("weights", self.weights),
            ("CPU repacked weights", self.repack),
            ("KV cache", self.kv_cache),
            ("recurrent state", self.recurrent_state),
            ("compute", self.compute),
            ("output", self.output),
            ("MTP draft KV cache", self.mtp_kv_cache),
            ("MTP draft compute", self.mtp_compute),
        )

    @property
    def total(self) -> int:
        """Everything together."""
        return sum(size for _, size in self.parts)


def _padded(context: int) -> int:
    return max(CONTEXT_PAD, -(-context // CONTEXT_PAD) * CONTEXT_PAD)


def recurrent_state_bytes(info: GgufInfo, sequences: int = 1) -> int:
    """Conv and SSM state of the recurrent (DeltaNet/Mamba) layers, in f32 as llama.cpp keeps it."""
    if info.recurrent_layers == 0:
        return 0
    conv = max(info.ssm_conv_kernel - 1, 0) * (
        info.ssm_inner_size + 2 * info.ssm_group_count * info.ssm_state_size
    )
    state = info.ssm_state_size * info.ssm_inner_size
    return info.recurrent_layers * (conv + state) * 4 * sequences


def compute_bytes(
    info: GgufInfo, context: int, ubatch: int = CPU_UBATCH, flash_attn: bool = False
) -> int:
    """Scratch memory of one batch: the largest of the logits, attention and recurrent steps.

    Without flash attention an attention layer holds the KQ matrix and its mask
    (context x batch per head, f32), which grows with the context.
    """
    kq = bool(info.full_attention_layers) and not flash_attn
    recurrent = 0
    if info.recurrent_layers:
        # the chunked delta rule keeps a few chunk x batch matrices per head
        embd = info.embedding_length
        recurrent = ubatch * 4 * (4 * embd + 6 * 64 * max(info.ssm_time_step_rank, 1))
    return max(_logits_or_attention_bytes(info, context, ubatch, kq), recurrent)


def _logits_or_attention_bytes(info: GgufInfo, context: int, ubatch: int, kq: bool) -> int:
    """The larger of a batch's logits and its attention step (with the KQ matrix and mask,
    context x batch per head in f32, when `kq`: attention without flash attention)."""
    embd = info.embedding_length
    logits = ubatch * 4 * (info.vocab_size + 2 * embd)
    attention = ubatch * 4 * (4 * embd + 2 * info.feed_forward_length)
    if kq:
        attention += ubatch * 4 * _padded(context) * (info.head_count + 1)
    return max(logits, attention)


def mtp_compute_bytes(info: GgufInfo, context: int, ubatch: int, flash_attn: bool) -> int:
    """Compute and output buffers of the MTP draft context: one attention block, its logits.

    The draft context computes up to `ubatch` tokens at once (FrogDesk gives it
    `MTP_UBATCH`, or the prefill batch if smaller); like the trunk's, its attention holds the
    KQ matrix without flash attention.
    Measured on the tiny qwen35 with a NextN block and a prefill batch of 512: within 0.2%
    of llama.cpp's buffers at 2K and 8K context (tests/models/test_mtp_estimate.py).
    """
    step = _logits_or_attention_bytes(info, context, ubatch, kq=not flash_attn)
    return step + (info.vocab_size + info.embedding_length) * 4


def estimate(
    info: GgufInfo,
    context: int,
    kv_type: str = "f16",
    ubatch: int = CPU_UBATCH,
    flash_attn: bool | None = None,
    *,
    repack_types: frozenset[str] | None = None,
    use_mmap: bool | None = None,
    drafting: bool = True,
    n_batch: int | None = None,
) -> Estimate:
    """Weights + KV cache of the full-attention layers + recurrent state + compute + output
    buffers, + the copy of the weights llama.cpp repacks for the CPU, + the MTP draft
    context when the file has an MTP head FrogDesk drafts with (`drafting`: speculative
    decoding on, as by default; `n_batch`: the prefill batch, which the draft context
    follows in pieces of at most `MTP_UBATCH`; None takes `ubatch`). With drafting off the
    NextN tensors are not loaded and not counted.

    `flash_attn` None takes what FrogDesk chooses for this model (`default_flash_attn`).

    Mapped (`use_mmap`), the whole file is a buffer beside the repacked copy; read, the
    repacked tensors are read straight into their copy and the plain buffer holds the rest.
    None takes what FrogDesk loads the file with (`default_use_mmap`).
    """
    ctx = _padded(min(context, info.context_length) if info.context_length else context)
    per_elem = KV_TYPE_BYTES.get(kv_type)
    if per_elem is None:
        raise ValueError(
            f"unknown KV cache type {kv_type!r}; use one of {', '.join(KV_TYPE_BYTES)}"
        )
    kv_per_token = (
        info.full_attention_layers * info.head_count_kv * (info.key_length + info.value_length)
    )
    repack = repack_bytes(info, repack_types)
    if flash_attn is None:
        flash_attn = default_flash_attn(kv_type, info.recurrent_layers > 0)
    if use_mmap is None:
        use_mmap = default_use_mmap(info.repackable_bytes, info.tensor_bytes, repack_types)
    mtp = drafts_with_mtp(info, drafting)
    mtp_kv = info.nextn_layers * info.head_count_kv * (info.key_length + info.value_length)
    # NextN tensors left unloaded (their repacked share, if any, stays in `repack`)
    skipped = 0 if loads_nextn(info, drafting) else nextn_bytes(info)
    mtp_ubatch = min(n_batch or ubatch, MTP_UBATCH)
    return Estimate(
        context=ctx,
        weights=(info.tensor_bytes if use_mmap else info.tensor_bytes - repack) - skipped,
        kv_cache=int(kv_per_token * per_elem * ctx),
        recurrent_state=recurrent_state_bytes(info),
        compute=compute_bytes(info, ctx, ubatch, flash_attn),
        output=info.vocab_size * 4,
        repack=repack,
        mtp_kv_cache=int(mtp_kv * per_elem * ctx) if mtp else 0,
        mtp_compute=mtp_compute_bytes(info, ctx, mtp_ubatch, flash_attn) if mtp else 0,
    )


Offload = Literal["all", "some", "none"]


@dataclass(frozen=True)
class Plan:
    """Where the model goes on this machine and whether it fits."""

    estimate: Estimate
    offload: Offload
    gpu_layers: int
    fits: bool
    ram_needed: int
    vram_needed: int
    note: str

    @property
    def verdict(self) -> str:
        """One word for a table column."""
        if not self.fits:
            return "no"
        return {"all": "GPU", "some": f"GPU {self.gpu_layers}L", "none": "CPU"}[self.offload]


def plan(
    info: GgufInfo,
    context: int,
    memory: MemoryAvailable,
    kv_type: str = "f16",
    flash_attn: bool | None = None,
    *,
    drafting: bool = True,
) -> Plan:
    """Offload all layers, some, or none, given free VRAM and RAM, at this context size
    (`drafting`: speculative decoding on, which runs an MTP head in a context of its own)."""
    est = estimate(info, context, kv_type, flash_attn=flash_attn, drafting=drafting)
    ram_budget = int(memory.ram_free * HEADROOM)
    layers = max(len(info.layer_bytes), 1)
    if memory.has_gpu and memory.vram_free is not None:
        vram_budget = int(memory.vram_free * HEADROOM)
        # offloaded weights are not repacked for the CPU, and an offloaded file is mapped
        mapped = estimate(
            info, context, kv_type, OFFLOAD_UBATCH, flash_attn, use_mmap=True, drafting=drafting
        )
        on_gpu = mapped.total - mapped.repack
        if on_gpu <= vram_budget:
            return Plan(mapped, "all", layers, True, 0, on_gpu, "everything on the GPU")
        # with layers offloaded, llama.cpp computes the larger GPU batches
        split = estimate(info, context, kv_type, OFFLOAD_UBATCH, flash_attn, drafting=drafting)
        per_layer_state = (split.kv_cache + split.recurrent_state) // layers
        fixed = split.compute + split.output
        room = vram_budget - fixed
        count = 0
        used = 0
        for layer_bytes in info.layer_bytes:
            step = layer_bytes + per_layer_state
            if used + step > room:
                break
            used += step
            count += 1
        if count > 0:
            ram_needed = split.total - used - fixed
            fits = ram_needed <= ram_budget
            note = f"{count} of {layers} layers on the GPU, the rest on the CPU"
            return Plan(split, "some", count, fits, ram_needed, used + fixed, note)
    fits = est.total <= ram_budget
    note = "CPU only" if fits else f"needs {gib(est.total)}, {gib(memory.ram_free)} of RAM free"
    return Plan(est, "none", 0, fits, est.total, 0, note)


def largest_fitting(top: int, fits: Callable[[int], bool]) -> int:
    """The largest multiple of 256 up to `top` for which `fits(context)` holds; 0 if none.

    `fits` must be monotone (a larger context never fits where a smaller one does not).
    """
    low, high = 0, top // CONTEXT_PAD
    while low < high:
        mid = (low + high + 1) // 2
        if fits(mid * CONTEXT_PAD):
            low = mid
        else:
            high = mid - 1
    return low * CONTEXT_PAD


def largest_context(
    info: GgufInfo,
    memory: MemoryAvailable,
    kv_type: str = "f16",
    flash_attn: bool | None = None,
    ceiling: int = 0,
    *,
    drafting: bool = True,
) -> int:
    """The largest context (a multiple of 256, at most the model's own) whose plan fits; 0 if none."""
    top = info.context_length or 262144
    if ceiling:
        top = min(top, ceiling)
    return largest_fitting(
        top, lambda ctx: plan(info, ctx, memory, kv_type, flash_attn, drafting=drafting).fits
    )
