"""Measuring for the benchmark: a whole process's wall time, CPU time and peak RSS; the loopback server's capacity.

Standard library only.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "POOL_HEAD",
    "Capacity",
    "LoopbackProcess",
    "PoolResult",
    "Sample",
    "measure_capacity",
    "measure_pool",
    "run_process",
    "server_stats",
]

SERVER_SCRIPT = Path(__file__).with_name("_server.py")
LAUNCH_SCRIPT = Path(__file__).with_name("_launch.py")


@dataclass(frozen=True)
class Sample:
    """One process run: wall seconds, CPU seconds (user + system), peak RSS in MiB, exit status."""

    wall: float
    cpu: float
    rss_mb: float
    returncode: int


def run_process(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: Path,
    stdout: Path | None = None,
    stderr: Path | None = None,
    timeout: float = 600.0,
) -> Sample:
    """Run ``argv`` to its end through ``_launch.py`` and return its measures (killed past ``timeout``).

    The launcher, a small process, spawns the command: measured straight from
    this process, the peak RSS would start from this process's own memory.
    """
    result = cwd / ".launch.json"
    result.unlink(missing_ok=True)
    launcher = [sys.executable, str(LAUNCH_SCRIPT), str(result), str(stdout or os.devnull), str(stderr or os.devnull)]
    proc = subprocess.Popen([*launcher, str(timeout), "--", *argv], env=dict(env), cwd=cwd, start_new_session=True)
    try:
        proc.wait()
    except BaseException:  # interrupted: the launcher and the command go together (their own process group)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise
    if proc.returncode != 0 or not result.exists():
        raise RuntimeError(f"the launcher failed (status {proc.returncode}) for {' '.join(argv)}")
    data = json.loads(result.read_text())
    return Sample(float(data["wall"]), float(data["cpu"]), float(data["rss_mb"]), int(data["returncode"]))


class LoopbackProcess:
    """The loopback server (``_server.py``) in its own process, started and always stopped."""

    def __init__(self, models: Sequence[str], env: Mapping[str, str]) -> None:
        self.models = list(models)
        self.env = dict(env)
        self.proc: subprocess.Popen[bytes] | None = None
        self.port = 0

    def __enter__(self) -> LoopbackProcess:
        argv = [sys.executable, str(SERVER_SCRIPT), "--port", "0", "--models", ",".join(self.models)]
        self.proc = subprocess.Popen(argv, env=self.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
        try:
            self.port = _read_port(self.proc, timeout=20.0)
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def base_url(self, latency_ms: int) -> str:
        """The base URL whose chat completions answer after ``latency_ms``."""
        prefix = f"/{latency_ms}ms" if latency_ms else ""
        return f"http://127.0.0.1:{self.port}{prefix}/v1"

    def stop(self) -> None:
        """Stop the server: SIGTERM, then SIGKILL if it has not gone within 5 s."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(5.0)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5.0)
        if proc.stdout:
            proc.stdout.close()


def _read_port(proc: subprocess.Popen[bytes], timeout: float) -> int:
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    line = b""
    with selectors.DefaultSelector() as selector:
        selector.register(proc.stdout, selectors.EVENT_READ)
        while not line.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0 or not selector.select(left):
                raise RuntimeError(f"the loopback server did not start within {timeout:g} s")
            chunk = os.read(proc.stdout.fileno(), 256)
            if not chunk:
                raise RuntimeError(f"the loopback server exited (status {proc.wait()}) before listening")
            line += chunk
    words = line.decode().split()
    if len(words) != 3 or words[:2] != ["listening", "on"]:
        raise RuntimeError(f"the loopback server said {line!r}, not 'listening on PORT'")
    return int(words[2])


# --- talking to the server with raw HTTP/1.1 (no dependency) --------------------------------------------------------


async def _request(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, method: str, path: str, body: bytes
) -> bytes:
    head = (
        f"{method} {path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\n\r\n"
    )
    writer.write(head.encode() + body)
    header = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in header.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    return await reader.readexactly(length)


async def _call(port: int, method: str, path: str, body: bytes = b"") -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        return await _request(reader, writer, method, path, body)
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()


