"""Inject every fault tsuka must survive and print, per fault kind: how often it was injected, survived, profiles lost.

Server faults come from the fault-injection server of the test suite
(``tests/faultserver.py``, used by path), on 127.0.0.1, in three modes:

- ``transient``: 30 % of requests get the fault, never more than 3 times
  running for one request; every profile must equal a fault-free run's.
- ``persistent``: every attempt of one test of one model fails; the test is an
  error naming the cause, its level is not stored, the earlier profile stays.
- ``malformed``: every answer of one model is broken that way; checks judge
  what can be read, with a detail, and the level is stored.
- ``hostile``: every answer of one model is built to be slow to read (deep
  nesting, a megabyte of brackets or ``<think>``); it must be judged in
  :data:`HOSTILE_SECONDS`.

Then the store and the process: writers killed with SIGKILL mid-write, eight
writers at once, a corrupt store, a held lock, Ctrl-C during a run, and a
server that echoes the API key back. Last, the rows of ``bench/_fault_rows.py``:
answers holding lone surrogates, terminal control sequences or an absurd token
count, 100 broken tool calls in one answer, a store that is a device, a FIFO or
a link to a foreign file, SIGTERM and SIGHUP during a run, an unreachable
server with CI files asked for, a full disk and a history changed by hand. A fault counts as survived when what
followed is what the contract says; a profile counts as lost when a valid
profile stored before the fault is gone or was replaced by anything but a new
complete measurement.

Usage::

    python bench/fault_table.py            # everything, about two minutes
    python bench/fault_table.py --quick    # one effort level, fewer SIGKILL trials
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from _fault_rows import ROWS, lost_profiles  # noqa: E402
from answerers import fooled, perfect, tool_shy, which_test  # noqa: E402
from faultserver import (  # noqa: E402
    MALFORMED,
    PERSISTENT,
    RETRYABLE,
    Fault,
    FaultPlan,
    FaultServer,
    Incoming,
    comparable,
    measure,
    openai_registry,
)
from loopback import Reply  # noqa: E402

from tsuka_core.backends import http  # noqa: E402
from tsuka_core.errors import StoreError  # noqa: E402
from tsuka_core.plugins.registry import Registry  # noqa: E402
from tsuka_core.storage import store as store_module  # noqa: E402
from tsuka_core.storage.layout import dumps_store  # noqa: E402
from tsuka_core.storage.store import ProfileStore  # noqa: E402
from tsuka_core.suite.loading import load_suite  # noqa: E402
from tsuka_core.suite.model import Suite  # noqa: E402
from tsuka_core.terms import Effort  # noqa: E402

TSUKA = Path(sys.executable).with_name("tsuka")
MODELS = ("alpha", "beta")
KEY = "sk-fault-table-3c9e1f7a5b2d4c6e8f0a"


@dataclass
class Row:
    """One line of the table."""

    kind: str
    mode: str
    injected: int
    survived: int
    lost: int
    outcome: str


def mixed(body: dict[str, Any], n: int) -> Reply:
    """alpha: small at none, medium at low, large above; beta: medium everywhere."""
    if body.get("model") == "alpha":
        return {"none": tool_shy, "low": fooled}.get(str(body.get("reasoning_effort", "none")), perfect)(body, n)
    return fooled(body, n) if body.get("model") == "beta" else perfect(body, n)


class Bench:
    """Shared state: the suite, the registry, a fault-free baseline and a scratch folder."""

    def __init__(self, folder: Path, efforts: Sequence[Effort]) -> None:
        self.folder = folder
        self.efforts = list(efforts)
        self.registry: Registry = openai_registry()
        self.suite: Suite = load_suite(ROOT / "benchmarks", self.registry)
        self.count = 0
        store = self.scratch()
        with FaultServer(mixed, models=MODELS) as server:
            report, _ = measure(server.base_url, store, self.suite, self.registry, efforts=self.efforts)
        if not report.ok:
            raise SystemExit(f"the fault-free baseline failed: {report.failed}")
        self.baseline: dict[str, Any] = json.loads(store.read_text(encoding="utf-8"))

    def scratch(self) -> Path:
        """A fresh store path in a folder of its own."""
        self.count += 1
        folder = self.folder / f"case-{self.count}"
        folder.mkdir()
        return folder / "models_profile.json"

    def seeded(self) -> tuple[Path, dict[str, Any]]:
        """A store holding the baseline profiles plus an entry of a model no run here touches."""
        store = self.scratch()
        data = json.loads(json.dumps(self.baseline))
        data["profiles"]["bystander@none"] = {"model": "bystander", "tier": "small", "note": "must survive"}
        store.write_text(dumps_store(data), encoding="utf-8")
        return store, data


def digest(incoming: Incoming) -> str:
    return json.dumps([incoming.path, incoming.body], sort_keys=True)


# --- server faults --------------------------------------------------------------------------------------------------


def transient(bench: Bench, fault: Fault) -> Row:
    store, before = bench.seeded()
    plan = FaultPlan.rate([fault], 0.3, seed=7, max_in_a_row=3)
    with FaultServer(mixed, plan, models=MODELS) as server:
        report, _ = measure(server.base_url, store, bench.suite, bench.registry, efforts=bench.efforts, retries=5,
                            timeout=1.5)  # fmt: skip
    log = server.log
    answered = {digest(i) for i, f in log if f is Fault.NONE}
    injected = sum(1 for _, f in log if f is fault)
    recovered = sum(1 for i, f in log if f is fault and digest(i) in answered)

    def same(key: str, profile: Any) -> bool:
        return comparable(profile) == comparable(bench.baseline["profiles"].get(key, {}))

    lost = lost_profiles(before, store, same)
    equal = report.ok and all(same(k, p) for k, p in report.profiles.items())
    return Row(fault.value, "transient", injected, recovered if equal else 0, lost,
               "profiles equal a fault-free run" if equal else f"DIFFERS: {report.failed[:1]}")  # fmt: skip


def persistent(bench: Bench, fault: Fault) -> Row:
    store, before = bench.seeded()
    plan = FaultPlan.always(fault, lambda i: i.model == "beta" and which_test(i.body)[0] == "frase_8_parole")
    with FaultServer(mixed, plan, models=MODELS, stall_seconds=5) as server:
        timeout = 0.6 if fault in (Fault.STALL, Fault.TRICKLE_BODY) else 10.0  # reading 32 MB can take a while
        report, heard = measure(server.base_url, store, bench.suite, bench.registry, efforts=bench.efforts, retries=2,
                                timeout=timeout, concurrency=8)  # fmt: skip
    faulted = [i for i, f in server.log if f is fault]
    errored = {(m, e) for m, e, r in heard.done if r.status == "error" and r.test.name == "frase_8_parole"}
    named = {line.split()[0] for line in report.failed if "frase_8_parole" in line}
    survived = sum(1 for i in faulted if (i.model, i.effort) in errored and f"{i.model}@{i.effort}" in named)
    kept = lambda key, profile: not key.startswith("beta@")  # noqa: E731  (alpha may be re-measured; beta must not)
    lost = lost_profiles(before, store, kept)
    outcome = f"test errored, level not stored, cause named, exit {0 if report.ok else 1}"
    return Row(fault.value, "persistent", len(faulted), survived, lost, outcome)


def malformed(bench: Bench, fault: Fault) -> Row:
    store, before = bench.seeded()
    with FaultServer(mixed, FaultPlan.always(fault, lambda i: i.model == "beta"), models=MODELS) as server:
        report, heard = measure(server.base_url, store, bench.suite, bench.registry, efforts=bench.efforts[:1],
                                timeout=30)  # fmt: skip
    judged = {
        (m, e, r.test.name)
        for m, e, r in heard.done
        if r.status == "ok" and all(c.outcome.detail for s in r.steps for c in s.checks)
    }
    survived = sum(1 for i, f in server.log if f is fault and (i.model, i.effort, which_test(i.body)[0]) in judged)
    measured = set(report.profiles)
    lost = lost_profiles(before, store, lambda key, profile: key in measured)
    return Row(fault.value, "malformed", server.injected[fault], survived, lost,
               "checks judged what could be read" if report.ok else f"FAILED: {report.failed[:1]}")  # fmt: skip


# --- hostile answers -----------------------------------------------------------------------------------------------

HOSTILE = {
    "answer: JSON nested 200k deep": "[" * 200_000 + "]" * 200_000,
    "answer: 1 MB of '{'": "{" * 1_000_000,
    "answer: 1 MB of '<think>'": "<think>" * 150_000,
    "answer: 300 '{' then 1 MB": "{" * 300 + "x" * 1_000_000,
    "answer: one 24 KB token": "a" + "!" * 24_000 + "b",
}
HOSTILE_SECONDS = 10.0
"""How long the nine answers of one level may take to judge (the quadratic cases took minutes to hours)."""


def hostile(bench: Bench, kind: str, content: str) -> Row:
    """beta answers ``content`` as its text and, where a tool call is due, as the call's arguments."""
    store, before = bench.seeded()

    def answer(body: dict[str, Any], n: int) -> Reply:
        good = mixed(body, n)
        if body.get("model") != "beta":
            return good
        return Reply.tool_call(good.tool_calls[0][0], content) if good.tool_calls else Reply.text(content)

    with FaultServer(answer, models=MODELS) as server:
        started = time.monotonic()
        report, heard = measure(server.base_url, store, bench.suite, bench.registry, efforts=bench.efforts[:1],
                                timeout=60)  # fmt: skip
        took = time.monotonic() - started
    injected = sum(1 for i, _ in server.log if i.is_chat and i.model == "beta")
    judged = sum(len(r.steps) for m, _, r in heard.done if m == "beta" and r.status == "ok")
    measured = set(report.profiles)
    lost = lost_profiles(before, store, lambda key, profile: key in measured)
    in_time = took < HOSTILE_SECONDS
    return Row(kind, "hostile", injected, judged if in_time else 0, lost, f"judged in {took:.1f} s")


