"""How much time, CPU and memory tsuka itself adds to a benchmark run, measured on whole ``tsuka run`` processes.

A loopback OpenAI-compatible server (``bench/_server.py``, standard library
only) answers every chat completion after a fixed latency with a canned answer
and no compute. A generated suite of N single-step tests (``bench/_suite.py``:
text, regex, JSON, JMESPath and tool-call checks, every one really evaluated)
is run as a user runs it: one ``tsuka`` process per run, its output in files.

Usage (needs only tsuka's own dependencies)::

    python bench/perf.py             # the full table, a few minutes
    python bench/perf.py --quick     # one run per row, no N=2000 row at 200 ms
    python bench/perf.py --sweep     # the four-level sweep of several models
    python bench/perf.py --json out.json
    python bench/perf.py --tree /tmp/old --tree .   # two source trees, row by row

For every concurrency C and latency L it prints the median wall time of the
repeats, the ideal time ``ceil(requests / C) * L`` (a run can never be faster),
the overhead ``wall - ideal`` (process start-up included), the ratio
``wall / ideal``, requests per second, CPU time and peak RSS of the ``tsuka``
process, and the most requests the server saw in flight at once. Start-up is
measured apart, and the targets are checked at the end. The line formats are
stable so that runs can be compared with ``diff``.

With ``--tree`` given twice or more, every row is measured for each source
tree in turn (its folder first on ``PYTHONPATH``), the runs of a row
interleaved so that a change in the machine's load falls on every tree alike;
each line ends with the tree's name and the overheads are compared at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.metadata
import json
import math
import os
import platform
import shutil
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _measure import (
    POOL_HEAD,
    Capacity,
    LoopbackProcess,
    PoolResult,
    Sample,
    measure_capacity,
    measure_pool,
    run_process,
    server_stats,
)
from _suite import write_suite

FORMAT_VERSION = 2
"""Bumped whenever a line of the output changes shape."""

RUN_MODEL = "bench-a"
SWEEP_MODELS = ("bench-a", "bench-b", "bench-c")
EFFORT_LEVELS = 4
LARGE_LATENCY_MS = 20
"""The latency of the large-suite rows: a fast serving cluster."""
LARGE_CONCURRENCY = 64


@dataclass
class Row:
    """One measured configuration: its samples and what the server saw."""

    mode: str
    n: int
    requests: int
    latency_ms: int
    concurrency: int
    samples: list[Sample] = field(default_factory=list)
    max_in_flight: int = 0
    connections: int = 0
    """The most connections the server accepted in one run of the row."""
    tree: str = ""
    """The name of the source tree measured (empty when only one is)."""
    failure: str = ""
    """Why the row could not be measured (empty when it was)."""

    @property
    def wall(self) -> float:
        """Median wall seconds."""
        return statistics.median(s.wall for s in self.samples)

    @property
    def cpu(self) -> float:
        """Median CPU seconds (user + system)."""
        return statistics.median(s.cpu for s in self.samples)

    @property
    def rss(self) -> float:
        """Highest peak RSS of the repeats, MiB."""
        return max(s.rss_mb for s in self.samples)

    @property
    def ideal(self) -> float:
        """``ceil(requests / C) * latency``: the least time the requests alone need."""
        return math.ceil(self.requests / self.concurrency) * self.latency_ms / 1000

    @property
    def overhead(self) -> float:
        """Wall minus ideal."""
        return self.wall - self.ideal

    @property
    def ratio(self) -> float | None:
        """Wall over ideal (None at latency 0)."""
        return self.wall / self.ideal if self.ideal > 0 else None

    @property
    def per_second(self) -> float:
        """Requests per second over the whole process."""
        return self.requests / self.wall

    @property
    def ms_per_test(self) -> float:
        """The overhead spread over the tests, in milliseconds (start-up included)."""
        return 1000 * self.overhead / self.n


@dataclass
class Startup:
    """One start-up measurement: a command and its samples."""

    label: str
    samples: list[Sample] = field(default_factory=list)

    @property
    def wall(self) -> float:
        """Median wall seconds."""
        return statistics.median(s.wall for s in self.samples)


@dataclass
class Bench:
    """Everything one invocation needs: options, paths, the child environment, and what it measured."""

    args: argparse.Namespace
    tmp: Path
    tsuka: str
    env: dict[str, str]
    rows: list[Row] = field(default_factory=list)
    startups: list[Startup] = field(default_factory=list)
    capacities: list[Capacity] = field(default_factory=list)
    pools: list[PoolResult] = field(default_factory=list)
    suites: dict[int, Path] = field(default_factory=dict)
    trees: dict[str, dict[str, str]] = field(default_factory=dict)
    """The child environment of each source tree, by name (one unnamed entry without ``--tree``)."""

    def suite(self, n: int) -> Path:
        """The generated suite of ``n`` tests (written once)."""
        if n not in self.suites:
            folder = self.tmp / f"suite-{n}"
            write_suite(folder, n)
            self.suites[n] = folder
        return self.suites[n]


def child_env(tmp: Path) -> dict[str, str]:
    """The environment of every ``tsuka`` process: as a user's, with a warm bytecode cache.

    ``PYTHONDONTWRITEBYTECODE`` would recompile tsuka on every start (an
    installed package has its bytecode), and ``PYTHONUNBUFFERED`` is not what a
    user runs with; both are dropped, and bytecode is cached under ``tmp``.
    Variables that would change what ``tsuka run`` does are dropped too.
    """
    drop = {"PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED", "OPENAI_BASE_URL", "OPENAI_API_KEY", "TSUKA_PROFILES"}
    env = {k: v for k, v in os.environ.items() if k not in drop and k != "TSUKA_LOAD_PLUGINS"}
    env["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
    return env


def tree_envs(env: dict[str, str], trees: Sequence[Path] | None) -> dict[str, dict[str, str]]:
    """The child environment per source tree, by the tree's folder name (its path when names clash)."""
    if not trees:
        return {"": env}
    names = [t.resolve().name for t in trees]
    found: dict[str, dict[str, str]] = {}
    for tree, name in zip(trees, names, strict=True):
        if not (tree / "tsuka_core").is_dir():
            raise SystemExit(f"perf: {tree} has no tsuka_core folder; --tree takes a source tree of tsuka")
        label = name if names.count(name) == 1 else str(tree.resolve())
        path = os.pathsep.join(p for p in (str(tree.resolve()), env.get("PYTHONPATH")) if p)
        found[label] = dict(env, PYTHONPATH=path)
    return found


