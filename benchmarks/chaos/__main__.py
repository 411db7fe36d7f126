"""``python benchmarks/chaos``: the package run as a folder (its parent on ``sys.path``)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from chaos.cli import main

sys.exit(main())
