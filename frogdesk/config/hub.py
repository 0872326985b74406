"""`[hub]`: how models are downloaded from the Hugging Face Hub (read by `frogdesk.models`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from frogdesk.config.option import option


@dataclass
class HubSettings:
    """Where the Hub is and when a download that crawls is stopped (it resumes later)."""

    SECTION: ClassVar[str] = "hub"

    hf_endpoint: str = option("")
    """Hugging Face Hub endpoint; empty means HF_ENDPOINT or https://huggingface.co."""
    download_min_rate: float = option(1024.0, minimum=0)
    """Bytes per second a download must average over each download_stall_seconds, or it stops (resumable)."""
    download_stall_seconds: float = option(60.0, minimum=0.1)
    """Seconds over which download_min_rate is judged; also the longest wait for one read."""
    download_deadline: float = option(0.0, minimum=0)
    """Seconds one download run may take before it stops (resumable); 0 means none."""