def find_tsuka(given: str | None) -> str:
    """The ``tsuka`` command: ``--tsuka``, else the one beside this Python, else the one on PATH."""
    if given:
        return given
    beside = Path(sys.executable).parent / "tsuka"
    found = str(beside) if beside.exists() else shutil.which("tsuka")
    if not found:
        raise SystemExit("perf: no 'tsuka' command beside this Python or on PATH; pass --tsuka")
    return found


# --- running tsuka --------------------------------------------------------------------------------------------------


def run_argv(bench: Bench, server: LoopbackProcess, mode: str, n: int, latency_ms: int, concurrency: int) -> list[str]:
    """The ``tsuka run`` command line of one measurement."""
    models = ["all"] if mode == "sweep" else [RUN_MODEL, "-e", "none"]
    return [
        bench.tsuka,
        "run",
        *models,
        "--base-url",
        server.base_url(latency_ms),
        "--suite",
        str(bench.suite(n)),
        "--profiles",
        str(bench.tmp / "profiles.json"),
        "-j",
        str(concurrency),
    ]


def measure_run(bench: Bench, server: LoopbackProcess, row: Row) -> None:
    """Run ``tsuka run`` once for ``row`` and add the sample, checking it really sent every request."""
    argv = run_argv(bench, server, row.mode, row.n, row.latency_ms, row.concurrency)
    (bench.tmp / "profiles.json").unlink(missing_ok=True)
    shutil.rmtree(bench.tmp / ".tsuka", ignore_errors=True)  # the run history beside the store: each run starts empty
    server_stats(server.port, reset=True)
    timeout = 120.0 + 3 * row.ideal
    out, err = bench.tmp / "run.out", bench.tmp / "run.err"
    sample = run_process(argv, env=bench.trees[row.tree], cwd=bench.tmp, stdout=out, stderr=err, timeout=timeout)
    stats = server_stats(server.port)
    if sample.returncode != 0 or stats["chat"] != row.requests:
        tail = err.read_text(errors="replace").strip().splitlines()[-1:]
        raise RunFailedError(
            f"exited {sample.returncode} after {stats['chat']} of {row.requests} requests: {' '.join(tail)[:200]}"
        )
    row.samples.append(sample)
    row.max_in_flight = max(row.max_in_flight, stats["max_in_flight"])
    row.connections = max(row.connections, stats.get("connections", 1) - 1)  # less the one asking for the stats


