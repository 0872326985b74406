"""The quant check's call fidelity: exact, recovered and lost calls, read by the real parser."""

from __future__ import annotations

from frogdesk.leaf.schemas import tool_schemas
from frogdesk.quantcheck.corpus import load_corpus
from frogdesk.quantcheck.metrics import call_outcome, tool_call_outcomes

TOOLS = tool_schemas()
EXACT = "<tool_call>\n<function=Read>\n<parameter=file_path>\na.py\n</parameter>\n</function>"


def test_exact_recovered_and_lost_continuations() -> None:
    assert call_outcome(EXACT, "Read", TOOLS) == "exact"
    bare = "<function=Read>\n<parameter=file_path>\na.py\n</parameter>\n</function>"
    assert call_outcome(bare, "Read", TOOLS) == "recovered"
    drifted = EXACT.replace("a.py\n</parameter>", "a.py\n</parameter1>")
    assert call_outcome(drifted, "Read", TOOLS) == "recovered"
    assert call_outcome(EXACT.replace("Read", "Glob"), "Read", TOOLS) == "lost"
    assert call_outcome("I think the answer is 4.", "Read", TOOLS) == "lost"
    broken = "<tool_call>\n<function=Read>\n</parameter>\n</function>"
    assert call_outcome(broken, "Read", TOOLS) == "lost"


def test_continuations_cut_by_the_token_cap_are_judged_by_their_opening() -> None:
    assert call_outcome("<tool_call>\n<function=Read>\n<parameter=file_", "Read", TOOLS) == "exact"
    assert call_outcome("<function=Read>\n<parameter=file_", "Read", TOOLS) == "recovered"
    assert call_outcome("<tool_call>\n<function=Bash>\n<par", "Read", TOOLS) == "lost"


def test_outcomes_count_only_cases_where_the_reference_calls() -> None:
    reference = [EXACT, "no call here", EXACT, EXACT]
    quant = [EXACT, EXACT, EXACT.replace("</parameter>", "</parameter_x>"), "prose"]
    assert tool_call_outcomes(reference, quant, TOOLS) == {"exact": 1, "recovered": 1, "lost": 1}


def test_the_shipped_corpus_offers_its_tools() -> None:
    names = [t["function"]["name"] for t in load_corpus().tools]
    assert names == ["Read", "Write", "Edit", "Glob", "Bash"]
