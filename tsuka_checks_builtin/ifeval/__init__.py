"""IFEval as a tsuka suite: its prompts converted from IFEval's own data file, its four accuracies as a scorecard.

IFEval's prompts (``input_data.jsonl`` of google-research's
``instruction_following_eval``, Apache-2.0) come from a file the user names in
:data:`DATA_ENV`; no package tsuka installs from carries them, and tsuka fetches
nothing. The file is converted once (``convert``) into tsuka's cache, a folder
per file content, and registered as the suite ``ifeval``; its scorecard
(``scorecard``) gives IFEval's prompt- and instruction-level accuracy, strict
and loose.
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from pathlib import Path
from typing import Any

from tsuka_checks_builtin.cachedir import converted, forget_others, write_folder
from tsuka_checks_builtin.ifeval.convert import INSTRUCTIONS, instruction_check, test_of

__all__ = ["DATA_ENV", "FORMAT", "INSTRUCTIONS", "SUITE", "ifeval_suite", "instruction_check", "test_of"]

DATA_ENV = "TSUKA_IFEVAL_DATA"
"""The path of IFEval's ``input_data.jsonl``; unset, there is no ``ifeval`` suite."""
SUITE = "ifeval"
FORMAT = 2
"""How entries are converted; raised when the conversion changes, so that a cached suite is written again."""


def ifeval_suite(cache: Path) -> Path | None:
    """The ``ifeval`` suite's folder in ``cache``, converted from :data:`DATA_ENV`'s file when not there whole.

    None without the variable; a file that cannot be read or converted leaves the suite out with a UserWarning
    naming it and the entry at fault.
    """
    named = os.environ.get(DATA_ENV)
    if not named:
        return None
    source = Path(named).expanduser()
    try:
        raw = source.read_bytes()
        digest = hashlib.sha256(raw).hexdigest()[:12]
        folder = cache / f"ifeval-{digest}-{FORMAT}"
        if not converted(folder):
            tests = _converted(raw.decode("utf-8"))
            forget_others(cache, "ifeval-", folder)
            write_folder(folder, tests)
    except (OSError, ValueError) as exc:
        warnings.warn(f"the ifeval suite is left out: {DATA_ENV}={source} cannot be converted ({exc})", stacklevel=2)
        return None
    return folder


def _converted(text: str) -> list[tuple[str, dict[str, Any]]]:
    """Each entry of IFEval's file as (file name, test); ValueError naming the line and field at fault."""
    tests = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
            tests.append((f"{int(entry['key']):05d}.json", test_of(entry)))
        except KeyError as exc:
            raise ValueError(f"line {number}: field {exc} is missing") from None
        except (ValueError, TypeError) as exc:
            raise ValueError(f"line {number}: {exc}") from None
    if not tests:
        raise ValueError("it holds no entry")
    return tests
