"""llama.cpp's log callback outlives every capture: a model nobody closed cannot crash the next log line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = """
import gc, sys
from pathlib import Path
import llama_cpp
from frogdesk.engine.llama.load.model import LlamaModel

model = LlamaModel(Path(sys.argv[1]))  # makes and installs a capture of its own
del model
gc.collect()
# llama.cpp logs while failing to load a missing file: through whatever callback it holds.
llama_cpp.llama_model_load_from_file(b"/nonexistent/x.gguf", llama_cpp.llama_model_default_params())
print("alive")
"""


def test_a_log_line_after_a_model_was_collected_does_not_crash(smollm2_gguf: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(smollm2_gguf)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert done.stdout.strip() == "alive"
