"""How long a big tier map takes to read and to gate a few tools, for one source tree or several side by side.

Usage (needs only tsuka's own dependencies)::

    python bench/tiermap.py                               # this tree: 100,000 globs, 10 tools
    python bench/tiermap.py --tree /tmp/old --tree .      # two source trees, row by row
    python bench/tiermap.py --globs 50000 --tools 100

Two maps are measured. ``prefix``: every glob starts with its own literal text
(``tool_000042_*``), the usual shape. ``suffix``: every glob starts with ``*``
(``*_000042``), found by its literal end instead. ``infix``: every glob starts
and ends with ``*`` (``*_000042_*``), so nothing narrows the search and every
glob is tried: the worst case. The tools looked up are spread over the map,
plus one no glob matches. Each tree
runs in its own process (its folder first on ``PYTHONPATH``); a row gives the
seconds to parse the map (``TierMap.parse``), to look every tool up (wall),
and the CPU seconds of those lookups (steadier on a busy machine).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

SHAPES = ("prefix", "suffix", "infix")


def build(shape: str, globs: int, tools: int) -> tuple[dict[str, str], list[str]]:
    """The map of ``globs`` entries of ``shape`` and ``tools`` names to look up (the last one unlisted)."""
    tiers = ("small", "medium", "large")
    if shape == "prefix":
        entries = {f"tool_{i:06d}_*": tiers[i % 3] for i in range(globs)}
        names = [f"tool_{i:06d}_x" for i in range(0, globs, max(1, globs // max(1, tools - 1)))]
    else:
        tail = "_*" if shape == "infix" else ""
        entries = {f"*_{i:06d}{tail}": tiers[i % 3] for i in range(globs)}
        names = [f"x_{i:06d}{tail[:1]}" for i in range(0, globs, max(1, globs // max(1, tools - 1)))]
    return entries, [*names[: tools - 1], "unlisted_tool"]


def child(shape: str, globs: int, tools: int) -> dict[str, float]:
    """Time parsing and lookups in this process, with whatever tsuka ``PYTHONPATH`` gives."""
    from tsuka_core.gating.tiermap import TierMap

    entries, names = build(shape, globs, tools)
    started = time.perf_counter()
    tier_map = TierMap.parse(entries)
    parsed, cpu = time.perf_counter(), time.process_time()
    for name in names:
        tier_map.lookup(name)
    done = time.perf_counter()
    return {"parse": parsed - started, "lookup": done - parsed, "lookup_cpu": time.process_time() - cpu}


def measure(tree: Path, shape: str, globs: int, tools: int) -> dict[str, float]:
    """Run :func:`child` in a fresh interpreter with ``tree`` first on ``PYTHONPATH``."""
    env = {**os.environ, "PYTHONPATH": str(tree.resolve())}
    argv = [sys.executable, __file__, "--child", shape, "--globs", str(globs), "--tools", str(tools)]
    out = subprocess.run(argv, env=env, capture_output=True, text=True, check=True).stdout
    result: dict[str, float] = json.loads(out)
    return result


def main() -> None:
    """Print one row per shape and tree."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--globs", type=int, default=100_000)
    parser.add_argument("--tools", type=int, default=10)
    parser.add_argument("--tree", type=Path, action="append", help="a source tree to measure (repeatable)")
    parser.add_argument("--child", choices=SHAPES, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.globs, args.tools)))
        return
    trees = args.tree or [Path(__file__).resolve().parents[1]]
    print(f"{'shape':<8} {'globs':>8} {'tools':>6} {'parse s':>9} {'lookup s':>9} {'cpu s':>9}  tree")
    for shape in SHAPES:
        for tree in trees:
            row = measure(tree, shape, args.globs, args.tools)
            times = f"{row['parse']:>9.3f} {row['lookup']:>9.3f} {row['lookup_cpu']:>9.3f}"
            print(f"{shape:<8} {args.globs:>8} {args.tools:>6} {times}  {tree}")


if __name__ == "__main__":
    main()
