"""Fault-table rows for hostile answers, files that are not files, signals and a damaged history (run by the CLI).

Each row runs the ``tsuka`` command against the fault-injection server (or a
file made for it) and returns ``(kind, mode, injected, survived, lost,
outcome)``: a fault counts as survived when the command ended as the contract
says (one line, no traceback, the right exit status, nothing half-written), and
a profile as lost when one stored before is gone or changed.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from contextlib import closing
from pathlib import Path
from typing import Any, Protocol

from answerers import perfect
from faultserver import Fault, FaultPlan, FaultServer
from loopback import Reply

TSUKA = Path(sys.executable).with_name("tsuka")
Result = tuple[str, str, int, int, int, str]


class Bench(Protocol):
    """What a row needs of the fault table's shared state."""

    def scratch(self) -> Path: ...

    def seeded(self) -> tuple[Path, dict[str, Any]]: ...


def lost_profiles(before: dict[str, Any], store: Path, replaced_ok: Callable[[str, Any], bool]) -> int:
    """Profiles of ``before`` now missing, or replaced by something ``replaced_ok`` refuses; all when unreadable."""
    try:
        after = json.loads(store.read_text(encoding="utf-8"))["profiles"]
    except (OSError, ValueError, KeyError, TypeError):
        return len(before["profiles"])
    return sum(
        1
        for key, profile in before["profiles"].items()
        if key not in after or (after[key] != profile and not replaced_ok(key, after[key]))
    )


