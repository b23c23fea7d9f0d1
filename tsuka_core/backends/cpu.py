"""How many threads an in-process model computes with: the cores other work leaves free when it loads.

llama.cpp's threads meet at a barrier after every matrix product, so a thread
the kernel has parked behind another program stalls all of them: on two cores
beside one busy program, two threads decode about ten times slower than one.
Unless ``--option threads=N`` says otherwise, the model gets the cores this
process may run on less those busy with other programs when it loads: the
median, over a fifth of a second, of the tasks the kernel had running
(``/proc/loadavg``) less this process's own. Where ``/proc`` is absent, the
one-minute load average rounded down (which counts this process's own recent
work too, so it is only the fallback).
The choice, and what it saw, is said in the run and kept in the level's record
(``compute``). Greedy answers do not depend on the thread count: each thread
computes whole rows of a product, the same sums in the same order.
"""

from __future__ import annotations

import os
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["ThreadChoice", "busy_cores", "choose_threads", "usable_cores"]

SAMPLES = 20
"""How many times the running tasks are counted before a model loads."""
SAMPLE_GAP = 0.01
"""Seconds between two counts."""


@dataclass(frozen=True)
class ThreadChoice:
    """The threads a model computes with, and what they were chosen from."""

    threads: int
    cores: int
    """The cores this process may run on."""
    busy: int
    """Cores other programs kept busy when the model loaded."""
    load: float
    """The one-minute load average then."""
    given: bool
    """True when ``--option threads=N`` set the threads."""

    def said(self) -> str:
        """One line for the run: the threads, and why."""
        if self.given:
            beside = f", {self.busy} busy with other programs" if self.busy else ""
            return f"{self.threads} thread(s) on {self.cores} core(s){beside}, as --option threads={self.threads} set"
        if self.busy:
            return (
                f"{self.threads} thread(s): {self.busy} of {self.cores} core(s) busy with other programs (load "
                f"{self.load:.1f}), and threads beside busy cores wait on each other; --option threads=N sets it"
            )
        return f"{self.threads} thread(s), one per core (load {self.load:.1f}); --option threads=N sets it"

    def record(self) -> dict[str, Any]:
        """The level record's ``compute``: ``threads``, ``cores``, ``busyCores``, ``load``, ``chosenBy``."""
        return {
            "threads": self.threads,
            "cores": self.cores,
            "busyCores": self.busy,
            "load": round(self.load, 2),
            "chosenBy": "option" if self.given else "free cores",
        }


def usable_cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def choose_threads(option: int = 0) -> ThreadChoice:
    """``option`` threads when above 0; else the usable cores less the busy ones, at least one."""
    cores, load = usable_cores(), _load()
    busy = max(0, min(cores - 1, busy_cores(load)))  # counted either way: the record says what the run ran beside
    if option > 0:
        return ThreadChoice(option, cores, busy, load, given=True)
    return ThreadChoice(max(1, cores - busy), cores, busy, load, given=False)


def busy_cores(load: float | None = None) -> int:
    """Cores other programs keep busy now: the median count of their running tasks (the ``load`` without /proc)."""
    counts = []
    for index in range(SAMPLES):
        if index:
            time.sleep(SAMPLE_GAP)
        count = _others_running()
        if count is None:
            return int(_load() if load is None else load)
        counts.append(count)
    return int(statistics.median_low(counts))


def _load() -> float:
    try:
        return os.getloadavg()[0]
    except OSError:  # not available on this system
        return 0.0


def _others_running() -> int | None:
    """Tasks running on the machine now, this process's own left out; None without ``/proc``."""
    running = _running_now()
    return None if running is None else max(0, running - _own_running())


def _running_now() -> int | None:
    """The tasks the kernel has running or ready now (``/proc/loadavg``'s fourth field, before the slash)."""
    try:
        return int(Path("/proc/loadavg").read_text(encoding="ascii").split()[3].split("/")[0])
    except (OSError, ValueError, IndexError):
        return None


def _own_running() -> int:
    """This process's threads the kernel has running or ready now (this one among them)."""
    own = 0
    try:
        tasks = list(Path("/proc/self/task").iterdir())
    except OSError:
        return 1
    for task in tasks:
        try:
            stat = (task / "stat").read_text(encoding="ascii", errors="replace")
        except OSError:
            continue
        if stat.rsplit(")", 1)[-1].split()[:1] == ["R"]:
            own += 1
    return max(own, 1)
