"""SIGTERM and SIGHUP stop a run as Ctrl-C does, and the CI files are written however a run ends."""

from __future__ import annotations

import json
import signal
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from answerers import perfect
from faultserver import Fault, FaultPlan, FaultServer
from history_helpers import invoke, rows
from loopback import LoopbackServer
from stopping import signalled_run, stored_level

PROMPT_EXIT = 20.0
"""Seconds a run may take to stop after the signal."""

pytestmark = pytest.mark.usefixtures("fast_retries")


def stopped_run(
    server: FaultServer, folder: Path, signum: int, *args: str
) -> tuple[subprocess.CompletedProcess[str], float]:
    """``tsuka run`` where alpha completes and beta stalls; ``signum`` once alpha is stored; result and seconds."""
    store = folder / "models_profile.json"
    command = [
        "run", "all", "--base-url", server.base_url, "--profiles", str(store), "-j", "16", "-e", "none",
        "--history-db", str(folder / "history.sqlite"), "--junit", str(folder / "junit.xml"),
        "--json-file", str(folder / "run.json"), *args,
    ]  # fmt: skip
    # settle: the alpha level recorded in the history too
    return signalled_run(command, stored_level(store, "alpha@none"), signum, exit_within=PROMPT_EXIT + 20)


def ci_files(folder: Path) -> tuple[ET.Element, dict[str, Any]]:
    """The JUnit root and the JSON file a run wrote in ``folder``."""
    junit = ET.parse(folder / "junit.xml").getroot()
    data: dict[str, Any] = json.loads((folder / "run.json").read_text(encoding="utf-8"))
    return junit, data


def run_error(junit: ET.Element) -> str:
    """The message of the ``tsuka``/``run`` error case of a JUnit file."""
    (error,) = junit.findall("./testsuite[@name='tsuka']/testcase[@name='run']/error")
    return error.attrib["message"]


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129), (signal.SIGINT, 130)])
def test_a_stop_signal_keeps_complete_levels_closes_the_history_and_writes_ci_files(
    tmp_path: Path, signum: int, status: int
) -> None:
    plan = FaultPlan.always(Fault.STALL, when=lambda i: i.model == "beta")
    with FaultServer(perfect, plan, models=["alpha", "beta"], stall_seconds=60) as server:
        done, took = stopped_run(server, tmp_path, signum)

    assert done.returncode == status, done.stderr
    assert took < PROMPT_EXIT
    assert "Traceback" not in done.stderr
    profiles = json.loads((tmp_path / "models_profile.json").read_text(encoding="utf-8"))["profiles"]
    assert list(profiles) == ["alpha@none"]
    history = tmp_path / "history.sqlite"
    assert [r["status"] for r in rows(history, "SELECT status FROM runs")] == ["interrupted"]
    assert [r["model"] for r in rows(history, "SELECT model FROM levels")] == ["alpha"]
    junit, data = ci_files(tmp_path)
    assert "interrupted" in run_error(junit)
    assert data["interrupted"] is True
    assert list(data["profiles"]) == ["alpha@none"]
    if signum != signal.SIGINT:
        assert f"interrupted by {signal.Signals(signum).name}" in done.stderr


def test_an_unreachable_server_still_writes_the_ci_files(tmp_path: Path) -> None:
    with LoopbackServer() as server:
        gone = server.base_url
    result = invoke(
        "run", "all", "--base-url", gone, "--profiles", tmp_path / "p.json", "--retries", "0",
        "--junit", tmp_path / "junit.xml", "--json-file", tmp_path / "run.json",
    )  # fmt: skip
    assert result.exit_code == 1
    junit, data = ci_files(tmp_path)
    assert "127.0.0.1" in run_error(junit)
    assert data["error"] == run_error(junit)
    assert data["failed"] == [data["error"]]


def test_a_damaged_store_still_writes_the_ci_files(tmp_path: Path) -> None:
    store = tmp_path / "models_profile.json"
    store.write_text("{torn", encoding="utf-8")
    with LoopbackServer() as server:
        result = invoke(
            "run", "all", "--base-url", server.base_url, "--profiles", store,
            "--junit", tmp_path / "junit.xml", "--json-file", tmp_path / "run.json",
        )  # fmt: skip
    assert result.exit_code == 2
    assert server.bodies == []
    junit, data = ci_files(tmp_path)
    assert "is not valid JSON" in run_error(junit)
    assert "is not valid JSON" in data["error"]


@pytest.mark.parametrize("option", ["--junit", "--json-file"])
def test_a_ci_file_through_a_link_to_nothing_is_refused_before_any_request(tmp_path: Path, option: str) -> None:
    (tmp_path / "reports").symlink_to(tmp_path / "elsewhere")
    with LoopbackServer() as server:
        result = invoke("run", "all", "--base-url", server.base_url, "--profiles", tmp_path / "p.json",
                        option, tmp_path / "reports" / "ci" / "out")  # fmt: skip
    assert result.exit_code == 2
    assert server.requests == []
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"tsuka: error: {option} {tmp_path / 'reports' / 'ci' / 'out'}: cannot create its folder (")
    assert "reports is a symbolic link to" in line
    assert not (tmp_path / "p.json").exists()
    assert not (tmp_path / "elsewhere").exists()