class RunFailedError(Exception):
    """A measured run did not complete (its row is reported as failed)."""


def measure_rows(bench: Bench, server: LoopbackProcess, rows: Sequence[Row], repeats: int) -> None:
    """Measure each row ``repeats`` times (fewer past ``--row-seconds`` of ideal time), printing each as it ends.

    A row is measured for every tree, a run of each in turn.
    """
    for template in rows:
        group = [replace(template, tree=tree, samples=[]) for tree in bench.trees]
        times = max(1, min(repeats, int(bench.args.row_seconds // template.ideal))) if template.ideal > 0 else repeats
        for _ in range(times):
            for row in group:
                if row.failure:
                    continue
                try:
                    measure_run(bench, server, row)
                except RunFailedError as failure:
                    row.failure = str(failure)
        for row in group:
            bench.rows.append(row)
            print(format_row(row), flush=True)


def measure_startups(bench: Bench, server: LoopbackProcess, repeats: int) -> None:
    """Time commands that do no benchmarking: bare Python, ``--help``, ``validate``, a one-test run (per tree)."""
    many = fake_distributions(bench.tmp / "dists", count=300, plugins=20)
    one = [bench.tsuka, "run", RUN_MODEL, "-e", "none", "--base-url", server.base_url(0), "-j", "1"]
    n = bench.args.n
    bare = [sys.executable, "-c", "pass"]
    commands: list[tuple[str, list[str], dict[str, str]]] = [("python -c pass", bare, bench.env)]
    for tree, env in bench.trees.items():
        crowded = dict(env, PYTHONPATH=os.pathsep.join(p for p in (str(many), env.get("PYTHONPATH")) if p))
        suffix = f" [{tree}]" if tree else ""
        commands += [
            (f"tsuka --help{suffix}", [bench.tsuka, "--help"], env),
            (f"tsuka validate{suffix}", [bench.tsuka, "validate"], env),
            (f"tsuka validate, +300 dists +20 plugins{suffix}", [bench.tsuka, "validate"], crowded),
            (f"tsuka validate SUITE({n}){suffix}", [bench.tsuka, "validate", str(bench.suite(n))], env),
            (
                f"tsuka run, 1 test at 0 ms{suffix}",
                [*one, "--suite", str(bench.suite(1)), "--profiles", str(bench.tmp / "one.json")],
                env,
            ),
        ]
    for label, argv, env in commands:
        entry = Startup(label)
        for _ in range(repeats):
            sample = run_process(argv, env=env, cwd=bench.tmp, timeout=60.0)
            if sample.returncode != 0:
                raise SystemExit(f"perf: {label!r} exited {sample.returncode}")
            entry.samples.append(sample)
        bench.startups.append(entry)
        print(format_startup(entry), flush=True)


def fake_distributions(folder: Path, *, count: int, plugins: int) -> Path:
    """``count`` installed-looking distributions with entry points, ``plugins`` of them tsuka plugins."""
    for i in range(count):
        info = folder / f"benchfake{i:03d}-1.0.dist-info"
        info.mkdir(parents=True, exist_ok=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: benchfake{i:03d}\nVersion: 1.0\n")
        name = f"benchfake{i:03d}"
        groups = f"[console_scripts]\n{name} = {name}:main\n\n[other.plugins]\nx = {name}\n"
        if i < plugins:
            groups += f"\n[tsuka]\nfake{i:03d} = benchfake{i:03d}\n"
            (folder / f"benchfake{i:03d}.py").write_text('"""A tsuka plugin that registers nothing."""\n')
        (info / "entry_points.txt").write_text(groups)
    return folder


# --- the server's own capacity --------------------------------------------------------------------------------------


def chat_body() -> bytes:
    """A chat body of realistic size, as tsuka sends for a tool test."""
    body = {
        "model": RUN_MODEL,
        "messages": [{"role": "user", "content": "What will the weather be in Paris? (case 0) <<bench:tool>>"}],
        "max_tokens": 8192,
        "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}] * 2,
        "tool_choice": "auto",
        "reasoning_effort": "none",
    }
    return json.dumps(body).encode()


def measure_server(bench: Bench, server: LoopbackProcess, quick: bool) -> None:
    """The loopback server's own numbers: its latency alone, hundreds of requests in flight, its request rate."""
    top = max(256, *bench.args.concurrency)
    plans = [(1, 200, 10 if quick else 20), (top, 200, 3 if quick else 5), (16, 0, 300 if quick else 1000)]
    for connections, latency, each in plans:
        capacity = measure_capacity(server.port, connections, latency, each, chat_body())
        bench.capacities.append(capacity)
        print(f"server: {capacity.line()}", flush=True)


def measure_pools(bench: Bench, server: LoopbackProcess, quick: bool) -> None:
    """The HTTP client alone at latency 0: httpx with a pool of C connections against tsuka's client, per C."""
    print(POOL_HEAD)
    for concurrency in (16, 64, 256):
        requests = max(500 if quick else 1000, 4 * concurrency)
        for label, shared in (("httpx, Limits(C, C)", True), ("tsuka make_client(C)", False)):
            result = measure_pool(server.port, label, concurrency, requests, chat_body(), shared=shared)
            bench.pools.append(result)
            print(result.line(), flush=True)


# --- output ---------------------------------------------------------------------------------------------------------

ROW_HEAD = (
    f"{'mode':<6}{'N':>6}{'req':>7}{'lat_ms':>7}{'C':>5}{'wall_s':>9}{'ideal_s':>9}{'over_s':>8}"
    f"{'ratio':>7}{'req/s':>8}{'cpu_s':>8}{'rss_MB':>8}{'inflight':>9}{'conns':>6}{'ms/test':>8}{'runs':>5}"
)
STARTUP_HEAD = f"{'start-up':<40}{'wall_s':>8}{'cpu_s':>8}{'rss_MB':>8}{'runs':>5}"


def format_row(row: Row) -> str:
    """One table line for a run configuration (``FAILED`` and the cause when it could not be measured)."""
    if row.failure or not row.samples:
        head = f"{row.mode:<6}{row.n:>6}{row.requests:>7}{row.latency_ms:>7}{row.concurrency:>5}"
        return f"{head}  FAILED {row.failure}"
    ratio = f"{row.ratio:7.3f}" if row.ratio is not None else f"{'-':>7}"
    return (
        f"{row.mode:<6}{row.n:>6}{row.requests:>7}{row.latency_ms:>7}{row.concurrency:>5}{row.wall:>9.3f}"
        f"{row.ideal:>9.3f}{row.overhead:>8.3f}{ratio}{row.per_second:>8.0f}{row.cpu:>8.3f}{row.rss:>8.1f}"
        f"{row.max_in_flight:>9}{row.connections:>6}{row.ms_per_test:>8.3f}{len(row.samples):>5}"
        f"{f'  {row.tree}' if row.tree else ''}"
    )


def format_comparison(bench: Bench) -> list[str]:
    """Per configuration, each tree's overhead and its ratio to the first tree's (empty with one tree)."""
    if len(bench.trees) < 2:
        return []
    names = list(bench.trees)
    heads = [f"  over_s {name}" for name in names] + [f"  x {name}" for name in names[1:]]
    lines = [f"{'mode':<6}{'N':>6}{'lat_ms':>7}{'C':>5}" + "".join(heads)]
    configs = dict.fromkeys((r.mode, r.n, r.latency_ms, r.concurrency) for r in bench.rows)
    for mode, n, latency, concurrency in configs:
        rows = [find_tree_row(bench, mode, n, latency, concurrency, name) for name in names]
        cells = [
            f"{r.overhead:>{len(h)}.3f}" if r else f"{'FAILED':>{len(h)}}"
            for r, h in zip(rows, heads[: len(rows)], strict=True)
        ]
        first = rows[0]
        for row, head in zip(rows[1:], heads[len(names) :], strict=True):
            usable = first is not None and row is not None and first.overhead > 0
            cells.append(f"{row.overhead / first.overhead:>{len(head)}.2f}" if usable else f"{'-':>{len(head)}}")
        lines.append(f"{mode:<6}{n:>6}{latency:>7}{concurrency:>5}" + "".join(cells))
    return lines


def format_startup(entry: Startup) -> str:
    """One table line for a start-up command."""
    cpu = statistics.median(s.cpu for s in entry.samples)
    rss = max(s.rss_mb for s in entry.samples)
    return f"{entry.label:<40}{entry.wall:>8.3f}{cpu:>8.3f}{rss:>8.1f}{len(entry.samples):>5}"


def machine() -> str:
    """CPU model and count, OS, Python and tsuka versions."""
    model = platform.processor() or "?"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    try:
        version = importlib.metadata.version("tsuka")
    except importlib.metadata.PackageNotFoundError:
        version = "?"
    return (
        f"{model}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}, "
        f"Python {platform.python_version()}, tsuka {version}"
    )


def calibration() -> str:
    """A fixed pure-Python loop timed here: CPU seconds, and wall over CPU (above 1: the core is shared)."""
    wall, cpu = time.perf_counter(), time.process_time()
    total = 0
    for i in range(3_000_000):
        total += i & 7
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return f"3M-step loop {cpu:.3f} s CPU, wall/CPU {wall / max(cpu, 1e-9):.2f}"


def load_average() -> str:
    """The 1-minute load average (other work on the machine makes the numbers noisy)."""
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except OSError:
        return "?"


# --- targets --------------------------------------------------------------------------------------------------------


def find_tree_row(bench: Bench, mode: str, n: int, latency: int, concurrency: int, tree: str = "") -> Row | None:
    """The measured row with these parameters (of this tree), if any."""
    return next(
        (
            r
            for r in bench.rows
            if (r.mode, r.n, r.latency_ms, r.concurrency, r.tree) == (mode, n, latency, concurrency, tree)
            and r.samples
            and not r.failure
        ),
        None,
    )


def targets(bench: Bench) -> list[tuple[bool, str]]:
    """Each target of the run mode with its measured value, for every tree: (met, line)."""
    found = [(tree, ok, text) for tree in bench.trees for ok, text in tree_targets(bench, tree)]
    return [(ok, f"{text} [{tree}]" if tree else text) for tree, ok, text in found]


def tree_targets(bench: Bench, tree: str) -> list[tuple[bool, str]]:
    """Each target of the run mode with its measured value for one tree: (met, line)."""
    n, scale = bench.args.n, bench.args.scale_n
    found: list[tuple[bool, str]] = []

    def add(ok: bool, text: str) -> None:
        found.append((ok, text))

    def find_row(mode: str, n: int, latency: int, concurrency: int) -> Row | None:
        return find_tree_row(bench, mode, n, latency, concurrency, tree)

    for c in bench.args.concurrency if 200 in bench.args.latency else ():
        row = find_row("run", n, 200, c)
        if row is None:
            add(False, f"overhead <= 0.5 s, N={n}, 200 ms, C={c}: not measured")
            continue
        add(row.overhead <= 0.5, f"overhead <= 0.5 s, N={n}, 200 ms, C={c}: {row.overhead:.3f} s")
        limit = {1: 1.02, 64: 1.6}.get(c)
        if limit is not None and row.ratio is not None:
            add(row.ratio <= limit, f"ratio <= {limit}, N={n}, 200 ms, C={c}: {row.ratio:.3f}")
    rss = [r.rss for r in bench.rows if r.mode == "run" and r.n == n and r.tree == tree and r.samples and not r.failure]
    if rss:
        add(max(rss) <= 100, f"peak RSS <= 100 MB, N={n}, every row: {max(rss):.1f} MB")
    for entry in bench.startups:
        if entry.label == f"tsuka --help{f' [{tree}]' if tree else ''}":
            add(entry.wall <= 0.15, f"start-up <= 0.15 s, {entry.label}: {entry.wall:.3f} s")
    small, large = find_row("run", n, 0, 16), find_row("run", scale, 0, 16)
    if small is not None:
        add(small.per_second >= 400, f">= 400 req/s at 0 ms, C=16, whole process, N={n}: {small.per_second:.0f}")
    if small is not None and large is not None:
        steady = (large.requests - small.requests) / max(large.wall - small.wall, 1e-9)
        add(steady >= 400, f">= 400 req/s at 0 ms, C=16, pipeline (N={scale} minus N={n}): {steady:.0f}")
    for latency, c in ((0, 16), (200, 64)):
        small, large = find_row("run", n, latency, c), find_row("run", scale, latency, c)
        if small is None or large is None:
            continue
        factor = scale / n
        add(
            large.wall <= factor * small.wall,
            f"N={scale} time <= {factor:g} x N={n}, {latency} ms, C={c}: {large.wall / small.wall:.2f} x",
        )
        add(
            large.rss <= factor * small.rss,
            f"N={scale} memory <= {factor:g} x N={n}, {latency} ms, C={c}: {large.rss / small.rss:.2f} x",
        )
    found += large_targets(bench, tree)
    return found


def large_targets(bench: Bench, tree: str) -> list[tuple[bool, str]]:
    """The large-suite targets: <= 1 ms per test and <= 100 MB at 2,000 tests, no growth per test beyond it."""
    rows = [find_tree_row(bench, "run", n, LARGE_LATENCY_MS, LARGE_CONCURRENCY, tree) for n in bench.args.large]
    found: list[tuple[bool, str]] = []
    where = f"{LARGE_LATENCY_MS} ms, C={LARGE_CONCURRENCY}"
    for row in (r for r in rows if r is not None and r.n == 2000):
        found.append((row.ms_per_test <= 1.0, f"<= 1.0 ms per test, N=2000, {where}: {row.ms_per_test:.3f} ms"))
        found.append((row.rss <= 100, f"peak RSS <= 100 MB, N=2000, {where}: {row.rss:.1f} MB"))
        found.append((row.connections <= 2 * 64, f"connections <= 2 x C, N=2000, {where}: {row.connections}"))
    measured = sorted((r for r in rows if r is not None), key=lambda r: r.n)
    if len(measured) >= 2:
        small, large = measured[0], measured[-1]
        ok = large.ms_per_test <= 1.1 * small.ms_per_test
        text = f"ms per test not growing, N={large.n} vs N={small.n}, {where}: {large.ms_per_test:.3f} vs"
        found.append((ok, f"{text} {small.ms_per_test:.3f}"))
    return found


def report_json(bench: Bench, started: float) -> dict[str, Any]:
    """Everything measured, for ``--json``."""
    return {
        "format": FORMAT_VERSION,
        "machine": machine(),
        "seconds": round(time.monotonic() - started, 1),
        "capacity": [asdict(c) | {"per_second": c.per_second} for c in bench.capacities],
        "http_client": [asdict(p) for p in bench.pools],
        "startup": [
            {"label": s.label, "wall": s.wall, "samples": [asdict(x) for x in s.samples]} for s in bench.startups
        ],
        "rows": [
            {
                "mode": r.mode,
                "n": r.n,
                "latency_ms": r.latency_ms,
                "concurrency": r.concurrency,
                "tree": r.tree,
                "failure": r.failure,
            }
            if r.failure or not r.samples
            else {
                "mode": r.mode,
                "n": r.n,
                "requests": r.requests,
                "latency_ms": r.latency_ms,
                "concurrency": r.concurrency,
                "tree": r.tree,
                "wall": r.wall,
                "ideal": r.ideal,
                "overhead": r.overhead,
                "ratio": r.ratio,
                "cpu": r.cpu,
                "rss_mb": r.rss,
                "max_in_flight": r.max_in_flight,
                "connections": r.connections,
                "ms_per_test": r.ms_per_test,
                "samples": [asdict(x) for x in r.samples],
            }
            for r in bench.rows
        ],
        "targets": [{"met": ok, "target": text} for ok, text in targets(bench)],
    }


# --- main -----------------------------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(
        prog="bench/perf.py", description=(__doc__ or "").splitlines()[0], formatter_class=argparse.RawTextHelpFormatter
    )
    ints: Callable[[str], list[int]] = lambda text: [int(x) for x in text.split(",") if x]  # noqa: E731
    parser.add_argument("-n", type=int, default=200, help="tests in the suite (default 200)")
    parser.add_argument("--scale-n", type=int, default=None, help="the larger N of the linear-cost rows (10 x N)")
    parser.add_argument("-c", "--concurrency", type=ints, default=None, help="comma-separated (default 1,4,16,64)")
    parser.add_argument("-l", "--latency", type=ints, default=[0, 200], help="milliseconds, comma-separated (0,200)")
    parser.add_argument("-r", "--repeats", type=int, default=None, help="runs per row, median kept (default 3)")
    parser.add_argument("--quick", action="store_true", help="one run per row; the N=2000 row only at 0 ms")
    parser.add_argument(
        "--row-seconds",
        type=float,
        default=60.0,
        help="repeat a row only while its ideal time adds up to at most this (default 60: C=1 at 200 ms runs once)",
    )
    parser.add_argument(
        "--large",
        type=ints,
        default=None,
        help=f"suite sizes run at {LARGE_LATENCY_MS} ms, C={LARGE_CONCURRENCY} (default 2000,10000; 2000 with --quick)",
    )
    parser.add_argument("--sweep", action="store_true", help=f"'tsuka run all': {len(SWEEP_MODELS)} models x 4 levels")
    parser.add_argument("--no-startup", action="store_true", help="skip the start-up table")
    parser.add_argument("--no-pool", action="store_true", help="skip the HTTP client table")
    parser.add_argument("--tsuka", help="the tsuka command to measure (default: beside this Python)")
    parser.add_argument(
        "--tree",
        type=Path,
        action="append",
        help="measure tsuka from this source tree (put first on PYTHONPATH); repeat to compare trees row by row",
    )
    parser.add_argument("--json", type=Path, help="also write every sample to this file")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (suites, outputs)")
    args = parser.parse_args(argv)
    args.concurrency = args.concurrency or ([16, 64] if args.sweep else [1, 4, 16, 64])
    args.repeats = args.repeats or (1 if args.quick else 3)
    args.scale_n = args.scale_n or 10 * args.n
    if args.large is None:
        args.large = [] if args.sweep else [2000] if args.quick else [2000, 10000]
    if args.n < 1 or args.repeats < 1 or min(args.concurrency) < 1 or min(args.latency) < 0:
        parser.error("N, repeats and concurrency must be at least 1, latencies at least 0")
    return args


def plan(args: argparse.Namespace) -> list[Row]:
    """The rows to measure, in order: per latency, per concurrency; then the linear-cost rows."""
    if args.sweep:
        requests = args.n * len(SWEEP_MODELS) * EFFORT_LEVELS
        return [Row("sweep", args.n, requests, lat, c) for lat in args.latency for c in args.concurrency]
    rows = [Row("run", args.n, args.n, lat, c) for lat in args.latency for c in args.concurrency]
    scaled = [(0, 16)] + ([] if args.quick else [(200, 64)])
    rows += [Row("run", args.scale_n, args.scale_n, lat, c) for lat, c in scaled if lat in args.latency]
    rows += [Row("run", n, n, LARGE_LATENCY_MS, LARGE_CONCURRENCY) for n in args.large]
    return rows


def warm_up(bench: Bench, server: LoopbackProcess) -> None:
    """Fill the bytecode cache and the file cache of every tree: one validate and one small run, not measured."""
    runs = ([bench.tsuka, "validate", str(bench.suite(6))], run_argv(bench, server, "run", 6, 0, 4))
    for env, argv in ((env, argv) for env in bench.trees.values() for argv in runs):
        sample = run_process(argv, env=env, cwd=bench.tmp, stderr=bench.tmp / "warm.err", timeout=120.0)
        if sample.returncode != 0:
            tail = (bench.tmp / "warm.err").read_text(errors="replace").strip().splitlines()[-3:]
            raise SystemExit(f"perf: {' '.join(argv)} exited {sample.returncode}:\n" + "\n".join(tail))


def main(argv: Sequence[str] | None = None) -> int:
    """Measure, print the tables and the targets; exit 1 when a target is missed."""
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the server and clean up on SIGTERM too
    started = time.monotonic()
    tmp = Path(tempfile.mkdtemp(prefix="tsuka-perf-"))
    env = child_env(tmp)
    bench = Bench(args, tmp, find_tsuka(args.tsuka), env, trees=tree_envs(env, args.tree))
    models = SWEEP_MODELS if args.sweep else (RUN_MODEL,)
    print(f"tsuka perf, format {FORMAT_VERSION}: {'sweep' if args.sweep else 'run'} mode, N={args.n}")
    print(f"machine: {machine()}")
    print(f"load: average {load_average()}, {calibration()}")
    try:
        with LoopbackProcess(models, bench.env) as server:
            measure_server(bench, server, args.quick)
            warm_up(bench, server)
            if not args.no_pool:
                measure_pools(bench, server, args.quick)
            if not args.no_startup:
                print(STARTUP_HEAD)
                measure_startups(bench, server, 3 if args.quick else 5)
            print(f"command: {' '.join(run_argv(bench, server, 'sweep' if args.sweep else 'run', args.n, 200, 4))}")
            print(ROW_HEAD)
            measure_rows(bench, server, plan(args), args.repeats)
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    compared = format_comparison(bench)
    if compared:
        print("overhead by tree:")
        print("\n".join(compared))
    found = targets(bench)
    if found:
        print("targets:")
        for ok, text in found:
            print(f"  {'PASS' if ok else 'MISS'}  {text}")
    print(f"load: average {load_average()}, {calibration()}")
    print(f"done in {time.monotonic() - started:.0f} s")
    if args.json:
        args.json.write_text(json.dumps(report_json(bench, started), indent=2) + "\n")
    failed = [r for r in bench.rows if r.failure]
    return 0 if all(ok for ok, _ in found) and not failed else 1


if __name__ == "__main__":
    sys.exit(main())
