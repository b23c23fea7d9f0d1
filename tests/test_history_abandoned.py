"""A run whose process was killed reads as ``abandoned``, a live one as ``running``; older files read as recorded."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from history_helpers import invoke, rows, with_figure_columns
from loopback import LoopbackServer, Reply
from stopping import signalled_run

from tsuka_core.storage.history import SCHEMA_VERSION, connect
from tsuka_core.storage.history_query import list_runs, load_run
from tsuka_core.storage.owner import gone, start_marker, this_process

pytestmark = pytest.mark.usefixtures("fast_retries")


def slow(body: dict[str, Any], n: int) -> Reply:
    """Every answer 30 s late (cut short when the server stops)."""
    del body, n
    return Reply.text("late", delay=30.0)


@pytest.fixture(scope="module")
def killed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """A history holding one run whose process got SIGKILL mid-run, and the statuses read while it ran."""
    folder = tmp_path_factory.mktemp("killed")
    db = folder / "history.sqlite"
    seen: list[str] = []

    def running() -> bool:
        if not db.exists() or not rows(db, "SELECT id FROM runs"):
            return False
        seen.append(load_run(db, "last").status)
        return True

    with LoopbackServer(slow, models=["m1"]) as server:
        args = ["run", "m1", "--base-url", server.base_url, "--profiles", str(folder / "p.json"), "-e", "none",
                "--history-db", str(db)]  # fmt: skip
        result, _ = signalled_run(args, running, signal.SIGKILL)
    assert result.returncode == -signal.SIGKILL
    return db, seen


def test_a_live_run_reads_as_running(killed: tuple[Path, list[str]]) -> None:
    _, seen = killed
    assert seen
    assert set(seen) == {"running"}


def test_a_killed_run_reads_as_abandoned_in_runs_show_and_report(
    killed: tuple[Path, list[str]], tmp_path: Path
) -> None:
    db, _ = killed
    assert [tuple(r) for r in rows(db, "SELECT status FROM runs")] == [("running",)], "reading must not write"
    assert load_run(db, "last").status == "abandoned"
    assert [run.status for run, _ in list_runs(db)] == ["abandoned"]
    listed = invoke("runs", "--history-db", db)
    assert listed.exit_code == 0, listed.stderr
    assert "abandoned" in listed.stdout
    assert "running" not in listed.stdout
    report = invoke("report", "last", "-o", tmp_path / "r.html", "--history-db", db)
    assert report.exit_code == 0, report.stderr
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "· abandoned" in page
    assert "· running" not in page


def test_the_writer_is_known_by_pid_host_and_start(tmp_path: Path) -> None:
    pid, host, marker = this_process()
    assert (pid, host) == (os.getpid(), socket.gethostname())
    assert not gone(pid, host, marker)
    assert not gone(pid, "another-host", marker), "a process on another machine cannot be looked at"
    assert not gone(None, host, None), "a run of an older layout: nothing known"
    command = [sys.executable, "-c", "import os; print(os.getpid())"]
    ended = subprocess.run(command, check=True, capture_output=True, text=True)
    assert gone(int(ended.stdout), host, None)
    if start_marker(pid) is not None:  # Linux: a pid used again by another process is not the writer
        assert gone(pid, host, "another-boot:1")


def test_a_layout_3_file_reads_a_running_run_as_recorded_and_is_upgraded(
    killed: tuple[Path, list[str]], tmp_path: Path
) -> None:
    db, _ = killed
    old = tmp_path / "old.sqlite"
    shutil.copyfile(db, old)
    with closing(sqlite3.connect(old)) as conn:
        with_figure_columns(conn)  # layout 6 dropped them
        for column in ("pid", "host", "process_start"):
            conn.execute(f"ALTER TABLE runs DROP COLUMN {column}")
        conn.execute("ALTER TABLE steps DROP COLUMN fault")  # layout 4 added both
        conn.execute("ALTER TABLE levels DROP COLUMN record")  # layout 5 added it
        conn.execute("PRAGMA user_version = 3")
        conn.commit()
    before = old.read_bytes()
    assert load_run(old, 1).status == "running"
    assert old.read_bytes() == before, "reading upgraded the file"
    with closing(connect(old)):
        pass
    assert rows(old, "PRAGMA user_version")[0][0] == SCHEMA_VERSION == 6
    assert [tuple(r) for r in rows(old, "SELECT pid, host, process_start FROM runs")] == [(None, None, None)]
    assert load_run(old, 1).status == "running"
