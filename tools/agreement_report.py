"""What the agreement scripts print after their tables: the kinds that disagree, and the first disagreements."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["print_disagreeing_kinds", "print_disagreements"]


def print_disagreeing_kinds(tallies: Mapping[str, Any], width: int, of: str) -> None:
    """Per suite, each kind of ``of`` (answer, trajectory) where any verdict disagreed: how many of how many.

    Each tally has ``kinds``, a Counter of ``(kind, agreed)``.
    """
    print(f"\nby kind of {of} (disagreements only):")
    for suite, tally in tallies.items():
        for kind in sorted({k for k, _ in tally.kinds}):
            wrong = tally.kinds[(kind, False)]
            if wrong:
                print(f"  {suite:<{width}} {kind:<26} {wrong} of {wrong + tally.kinds[(kind, True)]} disagree")


def print_disagreements(lines: Sequence[str], show: int, which: str = "") -> None:
    """How many disagreements (``which`` qualifies them), and the first ``show`` of them, one per line."""
    first = f", the first {show}" if len(lines) > show else ""
    print(f"\n{len(lines)} disagreement(s){which}{first}:")
    for line in lines[:show]:
        print("  " + line)
