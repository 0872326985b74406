"""`warnings_for`, the one producer of a model's warnings: the facts it is given decide them."""

from __future__ import annotations

from frogdesk.models.model_warnings import ModelFacts, license_key, model_warnings, warnings_for
from frogdesk.models.spec import GgufName, parse_filename
from frogdesk.models.warning import (
    LICENSE_AMBIGUOUS,
    LOW_BITS,
    QUANT_MISNAMED,
    UNVALIDATED_QUANT,
    VISION_REFUSED,
)

REPO = "bartowski/FrogNano-4B-2609-GGUF"


def named(file: str) -> GgufName:
    parsed = parse_filename(file)
    assert parsed is not None
    return parsed


def ids(facts: ModelFacts, acknowledged: tuple[str, ...] = (), **kw: bool) -> list[str]:
    return [w.id for w in warnings_for(facts, acknowledged, **kw)]


def test_the_name_alone_gives_what_the_rules_give_for_it() -> None:
    name = named("FrogNano-4B-2609-Q4_K_M.gguf")
    assert warnings_for(ModelFacts(name, REPO)) == model_warnings(name, True, (), REPO)


def test_the_quant_the_file_records_wins_over_its_name() -> None:
    facts = ModelFacts(named("FrogNano-4B-2609-BF16.gguf"), REPO, file_type="Q2_K")
    found = ids(facts)
    assert found[0] == QUANT_MISNAMED
    assert UNVALIDATED_QUANT in found and LOW_BITS in found
    assert QUANT_MISNAMED not in ids(ModelFacts(facts.name, REPO))  # the control: name only


def test_a_file_that_says_it_is_a_projector_is_refused_whatever_its_name() -> None:
    facts = ModelFacts(named("FrogNano-4B-2609-Q4_K_M.gguf"), REPO, projector=True)
    assert ids(facts) == [VISION_REFUSED]
    assert VISION_REFUSED not in ids(ModelFacts(facts.name, REPO))


def test_the_license_notice_follows_its_model_until_acknowledged() -> None:
    file_only = ModelFacts(named("frognano-q4_k_m.gguf"))
    assert file_only.license_model == "frognano-q4_k_m.gguf"
    by_gguf = ModelFacts(file_only.name, gguf_name="FrogNano 4B")
    assert by_gguf.license_model == "FrogNano 4B"
    assert ModelFacts(file_only.name, REPO, gguf_name="FrogNano 4B").license_model == REPO
    assert LICENSE_AMBIGUOUS in ids(by_gguf)
    assert LICENSE_AMBIGUOUS not in ids(by_gguf, (license_key("FrogNano 4B"),))
    assert LICENSE_AMBIGUOUS not in ids(by_gguf, license_notice=False)
