"""The threads an in-process model computes with: the cores other programs leave free, said and recorded."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

from tsuka_core.backends import cpu
from tsuka_core.backends.cpu import ThreadChoice, busy_cores, choose_threads
from tsuka_core.record import LevelRecord


@pytest.fixture
def hog() -> Iterator[None]:
    """A program that keeps one core busy for as long as the test runs."""
    process = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield
    finally:
        process.kill()
        process.wait()


@pytest.mark.skipif(not os.path.exists("/proc/loadavg"), reason="counts running tasks from /proc (Linux)")
def test_a_program_keeping_a_core_busy_is_counted(hog: None) -> None:
    assert busy_cores() >= 1


def test_this_process_own_threads_are_not_counted_as_busy_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tasks running now less this process's own: a model loading while another decodes keeps its cores."""
    monkeypatch.setattr(cpu, "_own_running", lambda: 3)
    monkeypatch.setattr(cpu, "_running_now", lambda: 4)
    assert busy_cores() == 1
    monkeypatch.setattr(cpu, "_running_now", lambda: None)  # no /proc: the load average, rounded down
    assert busy_cores(load=1.9) == 1


@pytest.mark.parametrize(
    ("cores", "busy", "threads"),
    [(2, 0, 2), (2, 1, 1), (2, 5, 1), (8, 3, 5), (1, 1, 1)],
)
def test_the_threads_are_the_cores_other_programs_leave_free_and_at_least_one(
    monkeypatch: pytest.MonkeyPatch, cores: int, busy: int, threads: int
) -> None:
    monkeypatch.setattr(cpu, "usable_cores", lambda: cores)
    monkeypatch.setattr(cpu, "busy_cores", lambda load=None: busy)
    chosen = choose_threads()
    assert chosen.threads == threads
    assert chosen.busy == min(busy, cores - 1)
    assert not chosen.given


def test_an_option_wins_whatever_the_load(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cpu, "busy_cores", lambda load=None: 7)
    monkeypatch.setattr(cpu, "usable_cores", lambda: 2)
    chosen = choose_threads(3)
    assert (chosen.threads, chosen.given, chosen.busy) == (3, True, 1)  # what it ran beside is recorded all the same
    assert chosen.record()["chosenBy"] == "option"
    assert chosen.said() == "3 thread(s) on 2 core(s), 1 busy with other programs, as --option threads=3 set"


def test_the_choice_is_said_and_recorded_within_the_records_bounds() -> None:
    busy = ThreadChoice(threads=1, cores=2, busy=1, load=1.234, given=False)
    assert busy.said().startswith("1 thread(s): 1 of 2 core(s) busy with other programs (load 1.2)")
    assert busy.record() == {"threads": 1, "cores": 2, "busyCores": 1, "load": 1.23, "chosenBy": "free cores"}
    assert LevelRecord.parse({"compute": busy.record()}).damaged == {}
    idle = ThreadChoice(threads=2, cores=2, busy=0, load=0.1, given=False)
    assert idle.said().startswith("2 thread(s), one per core")
