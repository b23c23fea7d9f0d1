"""The developer scripts of ``tools/`` (not installed with tsuka), imported for the tests that check generated docs."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

TOOLS = Path(__file__).resolve().parents[1] / "tools"
if str(TOOLS) not in sys.path:
    sys.path.insert(0, str(TOOLS))

checksdoc: ModuleType = importlib.import_module("checksdoc")
clidoc: ModuleType = importlib.import_module("clidoc")
profiledoc: ModuleType = importlib.import_module("profiledoc")
mutation: ModuleType = importlib.import_module("mutation")
release_check: ModuleType = importlib.import_module("release_check")
