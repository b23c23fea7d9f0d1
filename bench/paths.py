"""tsuka's cost per test on both server paths, side by side with plain httpx issuing the same requests.

Two kinds of server sit behind one loopback process (``bench/_server.py``):
**llama.cpp** (``/props`` says so, answers carry ``timings``: tsuka never
streams) and **streaming** (no ``/props``, as vLLM, hosted APIs, Ollama's
``/v1`` and LM Studio: tsuka streams, every answer is server-sent events). On
each, a generated suite of N tests is run

- by ``tsuka run`` (one process, as a user runs it), and
- by a **bare client**: a Python process with httpx alone, sending each
  test's request (the same messages, tools and stream fields as tsuka) and
  reading its answer (JSON, or every event of the stream to its end) with
  nothing judged or stored; ``bare`` is one ``AsyncClient`` of C connections
  (httpx as most code uses it), ``bare/1`` is C clients of one connection each
  (how tsuka spreads its requests, ``backends/clientpool.py``): the floor of
  this transport.

Every row is repeated (``-r``), the kinds and clients interleaved so that a
change in the machine's load falls on all alike. Per row: the median wall
time, the ideal ``ceil(N / C) * latency``, the overhead per test
``(wall - ideal) / N`` (process start-up included, for both clients), the
connections the server accepted and the requests it saw streamed. Then tsuka's
overhead per test as a multiple of the bare client's on each path, and
tsuka's streaming path against its llama.cpp path (target: at most 1.2x).

Usage::

    python bench/paths.py                    # N=2000 at 20 ms, C=64, 3 repeats
    python bench/paths.py -n 500 -r 1        # quicker
    python bench/paths.py --json paths.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import perf
from _measure import LoopbackProcess, run_process, server_stats
from _suite import write_suite
from perf import child_env, find_tsuka

KINDS = {"llama.cpp": "", "streaming": "/stream"}
"""Each server kind and its path prefix on the loopback server."""
TARGET = 1.2
"""The most tsuka's streaming path may cost per test, as a multiple of its llama.cpp path."""
MODEL = "bench-a"
CLIENTS = ("tsuka", "bare", "bare/1")
"""tsuka; httpx as one client of C connections; httpx as C clients of one connection (tsuka's way)."""


@dataclass
class Row(perf.Row):
    """perf.py's row (its samples, ideal time and cost per test) on one server kind, for one client."""

    kind: str = ""
    client: str = ""
    streamed: int = 0
    """The most answers the server streamed in one run of the row."""

    def line(self) -> str:
        """One line of the table."""
        return (
            f"{self.kind:<10}{self.client:<7}{self.n:>6}{self.latency_ms:>5}{self.concurrency:>5}"
            f"{self.wall:>9.2f}{self.ideal:>8.2f}{self.ms_per_test:>10.3f}{self.connections:>7}{self.streamed:>9}"
        )


HEAD = (
    f"{'server':<10}{'client':<7}{'N':>6}{'L':>5}{'C':>5}{'wall_s':>9}{'ideal':>8}{'ms/test':>10}{'conns':>7}"
    f"{'streamed':>9}"
)


# --- the bare client: httpx alone, the same requests ----------------------------------------------------------------


def request_bodies(suite: Path, stream: bool) -> list[bytes]:
    """The body tsuka sends for each test of ``suite`` (model, messages, tools, max_tokens, stream fields)."""
    bodies = []
    for path in sorted(suite.glob("*.json")):
        test = json.loads(path.read_text(encoding="utf-8"))
        body: dict[str, Any] = {
            "model": MODEL,
            "messages": [{"role": "user", "content": test["prompt"]}],
            "max_tokens": 8192,
        }
        if test.get("tools"):
            body["tools"] = test["tools"]
        if stream:
            body.update(stream=True, stream_options={"include_usage": True})
        bodies.append(json.dumps(body).encode())
    return bodies


