"""Write a real split GGUF (`-00001-of-0000N.gguf`) from a single file, with the gguf package."""

from __future__ import annotations

from pathlib import Path

from gguf import GGUFReader, GGUFValueType, GGUFWriter


def write_split(source: Path, target: Path, max_tensors: int) -> list[Path]:
    """Copy source into shards of at most max_tensors tensors named after target; returns the parts."""
    reader = GGUFReader(source)
    arch = str(reader.fields["general.architecture"].contents())
    writer = GGUFWriter(target, arch, split_max_tensors=max_tensors)
    for field in reader.fields.values():
        if field.name == "general.architecture" or field.name.startswith("GGUF."):
            continue
        vtype = field.types[0]
        sub_type = field.types[-1] if vtype == GGUFValueType.ARRAY else None
        writer.add_key_value(field.name, field.contents(), vtype, sub_type=sub_type)
    for tensor in reader.tensors:
        writer.add_tensor_info(
            tensor.name,
            tensor.data.shape,
            tensor.data.dtype,
            tensor.data.nbytes,
            tensor.tensor_type,
        )
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    for tensor in reader.tensors:
        writer.write_tensor_data(tensor.data, tensor_endianess=reader.endianess)
    writer.close()
    stem = target.name.removesuffix(".gguf")
    return sorted(target.parent.glob(f"{stem}-*-of-*.gguf"))
