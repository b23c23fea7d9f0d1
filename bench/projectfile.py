"""How long checking a big project file takes, for one source tree or several side by side.

Usage (needs only tsuka's own dependencies)::

    python bench/projectfile.py                               # this tree
    python bench/projectfile.py --tree /tmp/old --tree .      # two source trees, row by row
    python bench/projectfile.py --sizes 1000,5000 --valid 40000

Two files are measured. ``typos``: N endpoints, each with an unknown key (a
typo, so every endpoint is a problem named with its line). ``valid``: M
endpoints that are all right. Each tree runs in its own process (its folder
first on ``PYTHONPATH``); a row gives the wall and CPU seconds of
``load_project`` and the seconds per thousand endpoints, which stays flat when
the check is linear.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def project_text(count: int, typo: bool) -> str:
    """A ``tsuka.toml`` of ``count`` endpoints, each with an unknown key when ``typo``."""
    parts = ['suite = "default"\n']
    for i in range(count):
        parts.append(f'[[endpoints]]\nname = "e{i}"\nbase_url = "http://127.0.0.1:{8000 + i % 1000}/v1"\n')
        if typo:
            parts.append("concurency = 4\n")
    return "".join(parts)


def child(path: str) -> dict[str, float]:
    """Check the file at ``path`` in this process, with whatever tsuka ``PYTHONPATH`` gives."""
    from tsuka_core.errors import TsukaError

    try:
        from tsuka_core.run.projectfile import load_project
    except ImportError:  # a tree from before the run package kept it with the commands
        load_project = importlib.import_module("tsuka_core." + "cli.projectfile").load_project

    started, cpu = time.perf_counter(), time.process_time()
    problems = 0
    try:
        load_project(Path(path))
    except TsukaError as exc:
        problems = len(getattr(exc, "problems", [])) or 1
    return {"wall": time.perf_counter() - started, "cpu": time.process_time() - cpu, "problems": problems}


def measure(tree: Path, path: Path) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, __file__, "--child", str(path)], env=env, capture_output=True, text=True, check=True
    )
    return dict(json.loads(done.stdout.splitlines()[-1]))


def main(argv: list[str] | None = None) -> None:
    """Print one row per file and tree."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--tree", action="append", type=Path, help="a source tree to measure (repeatable)")
    parser.add_argument("--sizes", default="1000,5000", help="endpoint counts of the file with typos")
    parser.add_argument("--valid", type=int, default=40000, help="endpoint count of the valid file")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child)))
        return
    trees = args.tree or [Path(__file__).resolve().parents[1]]
    files = [("typos", int(n), True) for n in args.sizes.split(",")] + [("valid", args.valid, False)]
    with tempfile.TemporaryDirectory() as folder:
        print(f"{'file':<8} {'endpoints':>9} {'tree':<28} {'wall s':>8} {'cpu s':>8} {'s/1000':>7} {'problems':>8}")
        for kind, count, typo in files:
            path = Path(folder) / f"{kind}-{count}.toml"
            path.write_text(project_text(count, typo), encoding="utf-8")
            for tree in trees:
                row = measure(tree, path)
                per = row["cpu"] / count * 1000
                line = f"{kind:<8} {count:>9} {str(tree)[-28:]:<28} {row['wall']:>8.2f} {row['cpu']:>8.2f} {per:>7.3f}"
                print(f"{line} {int(row['problems']):>8}")


if __name__ == "__main__":
    main()
