"""Spec parsing and what file names say about quants, imatrix, splits and vision projectors."""

from __future__ import annotations

from pathlib import Path

import pytest

from frogdesk.models.errors import ModelError
from frogdesk.models.spec import group_files, parse_filename, parse_spec, pick_group


@pytest.mark.parametrize(
    ("name", "quant", "imatrix", "mmproj", "family"),
    [
        ("microsoft_FrogNano-4B-2609-Q4_K_M.gguf", "Q4_K_M", False, False, 4),
        ("microsoft_FrogNano-4B-2609-IQ2_M.gguf", "IQ2_M", False, False, 2),
        ("microsoft_FrogNano-4B-2609-IQ3_XXS.gguf", "IQ3_XXS", False, False, 3),
        ("microsoft_FrogNano-4B-2609-IQ4_XS.gguf", "IQ4_XS", False, False, 4),
        ("microsoft_FrogNano-4B-2609-Q3_K_L.gguf", "Q3_K_L", False, False, 3),
        ("microsoft_FrogNano-4B-2609-Q6_K_L.gguf", "Q6_K_L", False, False, 6),
        ("microsoft_FrogNano-4B-2609-Q8_0.gguf", "Q8_0", False, False, 8),
        ("microsoft_FrogNano-4B-2609-bf16.gguf", "BF16", False, False, 16),
        ("FrogNano-4B-2609.f16.gguf", "F16", False, False, 16),
        ("FrogNano-4B-2609.i1-Q4_K_S.gguf", "Q4_K_S", True, False, 4),
        ("FrogNano-4B-2609.i1-IQ1_M.gguf", "IQ1_M", True, False, 1),
        ("FrogNano-4B-2609-Q4_0_4_4.gguf", "Q4_0_4_4", False, False, 4),
        ("mmproj-FrogNano-4B-2609-f16.gguf", "F16", False, True, 16),
        ("FrogNano-4B-2609-imatrix-Q5_K_M.gguf", "Q5_K_M", True, False, 5),
    ],
)
def test_quant_names(name: str, quant: str, imatrix: bool, mmproj: bool, family: int) -> None:
    parsed = parse_filename(name)
    assert parsed is not None
    assert (parsed.quant, parsed.imatrix, parsed.mmproj, parsed.family_bits) == (
        quant,
        imatrix,
        mmproj,
        family,
    )


def test_not_gguf_and_unknown_quant() -> None:
    assert parse_filename("README.md") is None
    parsed = parse_filename("model.gguf")
    assert parsed is not None and parsed.quant is None and parsed.bits is None


def test_split_parts_group_into_one_model() -> None:
    names = [
        "Q8_0/m-Q8_0-00002-of-00003.gguf",
        "Q8_0/m-Q8_0-00001-of-00003.gguf",
        "m-Q4_K_M.gguf",
        "Q8_0/m-Q8_0-00003-of-00003.gguf",
        "README.md",
    ]
    groups = group_files(names)
    assert [g.label for g in groups] == ["Q8_0/m-Q8_0.gguf", "m-Q4_K_M.gguf"]
    split = groups[0]
    assert split.parts == tuple(f"Q8_0/m-Q8_0-0000{i}-of-00003.gguf" for i in (1, 2, 3))
    assert split.complete and split.name.quant == "Q8_0"
    incomplete = group_files(names[:2])[0]
    assert not incomplete.complete


def test_pick_prefers_plain_over_imatrix_unless_asked() -> None:
    groups = group_files(["a.i1-Q4_K_M.gguf", "a-Q4_K_M.gguf", "a-Q8_0.gguf", "mmproj-a-f16.gguf"])
    assert pick_group(groups, None, "r").label == "a-Q4_K_M.gguf"
    assert pick_group(groups, "i1-q4_k_m", "r").label == "a.i1-Q4_K_M.gguf"
    only_i1 = group_files(["a.i1-Q4_K_M.gguf"])
    assert pick_group(only_i1, "Q4_K_M", "r").label == "a.i1-Q4_K_M.gguf"
    with pytest.raises(ModelError, match="vision projector"):
        pick_group(groups, "F16", "r")
    with pytest.raises(ModelError, match=r"available: Q4_K_M, Q8_0, i1-Q4_K_M"):
        pick_group(groups, "IQ2_M", "r")


def test_parse_spec_forms() -> None:
    repo = parse_spec("bartowski/FrogNano-4B-2609-GGUF")
    assert (repo.kind, repo.repo, repo.quant, repo.revision) == (
        "repo",
        "bartowski/FrogNano-4B-2609-GGUF",
        None,
        "main",
    )
    quant = parse_spec("bartowski/FrogNano-4B-2609-GGUF:q4_k_m")
    assert quant.quant == "Q4_K_M" and str(quant) == "bartowski/FrogNano-4B-2609-GGUF:Q4_K_M"
    rev = parse_spec("o/r@v2:Q8_0")
    assert (rev.repo, rev.revision, rev.quant) == ("o/r", "v2", "Q8_0")
    path = parse_spec("~/models/x.gguf")
    assert path.kind == "path" and path.path == Path("~/models/x.gguf").expanduser()
    assert parse_spec("./x").kind == "path"
    alias = parse_spec("small", {"small": "o/r:IQ3_M"})
    assert (alias.repo, alias.quant) == ("o/r", "IQ3_M")


@pytest.mark.parametrize("bad", ["", "justaname", "o/r:", "a/b/c", "o/r:Q4 K"])
def test_bad_specs_are_explained(bad: str) -> None:
    with pytest.raises(ModelError):
        parse_spec(bad)


def test_alias_to_alias_is_refused() -> None:
    with pytest.raises(ModelError, match="another alias"):
        parse_spec("a", {"a": "b", "b": "o/r"})