# --- the store and the process ------------------------------------------------------------------------------------


def sigkill(bench: Bench, trials: int) -> Row:
    store = bench.scratch()
    old = {"profiles": {f"old-{i}@none": {"model": f"old-{i}", "tier": "small", "n": i} for i in range(40)}}
    new = {f"new-{i}@none": {"model": f"new-{i}", "tier": "large", "n": i} for i in range(40)}
    old_bytes = dumps_store(old).encode()
    store.write_bytes(old_bytes)
    started = time.perf_counter()
    ProfileStore(store).update(new, {})
    duration, new_bytes = time.perf_counter() - started, store.read_bytes()
    survived = lost = 0
    for trial in range(trials):
        store.write_bytes(old_bytes)
        pid = os.fork()
        if pid == 0:
            try:
                ProfileStore(store).update(new, {})
            finally:
                os._exit(0)
        time.sleep(duration * 1.3 * trial / max(trials - 1, 1))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        after = store.read_bytes()
        if after in (old_bytes, new_bytes):
            survived += 1
        else:
            lost += len(old["profiles"])
    return Row("writer SIGKILLed mid-write", "store", trials, survived, lost, "old or new file, never torn")


def concurrent_writers(bench: Bench, writers: int = 8) -> Row:
    store = bench.scratch()
    go = store.with_name("go")
    pids = []
    for w in range(writers):
        pid = os.fork()
        if pid == 0:
            try:
                while not go.exists():
                    time.sleep(0.001)
                ProfileStore(store, lock_timeout=60).update({f"writer-{w}@none": {"model": f"writer-{w}"}}, {})
            finally:
                os._exit(0)
        pids.append(pid)
    go.touch()
    for pid in pids:
        os.waitpid(pid, 0)
    landed = len(ProfileStore(store).read().profiles)
    return Row(f"{writers} writers at once", "store", writers, landed, writers - landed, "every profile landed")