def tsuka(*args: str | Path, preexec: Callable[[], None] | None = None) -> subprocess.CompletedProcess[str]:
    """The ``tsuka`` command with a clean environment, its output on pipes (strict UTF-8), at most 180 s."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TSUKA_"))}
    env["PYTHONIOENCODING"] = "utf-8:strict"
    return subprocess.run(
        [str(TSUKA), *map(str, args)], capture_output=True, text=True, errors="replace", env=env, timeout=180,
        check=False, preexec_fn=preexec,
    )  # fmt: skip


def clean_exit(done: subprocess.CompletedProcess[str], status: int, needle: str = "") -> bool:
    """Exited ``status`` without a traceback, and ``needle`` (if any) is in one ``tsuka:`` line."""
    lines = [line for line in done.stderr.splitlines() if line.startswith("tsuka:")]
    said = not needle or any(needle in line for line in lines)
    return done.returncode == status and "Traceback" not in done.stderr and said


def history_status(path: Path) -> list[str]:
    with closing(sqlite3.connect(path)) as db:
        return [row[0] for row in db.execute("SELECT status FROM runs")]


# --- hostile answers ------------------------------------------------------------------------------------------------

LONE = "\\ud800"
TITLE = "\x1b]0;owned\x07"


def _lone_surrogates(body: dict[str, Any], n: int) -> Reply:
    good = perfect(body, n)
    if body.get("model") != "beta":
        return good
    if good.tool_calls:
        call = f'{{"id": "c{LONE}", "function": {{"name": "{good.tool_calls[0][0]}{LONE}", "arguments": "{{}}"}}}}'
        message = f'{{"role": "assistant", "content": null, "tool_calls": [{call}]}}'
    else:
        message = f'{{"role": "assistant", "content": "{LONE} {LONE}"}}'
    return Reply.body(f'{{"choices": [{{"message": {message}}}]}}'.encode())


def _control_sequences(body: dict[str, Any], n: int) -> Reply:
    good = perfect(body, n)
    if body.get("model") != "beta":
        return good
    if good.tool_calls:
        return Reply.tool_call(f"{good.tool_calls[0][0]}{TITLE}", {"a": TITLE})
    return Reply.text(f"{TITLE} \x1b]8;;http://evil.test\x1b\\link\x1b]8;;\x1b\\ \x9b2J")


def _absurd_usage(body: dict[str, Any], n: int) -> Reply:
    if body.get("model") != "beta":
        return perfect(body, n)
    message = json.dumps({"role": "assistant", "content": "Every morning the fisherman walks beside the river."})
    return Reply.body(f'{{"choices": [{{"message": {message}}}], "usage": {{"completion_tokens": {2**64}}}}}'.encode())


def answers(bench: Bench, kind: str) -> Result:
    """beta answers with lone surrogates, terminal control sequences or an absurd token count; the run goes on."""
    handler = {"lone surrogates": _lone_surrogates, "control sequences": _control_sequences,
               "absurd token count": _absurd_usage}[kind]  # fmt: skip
    store, before = bench.seeded()
    history = store.with_name("history.sqlite")
    with FaultServer(handler, models=["alpha", "beta"]) as server:
        done = tsuka("run", "all", "--base-url", server.base_url, "--profiles", store, "--history-db", history,
                     "-e", "none")  # fmt: skip
    injected = sum(1 for i, _ in server.log if i.is_chat and i.model == "beta")
    shown = done.stdout + done.stderr
    raw = any(c in shown for c in "\x1b\x07\x9b")
    ok = clean_exit(done, 0) and history_status(history) == ["ok"] and not raw
    lost = lost_profiles(before, store, lambda key, profile: key.endswith("@none"))
    return (f"answer: {kind}", "hostile", injected, injected if ok else 0, lost,
            f"exit {done.returncode}, history {history_status(history)}, shown escaped: {not raw}")  # fmt: skip


def broken_tool_calls(bench: Bench) -> Result:
    """One answer holds 100 tool calls whose arguments json-repair is slow on: one budget for the answer."""
    from tsuka_core.backends.http import JsonReply
    from tsuka_core.backends.openai import parse_completion

    slow = "{" * 300 + " some prose"
    calls = [{"id": f"c{i}", "function": {"name": "f", "arguments": slow}} for i in range(100)]
    data = {"choices": [{"message": {"role": "assistant", "content": None, "tool_calls": calls}}]}
    started = time.monotonic()
    response = parse_completion(JsonReply(data, 200, 0.1, 1), "POST bench")
    took = time.monotonic() - started
    ok = took < 2.0 and len(response.tool_calls) == 100
    return ("answer: 100 broken tool calls", "hostile", 1, int(ok), 0, f"read in {took:.1f} s")


# --- files that are not files ---------------------------------------------------------------------------------------


def not_a_file(bench: Bench, kind: str) -> Result:
    """The store is a device, a FIFO, or a link to another program's file: one line, nothing written."""
    folder = bench.scratch().parent
    foreign = folder / "settings.json"
    foreign.write_text('{"theme": "dark"}', encoding="utf-8")
    target = {"/dev/zero": Path("/dev/zero"), "a FIFO": folder / "fifo", "a foreign link": foreign}[kind]
    if kind == "a FIFO":
        os.mkfifo(target)
    store = folder / "models_profile.json"
    store.symlink_to(target)
    limit = 2 * 1024**3

    def bounded() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    with FaultServer(perfect) as server:
        started = time.monotonic()
        done = tsuka("run", "m1", "--base-url", server.base_url, "--profiles", store, "-e", "none", "--no-history",
                     preexec=bounded)  # fmt: skip
        took = time.monotonic() - started
    untouched = foreign.read_text(encoding="utf-8") == '{"theme": "dark"}'
    ok = clean_exit(done, 2, str(store)) and server.log == [] and untouched
    return (f"store is {kind}", "files", 1, int(ok), 0 if untouched else 1, f"refused in {took:.1f} s, one line")


# --- signals, output files ------------------------------------------------------------------------------------------


