"""Mutation testing of the gate, the judge, scoring, confidence and the record: run mutmut, then the score per area.

mutmut (a dev dependency) changes one operator, constant or argument at a time in
the modules ``[tool.mutmut]`` of pyproject.toml names, and runs the tests that
reach the changed function; a change no test notices "survives". This script
runs it (``--report`` only reads what the last run left in ``mutants/``) and
prints, per area, the mutants, how many were killed, survived, had no test or
were not checked yet, and the score: killed over every mutant checked.

Each surviving mutant is matched against ``tools/mutation_survivors.toml``, which
says why it may survive (equivalent to the original, wording of a message no
test pins, or a gap named as such). Survivors no entry explains are printed
with their diff, and the exit status is 1 when there are any.

Usage::

    python tools/mutation.py            # run mutmut (resumes: checked mutants are kept), then report
    python tools/mutation.py --report   # report the last run
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import subprocess
import sys
import tomllib
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MUTANTS = ROOT / "mutants"
REASONS = ROOT / "tools" / "mutation_survivors.toml"
AREAS = {
    "gate": "tsuka_core.gating.*",
    "scoring": "tsuka_core.judge.scoring.*",
    "judge": "tsuka_core.judge.*",
    "confidence": "tsuka_core.engine.confidence.*",
    "record": "tsuka_core.record.*",
}
"""Each area's mutant names, first match wins (scoring before the rest of the judge)."""


def area_of(name: str) -> str:
    """The area a mutant belongs to (``tsuka_core.gating.toolcap.x__shown__mutmut_3``: gate)."""
    return next((area for area, pattern in AREAS.items() if fnmatch.fnmatch(name, pattern)), "other")


def results() -> Iterator[tuple[str, str]]:
    """Every mutant of the last run and its status (killed, survived, no tests, not checked, timeout...)."""
    from mutmut.stats import status_by_exit_code

    for meta in sorted(MUTANTS.rglob("*.py.meta")):
        data = json.loads(meta.read_text(encoding="utf-8"))
        for name, code in data["exit_code_by_key"].items():
            yield name, status_by_exit_code[code]


def reasons() -> list[tuple[str, str]]:
    """``(pattern, why)`` for each explained group of survivors."""
    data = tomllib.loads(REASONS.read_text(encoding="utf-8"))
    return [(entry["mutants"], entry["why"]) for entry in data["survivor"]]


def explained(name: str, known: Sequence[tuple[str, str]]) -> str | None:
    """Why ``name`` may survive, or None."""
    short = name.removeprefix("tsuka_core.")
    return next((why for pattern, why in known if fnmatch.fnmatch(short, pattern)), None)


def report() -> int:
    """Print the table and the unexplained survivors; 1 when there are any."""
    counts: dict[str, Counter[str]] = {area: Counter() for area in AREAS}
    survivors: list[str] = []
    for name, status in results():
        counts.setdefault(area_of(name), Counter())[status] += 1
        if status == "survived":
            survivors.append(name)
    print(f"{'area':<11} {'mutants':>7} {'killed':>7} {'survived':>8} {'no tests':>8} {'unchecked':>9} {'score':>7}")
    for area, seen in counts.items():
        checked = sum(seen.values()) - seen["not checked"] - seen["skipped"]
        score = f"{seen['killed'] / checked:.1%}" if checked else "-"
        print(
            f"{area:<11} {sum(seen.values()):>7} {seen['killed']:>7} {seen['survived']:>8} {seen['no tests']:>8} "
            f"{seen['not checked']:>9} {score:>7}"
        )
    known = reasons()
    unexplained = [name for name in survivors if explained(name, known) is None]
    print(f"\n{len(survivors)} survived: {len(survivors) - len(unexplained)} explained in {REASONS.name}")
    for name in unexplained:
        print(f"\nunexplained: {name}")
        shown = subprocess.run(["mutmut", "show", name], capture_output=True, text=True, cwd=ROOT, check=False)
        print("\n".join(line for line in shown.stdout.splitlines() if line.startswith(("-", "+"))))
    return 1 if unexplained else 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run mutmut unless ``--report``, then report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--report", action="store_true", help="only report the last run")
    args = parser.parse_args(argv)
    if not args.report:
        subprocess.run(["mutmut", "run"], cwd=ROOT, check=False)
    if not MUTANTS.is_dir():
        print("no mutants/ folder: run without --report first", file=sys.stderr)
        return 2
    return report()


if __name__ == "__main__":
    raise SystemExit(main())
