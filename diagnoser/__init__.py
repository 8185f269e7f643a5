"""diagnoser: read the logs of a failed RL-for-LLM training job and say what went wrong and what to change."""

from __future__ import annotations

__version__ = "0.1.0"