def stop_signal(bench: Bench, signum: int) -> Result:
    """alpha completes, beta stalls; the signal keeps alpha, closes the history and writes --junit/--json-file."""
    store, before = bench.seeded()
    folder = store.parent
    plan = FaultPlan.always(Fault.STALL, lambda i: i.model == "beta")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TSUKA_"))}
    with FaultServer(perfect, plan, models=["alpha", "beta"], stall_seconds=60) as server:
        process = subprocess.Popen(
            [str(TSUKA), "run", "all", "--base-url", server.base_url, "--profiles", str(store), "-e", "none",
             "-j", "16", "--history-db", str(folder / "h.sqlite"), "--junit", str(folder / "junit.xml"),
             "--json-file", str(folder / "run.json")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=env,
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and sum(1 for _, f in server.log if f is Fault.STALL) < 7:
            time.sleep(0.05)
        time.sleep(1.0)
        process.send_signal(signum)
        _, err = process.communicate(timeout=60)
    status = 128 + signum
    written = (folder / "junit.xml").exists() and json.loads((folder / "run.json").read_text("utf-8"))["interrupted"]
    closed = history_status(folder / "h.sqlite") == ["interrupted"]
    ok = process.returncode == status and "Traceback" not in err and written and closed
    lost = lost_profiles(before, store, lambda key, profile: key.startswith("alpha@"))
    name = signal.Signals(signum).name
    return (f"{name} during a run", "process", 1, int(ok), lost,
            f"exit {process.returncode}, history closed {closed}, CI files written {bool(written)}")  # fmt: skip


def unreachable_ci_files(bench: Bench) -> Result:
    folder = bench.scratch().parent
    with FaultServer(perfect) as server:
        gone = server.base_url
    done = tsuka("run", "all", "--base-url", gone, "--profiles", folder / "p.json", "--retries", "0",
                 "--junit", folder / "junit.xml", "--json-file", folder / "run.json")  # fmt: skip
    written = (folder / "junit.xml").exists() and "error" in json.loads((folder / "run.json").read_text("utf-8"))
    ok = clean_exit(done, 1, "cannot connect") and written
    return ("server unreachable", "process", 1, int(ok), 0, "one line; --junit and --json-file written")


# --- the history ----------------------------------------------------------------------------------------------------


def full_disk(bench: Bench) -> Result:
    """Files may not grow past 60 kB: the history fills up mid-run."""
    store, before = bench.seeded()
    history = store.with_name("h.sqlite")

    def small_disk() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (60_000, 60_000))

    with FaultServer(perfect, models=["alpha", "beta"]) as server:
        done = tsuka("run", "all", "--base-url", server.base_url, "--profiles", store, "--history-db", history,
                     "-e", "none", "-e", "low", "-j", "1", preexec=small_disk)  # fmt: skip
    ok = clean_exit(done, 2, "cannot write the run history") and history_status(history) == ["interrupted"]
    lost = lost_profiles(before, store, lambda key, profile: True)
    return ("disk full mid-run", "history", 1, int(ok), lost, "one line; history closed; store intact")


TAMPERINGS = (
    "UPDATE steps SET response = '{\"text\": 5}'",
    "UPDATE levels SET scores = '[1]'",
    "UPDATE tests SET score = 'high'",
    "UPDATE steps SET messages = 'not json'",
)


def tampered_history(bench: Bench) -> Result:
    folder = bench.scratch().parent
    history = folder / "h.sqlite"
    with FaultServer(perfect) as server:
        tsuka("run", "m1", "--base-url", server.base_url, "--profiles", folder / "p.json", "--history-db", history,
              "-e", "none")  # fmt: skip
    survived = 0
    for n, statement in enumerate(TAMPERINGS):
        copy = folder / f"tampered-{n}.sqlite"
        shutil.copyfile(history, copy)
        with closing(sqlite3.connect(copy)) as db:
            db.execute(statement)
            db.commit()
        commands: Sequence[Sequence[str | Path]] = (("show", "1", "m1@none", "frase_8_parole"),
                                                    ("report", "-o", folder / "r.html"))  # fmt: skip
        survived += all(clean_exit(tsuka(*c, "--history-db", copy), 2, "is damaged") for c in commands)
    return ("history changed by hand", "history", len(TAMPERINGS), survived, 0, "show and report: one line")


ROWS: Sequence[tuple[str, Callable[..., Result], tuple[Any, ...]]] = (
    ("lone surrogates", answers, ("lone surrogates",)),
    ("control sequences", answers, ("control sequences",)),
    ("absurd token count", answers, ("absurd token count",)),
    ("broken tool calls", broken_tool_calls, ()),
    ("/dev/zero", not_a_file, ("/dev/zero",)),
    ("FIFO", not_a_file, ("a FIFO",)),
    ("foreign link", not_a_file, ("a foreign link",)),
    ("SIGTERM", stop_signal, (signal.SIGTERM,)),
    ("SIGHUP", stop_signal, (signal.SIGHUP,)),
    ("unreachable", unreachable_ci_files, ()),
    ("full disk", full_disk, ()),
    ("tampered history", tampered_history, ()),
)
"""Every row this module adds, with its arguments after the bench."""