async def bare(url: str, bodies: Sequence[bytes], concurrency: int, stream: bool, per_client: int) -> None:
    """Send every body through httpx clients of ``per_client`` connections each, reading each answer whole."""
    import httpx

    per_client = min(per_client, concurrency)
    limits = httpx.Limits(max_connections=per_client, max_keepalive_connections=per_client)
    headers = {"content-type": "application/json"}
    queue = list(reversed(bodies))
    clients = [httpx.AsyncClient(limits=limits, timeout=60.0) for _ in range(math.ceil(concurrency / per_client))]
    try:

        async def worker(client: httpx.AsyncClient) -> None:
            while queue:
                body = queue.pop()
                async with client.stream("POST", f"{url}/chat/completions", content=body, headers=headers) as answer:
                    answer.raise_for_status()
                    if stream:
                        async for line in answer.aiter_lines():
                            if line.startswith("data: ") and line != "data: [DONE]":
                                json.loads(line[6:])
                    else:
                        json.loads(await answer.aread())

        await asyncio.gather(*(worker(clients[i // per_client]) for i in range(concurrency)))
    finally:
        for client in clients:
            await client.aclose()


# --- measuring --------------------------------------------------------------------------------------------------------


def measure(row: Row, argv: list[str], env: dict[str, str], tmp: Path, port: int) -> None:
    """Run ``argv`` once for ``row``, checking the server answered every request (streamed where it should)."""
    server_stats(port, reset=True)
    out, err = tmp / "run.out", tmp / "run.err"
    sample = run_process(argv, env=env, cwd=tmp, stdout=out, stderr=err, timeout=120.0 + 5 * row.ideal)
    stats = server_stats(port)
    if sample.returncode != 0 or stats["chat"] != row.n:
        tail = " ".join(err.read_text(errors="replace").strip().splitlines()[-1:])[:200]
        raise SystemExit(
            f"paths: {row.kind} {row.client} exited {sample.returncode}, {stats['chat']} of {row.n}: {tail}"
        )
    row.samples.append(sample)
    row.connections = max(row.connections, stats["connections"] - 1)  # less the one asking for the stats
    row.streamed = max(row.streamed, stats["streamed"])


def tsuka_argv(tsuka: str, url: str, suite: Path, tmp: Path, concurrency: int) -> list[str]:
    """The ``tsuka run`` of one measurement (no history: the bare client keeps none either)."""
    store = tmp / "profiles.json"
    store.unlink(missing_ok=True)
    run = [tsuka, "run", MODEL, "-e", "none", "--base-url", url, "--suite", str(suite), "--profiles", str(store)]
    return [*run, "-j", str(concurrency), "--no-history"]


def main(argv: Sequence[str] | None = None) -> int:
    """Measure, print the table and the ratios; exit 1 when the streaming target is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("-n", type=int, default=2000, help="tests in the suite (default 2000)")
    parser.add_argument("-l", "--latency", type=int, default=20, help="server latency in ms (default 20)")
    parser.add_argument("-c", "--concurrency", type=int, default=64, help="requests in flight (default 64)")
    parser.add_argument("-r", "--repeats", type=int, default=3, help="runs per row (default 3)")
    parser.add_argument("--tsuka", help="the tsuka command (default: beside this Python, else on PATH)")
    parser.add_argument("--json", type=Path, help="also write the rows as JSON")
    parser.add_argument("--bare", nargs=5, metavar=("URL", "SUITE", "C", "STREAM", "PER"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.bare:
        url, suite, concurrency, stream, per = args.bare
        bodies = request_bodies(Path(suite), stream == "1")
        asyncio.run(bare(url, bodies, int(concurrency), stream == "1", int(per)))
        return 0
    tsuka = find_tsuka(args.tsuka)
    with tempfile.TemporaryDirectory(prefix="tsuka-paths-") as name:
        tmp = Path(name)
        env = child_env(tmp)
        suite = tmp / "suite"
        write_suite(suite, args.n)
        rows = {
            (kind, client): Row(kind, args.n, args.n, args.latency, args.concurrency, kind=kind, client=client)
            for kind in KINDS
            for client in CLIENTS
        }
        print(f"# paths: N={args.n} L={args.latency} ms C={args.concurrency}, {args.repeats} repeat(s); {tsuka}")
        print(HEAD)
        with LoopbackProcess([MODEL], env) as server:
            for repeat in range(args.repeats):
                for kind, prefix in KINDS.items():
                    url = f"http://127.0.0.1:{server.port}/{args.latency}ms{prefix}/v1"
                    run = tsuka_argv(tsuka, url, suite, tmp, args.concurrency)
                    measure(rows[kind, "tsuka"], run, env, tmp, server.port)
                    for client, per in (("bare", args.concurrency), ("bare/1", 1)):
                        flag = "1" if kind == "streaming" else "0"
                        bare_argv = [sys.executable, __file__, "--bare", url, str(suite), str(args.concurrency), flag]
                        measure(rows[kind, client], [*bare_argv, str(per)], env, tmp, server.port)
                    if repeat == args.repeats - 1:
                        for client in CLIENTS:
                            print(rows[kind, client].line())
        return report(rows, args.json)


def report(rows: dict[tuple[str, str], Row], to: Path | None) -> int:
    """The ratios, the target line, and the JSON file when asked; 1 when the target is missed."""
    for kind in KINDS:
        tsuka = rows[kind, "tsuka"]
        said = [f"{kind}: tsuka {tsuka.ms_per_test:.3f} ms/test"]
        for client in CLIENTS[1:]:
            plain = rows[kind, client]
            multiple = tsuka.ms_per_test / plain.ms_per_test if plain.ms_per_test > 0 else math.inf
            said.append(f"{client} {plain.ms_per_test:.3f} ({multiple:.2f}x)")
        print(", ".join(said))
    streamed, timed = rows["streaming", "tsuka"], rows["llama.cpp", "tsuka"]
    ratio = streamed.ms_per_test / timed.ms_per_test if timed.ms_per_test > 0 else math.inf
    met = ratio <= TARGET
    print(
        f"target: tsuka's streaming path <= {TARGET}x its llama.cpp path: {ratio:.2f}x ({'met' if met else 'MISSED'})"
    )
    if to is not None:
        data = [
            {"server": r.kind, "client": r.client, "n": r.n, "latencyMs": r.latency_ms, "concurrency": r.concurrency}
            | {"wall": r.wall, "ideal": r.ideal, "msPerTest": r.ms_per_test, "connections": r.connections}
            | {"streamed": r.streamed, "walls": [s.wall for s in r.samples]}
            for r in rows.values()
        ]
        to.write_text(json.dumps({"rows": data, "streamingRatio": ratio}, indent=2) + "\n", encoding="utf-8")
    return 0 if met else 1


if __name__ == "__main__":
    started = time.perf_counter()
    code = main()
    print(f"# took {time.perf_counter() - started:.0f} s")
    sys.exit(code)
