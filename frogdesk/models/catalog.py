"""One row per model of a repo or of the disk: quant, size, on disk, fit on this machine, warnings."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

from frogdesk.models.catalog_row import CatalogRow
from frogdesk.models.errors import ModelError
from frogdesk.models.gguf_info import GgufInfo, inspect_gguf
from frogdesk.models.listing import RepoListing
from frogdesk.models.local_model import LocalModel
from frogdesk.models.memory import plan
from frogdesk.models.model_warnings import ModelFacts, warnings_for
from frogdesk.models.spec import group_files
from frogdesk.models.system_memory import MemoryAvailable


def _scaled(info: GgufInfo, size: int) -> GgufInfo:
    """Another quant's dims with this file's size standing in for its weights."""
    ratio = size / info.tensor_bytes if info.tensor_bytes else 1.0
    return dataclasses.replace(
        info,
        tensor_bytes=size,
        file_bytes=size,
        layer_bytes=tuple(int(b * ratio) for b in info.layer_bytes),
    )


def _size_only(size: int) -> GgufInfo:
    return GgufInfo(
        path=Path(), parts=(), architecture="", name="", file_type="", parameters=0,
        file_bytes=size, tensor_bytes=size, context_length=0, block_count=0,
        embedding_length=0, feed_forward_length=0, vocab_size=0, head_count=0,
        head_count_kv=0, key_length=0, value_length=0, full_attention_layers=0,
        full_attention_interval=1, recurrent_layers=0, ssm_conv_kernel=0, ssm_inner_size=0,
        ssm_state_size=0, ssm_group_count=0, ssm_time_step_rank=0, nextn_layers=0,
        chat_template=False, license="", is_mmproj=False, layer_bytes=(),
    )  # fmt: skip


def _safe_inspect(path: Path) -> GgufInfo | None:
    try:
        return inspect_gguf(path)
    except ModelError:
        return None


def repo_rows(
    listing: RepoListing,
    local: Sequence[LocalModel],
    memory: MemoryAvailable,
    context: int,
    acknowledged: Sequence[str] = (),
    kv_type: str = "f16",
) -> list[CatalogRow]:
    """Rows for every model of a Hub listing, fit judged from local metadata where there is some."""
    on_disk = {
        m.name.stem.split("/")[-1]: m for m in local if m.repo == listing.repo and m.complete
    }
    sibling: GgufInfo | None = None
    for model in on_disk.values():
        if not model.name.mmproj and (sibling := _safe_inspect(model.path)) is not None:
            break
    sizes = {f.path: f.size for f in listing.files}
    rows = []
    for group in group_files(sizes):
        size = sum(sizes[p] for p in group.parts)
        here = on_disk.get(group.name.stem.split("/")[-1])
        info = _safe_inspect(here.path) if here and not group.name.mmproj else None
        basis = "metadata"
        if info is None and sibling is not None:
            info, basis = _scaled(sibling, size), "sibling"
        if info is None:
            info, basis = _size_only(size), "size"
        facts = ModelFacts(group.name, listing.repo)  # a file on the Hub: its name is all
        rows.append(
            CatalogRow(
                label=group.label,
                repo=listing.repo,
                name=group.name,
                size=size,
                local_path=here.path if here else None,
                plan=None if group.name.mmproj else plan(info, context, memory, kv_type),
                fit_basis=basis,
                warnings=tuple(warnings_for(facts, acknowledged)),
            )
        )
    return rows


def local_rows(
    local: Sequence[LocalModel],
    memory: MemoryAvailable,
    context: int,
    acknowledged: Sequence[str] = (),
    kv_type: str = "f16",
) -> list[CatalogRow]:
    """Rows for the models on disk, fit judged from each file's own metadata."""
    rows = []
    for model in local:
        info = None if model.name.mmproj else _safe_inspect(model.path)
        rows.append(
            CatalogRow(
                label=f"{model.repo}/{model.name.stem}" if model.repo else model.name.stem,
                repo=model.repo,
                name=model.name,
                size=model.size,
                local_path=model.path,
                plan=plan(info, context, memory, kv_type) if info else None,
                fit_basis="metadata",
                warnings=tuple(
                    warnings_for(ModelFacts.of(model.name, model.repo, info), acknowledged)
                ),
            )
        )
    return rows
