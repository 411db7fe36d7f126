"""Hypothesis budgets: small enough for the default run, scaled up for a deeper one.

``FLOWER_FUZZ_SCALE=20 .venv/bin/python -m pytest tests/unit tests/ui`` runs twenty times
as many examples per property (``FLOWER_FUZZ_EXAMPLES`` is the separate, much bigger run of
the document parser in tests/documents/test_properties.py).
"""

from __future__ import annotations

import os

SCALE = float(os.environ.get("FLOWER_FUZZ_SCALE") or 1)


def examples(default: int) -> int:
    """``default`` examples, times ``FLOWER_FUZZ_SCALE``."""
    return max(1, round(default * SCALE))