def server_stats(port: int, *, reset: bool = False) -> dict[str, int]:
    """The server's counters (``chat``, ``max_in_flight``); ``reset`` starts them again."""
    if reset:
        asyncio.run(_call(port, "POST", "/_reset"))
        return {"chat": 0, "max_in_flight": 0}
    data: dict[str, int] = json.loads(asyncio.run(_call(port, "GET", "/_stats")))
    return data


@dataclass(frozen=True)
class Capacity:
    """What the loopback server sustained under a raw client: requests/s and latencies at some concurrency."""

    connections: int
    latency_ms: int
    requests: int
    seconds: float
    p50_ms: float
    p99_ms: float
    max_in_flight: int

    @property
    def per_second(self) -> float:
        """Requests answered per second."""
        return self.requests / self.seconds if self.seconds > 0 else 0.0

    def line(self) -> str:
        """One line for the report."""
        return (
            f"{self.connections:>4} connections, {self.latency_ms:>3} ms: {self.per_second:8.0f} req/s, "
            f"latency p50 {self.p50_ms:6.1f} ms, p99 {self.p99_ms:6.1f} ms, {self.max_in_flight} in flight"
        )


@contextlib.contextmanager
def _timer() -> Iterator[list[float]]:
    box = [time.perf_counter()]
    yield box
    box[0] = time.perf_counter() - box[0]


async def _load(port: int, path: str, body: bytes, connections: int, per_connection: int) -> list[float]:
    async def worker() -> list[float]:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        times: list[float] = []
        try:
            for _ in range(per_connection):
                start = time.perf_counter()
                await _request(reader, writer, "POST", path, body)
                times.append(time.perf_counter() - start)
        finally:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()
        return times

    results = await asyncio.gather(*(worker() for _ in range(connections)))
    return sorted(t for times in results for t in times)


def measure_capacity(port: int, connections: int, latency_ms: int, per_connection: int, body: bytes) -> Capacity:
    """Drive the server with ``connections`` keep-alive connections of ``per_connection`` requests each."""
    server_stats(port, reset=True)
    path = f"/{latency_ms}ms/v1/chat/completions" if latency_ms else "/v1/chat/completions"
    with _timer() as elapsed:
        times = asyncio.run(_load(port, path, body, connections, per_connection))
    stats = server_stats(port)
    p50 = times[len(times) // 2] * 1000
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))] * 1000
    return Capacity(connections, latency_ms, len(times), elapsed[0], p50, p99, stats["max_in_flight"])


# --- the HTTP client alone: httpx's pool of C against tsuka's client ------------------------------------------------


@dataclass(frozen=True)
class PoolResult:
    """Requests through one HTTP client at some concurrency: rate and CPU per request (of this process)."""

    label: str
    concurrency: int
    requests: int
    seconds: float
    cpu: float

    def line(self) -> str:
        """One line for the report."""
        rate = self.requests / self.seconds if self.seconds > 0 else 0.0
        per = self.cpu / self.requests * 1e6 if self.requests else 0.0
        return f"{self.label:<34}{self.concurrency:>5}{self.requests:>7}{rate:>9.0f}{per:>11.0f}"


POOL_HEAD = f"{'http client (latency 0)':<34}{'C':>5}{'req':>7}{'req/s':>9}{'cpu_us/req':>11}"


def measure_pool(port: int, label: str, concurrency: int, requests: int, body: bytes, *, shared: bool) -> PoolResult:
    """``requests`` POSTs by ``concurrency`` workers through one client: httpx's with C connections, or tsuka's."""
    import httpx

    from tsuka_core.run.session import make_client

    url = f"http://127.0.0.1:{port}/v1/chat/completions"
    headers = {"content-type": "application/json"}

    async def drive() -> None:
        if shared:
            limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
            client = httpx.AsyncClient(limits=limits, timeout=60.0)
        else:
            client = make_client(concurrency, 60.0)
        async with client:

            async def worker(count: int) -> None:
                for _ in range(count):
                    response = await client.post(url, content=body, headers=headers)
                    response.raise_for_status()

            share, extra = divmod(requests, concurrency)
            await asyncio.gather(*(worker(share + (i < extra)) for i in range(concurrency)))

    wall, cpu = time.perf_counter(), time.process_time()
    asyncio.run(drive())
    return PoolResult(label, concurrency, requests, time.perf_counter() - wall, time.process_time() - cpu)