def corrupt_store(bench: Bench) -> Row:
    store = bench.scratch()
    raw = b'{"profiles": {"keep@none": {"tier": "large"}'
    store.write_bytes(raw)
    with FaultServer(perfect) as server:
        try:
            measure(server.base_url, store, bench.suite, bench.registry, models=["m1"], efforts=["none"])
            refused = False
        except StoreError:
            refused = True
    ok = refused and store.read_bytes() == raw and server.log == []
    return Row("corrupt store", "store", 1, int(ok), 0 if store.read_bytes() == raw else 1,
               "refused before any request, file untouched" if ok else "NOT REFUSED")  # fmt: skip


def locked_store(bench: Bench) -> Row:
    store, before = bench.seeded()
    script = "import sys; from filelock import FileLock; lock = FileLock(sys.argv[1]); lock.acquire(); "
    script += "print('held', flush=True); sys.stdin.read()"  # keep `lock`: a lock object collected is released
    holder = subprocess.Popen(
        [sys.executable, "-c", script, f"{store}.lock"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    saved = store_module.DEFAULT_LOCK_TIMEOUT
    store_module.DEFAULT_LOCK_TIMEOUT = 0.5
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "held"
        with FaultServer(mixed, models=MODELS) as server:
            try:
                measure(server.base_url, store, bench.suite, bench.registry, efforts=bench.efforts[:1])
                said = "STORED ANYWAY"
            except StoreError:
                said = "cannot lock within 0.5 s: one-line error, nothing written"
    finally:
        store_module.DEFAULT_LOCK_TIMEOUT = saved
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)
    lost = lost_profiles(before, store, lambda key, profile: False)
    return Row("store locked past timeout", "store", 1, int(lost == 0 and said.startswith("cannot")), lost, said)


def ctrl_c(bench: Bench) -> Row:
    store, before = bench.seeded()
    plan = FaultPlan.always(Fault.STALL, lambda i: i.model == "beta" and i.effort == "low")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TSUKA_"))}
    with FaultServer(mixed, plan, models=MODELS, stall_seconds=60) as server:
        process = subprocess.Popen(
            [str(TSUKA), "run", "all", "--base-url", server.base_url, "--profiles", str(store), "-e", "none", "-e",
             "low", "-j", "16"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # noqa: PLW1509
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and sum(1 for _, f in server.log if f is Fault.STALL) < 7:
            time.sleep(0.05)
        time.sleep(1.0)
        process.send_signal(signal.SIGINT)
        sent = time.monotonic()
        try:
            _, err = process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            _, err = process.communicate()
        took = time.monotonic() - sent
    after = json.loads(store.read_text(encoding="utf-8"))["profiles"]
    half_done = after.get("beta@low") != before["profiles"].get("beta@low")
    lost = lost_profiles(before, store, lambda key, profile: key != "beta@low")
    ok = process.returncode == 130 and took < 10 and not half_done and "Traceback" not in err
    said = next((line for line in err.splitlines() if line.startswith("tsuka: interrupted")), "")
    tells = "kept" in said or "nothing was stored" in said
    outcome = f"exit {process.returncode} after {took:.1f} s, complete levels kept"
    return Row("Ctrl-C during a run", "process", 1, int(ok), lost, outcome + ("" if tells else "; NOT SAID WHICH"))


def echoed_key(bench: Bench) -> Row:
    store = bench.scratch()

    def echo(body: dict[str, Any], n: int) -> Reply:
        return (
            Reply.error(401, f"Incorrect API key provided: {KEY}") if body.get("model") == "beta" else perfect(body, n)
        )

    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TSUKA_"))}, "OPENAI_API_KEY": KEY}
    with FaultServer(echo, models=MODELS) as server:
        done = subprocess.run(
            [str(TSUKA), "run", "all", "--base-url", server.base_url, "--profiles", str(store), "-e", "none",
             "--retries", "0", "--json"], capture_output=True, timeout=180, check=False, env=env, cwd=store.parent,
        )  # fmt: skip
    echoes = sum(1 for i, _ in server.log if i.model == "beta")
    artefacts = [done.stdout, done.stderr] + [p.read_bytes() for p in store.parent.rglob("*") if p.is_file()]
    leaked = sum(1 for data in artefacts if KEY.encode() in data)
    return Row("server echoes the API key", "secrets", echoes, echoes if not leaked else 0, 0,
               f"key in {leaked} of {len(artefacts)} artefacts")  # fmt: skip


def _row(run: Callable[..., tuple[str, str, int, int, int, str]], bench: Bench, args: tuple[Any, ...]) -> Row:
    return Row(*run(bench, *args))


# --- the table ------------------------------------------------------------------------------------------------------


def print_table(rows: Sequence[Row]) -> None:
    head = f"{'fault kind':<30} {'mode':<10} {'injected':>8} {'survived':>8} {'profiles lost':>13}  outcome"
    print(head)
    print("-" * len(head))
    for row in rows:
        print(f"{row.kind:<30} {row.mode:<10} {row.injected:>8} {row.survived:>8} {row.lost:>13}  {row.outcome}")
    total = Counter[str]()
    for row in rows:
        total.update(injected=row.injected, survived=row.survived, lost=row.lost)
    print("-" * len(head))
    print(f"{'total':<30} {'':<10} {total['injected']:>8} {total['survived']:>8} {total['lost']:>13}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one effort level and 20 SIGKILL trials")
    args = parser.parse_args(argv)
    http.BACKOFF_BASE = 0.001  # backoff is tested elsewhere; here it would only add waiting
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "TSUKA_PROFILES"):
        os.environ.pop(name, None)
    efforts: list[Effort] = ["none"] if args.quick else ["none", "low"]
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="tsuka-faults-") as scratch:
        bench = Bench(Path(scratch), efforts)
        steps: list[Callable[[], Row]] = [partial(transient, bench, f) for f in RETRYABLE]
        steps += [partial(persistent, bench, f) for f in PERSISTENT]
        steps += [partial(malformed, bench, f) for f in MALFORMED]
        steps += [partial(hostile, bench, k, c) for k, c in HOSTILE.items()]
        steps += [
            lambda: sigkill(bench, 20 if args.quick else 50),
            lambda: concurrent_writers(bench),
            lambda: corrupt_store(bench),
            lambda: locked_store(bench),
            lambda: ctrl_c(bench),
            lambda: echoed_key(bench),
        ]
        steps += [partial(_row, run, bench, args) for _, run, args in ROWS]
        for step in steps:
            started = time.monotonic()
            row = step()
            rows.append(row)
            print(f"  {row.kind} ({row.mode}): {time.monotonic() - started:.1f} s", file=sys.stderr, flush=True)
    print_table(rows)
    failed = [r for r in rows if r.lost or r.survived != r.injected or "NOT SAID" in r.outcome]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
