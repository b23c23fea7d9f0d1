"""Ctrl-C during a run: it stops promptly, keeps the levels that completed, stores nothing half-done, says so."""

from __future__ import annotations

import json
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from answerers import perfect
from faultserver import Fault, FaultPlan, FaultServer
from stopping import signalled_run

PROMPT_EXIT = 20.0
"""Seconds a run may take to stop after Ctrl-C (it should take well under one)."""
EARLIER = {"model": "beta", "tier": "large", "note": "an earlier measurement, to be kept"}


def seeded_store(path: Path) -> bytes:
    path.write_text(json.dumps({"profiles": {"beta@low": EARLIER}, "recommendations": {"beta": "low"}}), "utf-8")
    return path.read_bytes()


def interrupted_run(
    server: FaultServer, store: Path, ready: Callable[[], bool], *args: str
) -> tuple[subprocess.CompletedProcess[str], float]:
    """Start ``tsuka run``, wait until ``ready()``, send SIGINT; the result and seconds to exit."""
    command = ["run", "all", "--base-url", server.base_url, "--profiles", str(store), "-j", "16", *args]
    # settle: let the last answers be judged
    return signalled_run(command, ready, signal.SIGINT, exit_within=PROMPT_EXIT + 20)


def answered(server: FaultServer, model: str, effort: str) -> int:
    return sum(1 for i, f in server.log if i.model == model and i.effort == effort and f is Fault.NONE and i.is_chat)


def stalled(server: FaultServer) -> int:
    return sum(1 for _, f in server.log if f is Fault.STALL)


def stored(store: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(store.read_text(encoding="utf-8"))
    return data


def interrupted_line(done: subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in (done.stdout + done.stderr).splitlines() if line.startswith("tsuka: interrupted")]
    assert len(lines) == 1, done.stderr
    return lines[0]


def test_ctrl_c_keeps_the_completed_levels_and_nothing_half_done(tmp_path: Path) -> None:
    """alpha finishes both levels, beta finishes none but its low level hangs: Ctrl-C keeps three, says so."""
    store = tmp_path / "models_profile.json"
    seeded_store(store)
    plan = FaultPlan.always(Fault.STALL, when=lambda i: i.model == "beta" and i.effort == "low")
    with FaultServer(perfect, plan, models=["alpha", "beta"], stall_seconds=60) as server:

        def ready() -> bool:
            alpha_done = store.exists() and "alpha@low" in store.read_text(encoding="utf-8")
            return alpha_done and answered(server, "beta", "none") == 9 and stalled(server) == 7

        done, took = interrupted_run(server, store, ready, "-e", "none", "-e", "low")

    assert done.returncode == 130
    assert took < PROMPT_EXIT
    assert "Traceback" not in done.stderr
    data = stored(store)
    assert sorted(data["profiles"]) == ["alpha@low", "alpha@none", "beta@low", "beta@none"]
    assert data["profiles"]["beta@low"] == EARLIER  # the level that was running is not stored over it
    assert data["profiles"]["beta@none"]["testsHash"] == data["profiles"]["alpha@none"]["testsHash"]
    assert len(data["profiles"]["beta@none"]["testResults"]) == 7
    line = interrupted_line(done)
    for key in ("alpha@none", "alpha@low", "beta@none"):
        assert key in line, line
    assert "beta@low" not in line.replace("beta@low was not", "")
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_ctrl_c_before_any_level_completes_stores_nothing_and_says_so(tmp_path: Path) -> None:
    store = tmp_path / "models_profile.json"
    before = seeded_store(store)
    with FaultServer(perfect, FaultPlan.always(Fault.STALL), models=["alpha", "beta"], stall_seconds=60) as server:
        # each model's first request goes alone: both stalled means both models are under way
        done, took = interrupted_run(server, store, lambda: stalled(server) >= 2, "-e", "low")

    assert done.returncode == 130
    assert took < PROMPT_EXIT
    assert "Traceback" not in done.stderr
    assert store.read_bytes() == before
    assert "nothing was stored" in interrupted_line(done)
