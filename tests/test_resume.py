"""A run cut short keeps every answer it got; the same command again asks only the rest, and stores the level whole."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

from answerers import perfect, which_test
from faultserver import Fault, FaultPlan, FaultServer
from history_helpers import invoke
from stopping import signalled_run

from tsuka_core.storage.history_query import list_runs


def _answered(server: FaultServer, effort: str) -> int:
    return sum(1 for i, f in server.log if i.is_chat and i.effort == effort and f is Fault.NONE)


def _json_products(request: Any) -> bool:
    return bool(request.is_chat and which_test(request.body)[0] == "json_prodotti")


def _run(server: FaultServer, store: Path, *extra: str) -> list[str]:
    return ["run", "m1", "--base-url", server.base_url, "--profiles", str(store), "-e", "none", "-j", "1", *extra]


def test_ctrl_c_keeps_each_answer_and_the_same_command_asks_only_the_rest(tmp_path: Path) -> None:
    """The default suite's 7 tests at -j 1: the server stalls on the last three, Ctrl-C, then the same command."""
    store = tmp_path / "models_profile.json"
    late = {"catena_tool_distrattori", "trappola_astensione", "tool_write_append"}
    stalling = [True]
    stall = FaultPlan.always(Fault.STALL, when=lambda i: stalling[0] and i.is_chat and which_test(i.body)[0] in late)
    with FaultServer(perfect, stall, models=["m1"], stall_seconds=60) as server:
        done, _took = signalled_run(_run(server, store), lambda: _answered(server, "none") >= 4, signal.SIGINT)
        kept = _answered(server, "none")
        assert done.returncode == 130, done.stderr
        assert "run the same command again to resume" in done.stderr
        assert not store.exists()  # the level was not finished: nothing stored
        shown = invoke("show", "1", "m1@none", "--profiles", store)  # yet the history shows what it got
        assert shown.exit_code == 0, shown.stderr
        lines = shown.stdout.splitlines()
        assert [name for name in ("frase_8_parole", "json_annidato") if any(name in x and "1.00" in x for x in lines)]
        assert sum("not answered: the run was interrupted" in x for x in lines) == 3
        stalling[0] = False
        before = len([i for i, _ in server.log if i.is_chat])
        again = invoke(*_run(server, store))
        asked = len([i for i, _ in server.log if i.is_chat]) - before
    said = again.stdout + again.stderr
    assert again.exit_code == 0, said
    assert "resuming run 1 (interrupted)" in said
    total = 9  # the default suite's 7 tests, two of them in two steps
    assert kept == 4
    assert asked == total - kept  # only what the first run never got an answer to
    profile = json.loads(store.read_text(encoding="utf-8"))["profiles"]["m1@none"]
    assert len(profile["testResults"]) == 7
    assert f"Cache: {kept} answer(s) reused" in said
    history = tmp_path / ".tsuka" / "history.sqlite"
    assert [run.status for run, _ in list_runs(history)] == ["ok", "interrupted"]


def _chats(server: FaultServer) -> int:
    return sum(1 for i, _ in server.log if i.is_chat)


def test_no_resume_asks_everything_and_a_finished_run_is_never_resumed(tmp_path: Path) -> None:
    store = tmp_path / "models_profile.json"
    failing = [False]
    plan = FaultPlan.always(Fault.SERVER_ERROR, when=lambda i: failing[0] and _json_products(i))
    with FaultServer(perfect, plan, models=["m1"]) as server:
        first = invoke(*_run(server, store))
        second = invoke(*_run(server, store))  # the first finished: nothing to resume, every request asked
        assert first.exit_code == second.exit_code == 0
        assert "resuming" not in second.stdout + second.stderr
        assert _chats(server) == 18
        failing[0] = True
        assert invoke(*_run(server, store, "--retries", "0")).exit_code == 1
        failing[0] = False
        before = _chats(server)
        fresh = invoke(*_run(server, store, "--retries", "0", "--no-resume"))
        assert "resuming" not in fresh.stdout + fresh.stderr
        assert _chats(server) - before == 9
        failing[0] = True
        assert invoke(*_run(server, store, "--retries", "0")).exit_code == 1
        failing[0] = False
        before = _chats(server)
        resumed = invoke(*_run(server, store, "--retries", "0"))  # a failed run is resumed: its one missing answer
        assert "resuming run 5 (failed)" in resumed.stdout + resumed.stderr
        assert _chats(server) - before == 1


def test_a_changed_setting_is_another_measurement_and_is_not_resumed(tmp_path: Path) -> None:
    store = tmp_path / "models_profile.json"
    failing = [True]
    plan = FaultPlan.always(Fault.SERVER_ERROR, when=lambda i: failing[0] and _json_products(i))
    with FaultServer(perfect, plan, models=["m1"]) as server:
        assert invoke(*_run(server, store, "--retries", "0")).exit_code == 1
        failing[0] = False
        before = _chats(server)
        other = invoke(*_run(server, store, "--retries", "0", "--temperature", "0.5"))
        asked = _chats(server) - before
    assert other.exit_code == 0
    assert "resuming" not in other.stdout + other.stderr
    assert asked == 9


def test_answers_another_model_file_gave_behind_the_same_url_are_never_replayed(tmp_path: Path) -> None:
    store = tmp_path / "models_profile.json"
    failing, model_file = [True], ["/models/a.gguf"]
    plan = FaultPlan.always(Fault.SERVER_ERROR, when=lambda i: failing[0] and _json_products(i))
    props = lambda: {"model_path": model_file[0], "build_info": "b1"}  # noqa: E731
    with FaultServer(perfect, plan, models=["m1"], props=props) as server:
        assert invoke(*_run(server, store, "--retries", "0")).exit_code == 1
        failing[0] = False
        model_file[0] = "/models/b.gguf"  # the same URL now serves another model
        before = _chats(server)
        other = invoke(*_run(server, store, "--retries", "0"))
        asked = _chats(server) - before
    assert other.exit_code == 0, other.stderr
    assert asked == 9  # every answer asked again: none of model a's is replayed for model b
    profile = json.loads(store.read_text(encoding="utf-8"))["profiles"]["m1@none"]
    assert profile["server"]["modelFile"] == "/models/b.gguf"
