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
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Capacity", "LoopbackProcess", "Sample", "measure_capacity", "run_process", "server_stats"]

SERVER_SCRIPT = Path(__file__).with_name("_server.py")


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
    """Run ``argv`` to its end and measure it with ``wait4`` (the process is killed past ``timeout``)."""
    out = open(stdout, "wb") if stdout else subprocess.DEVNULL  # noqa: SIM115  (closed below)
    err = open(stderr, "wb") if stderr else subprocess.DEVNULL  # noqa: SIM115
    try:
        started = time.perf_counter()
        proc = subprocess.Popen(argv, env=dict(env), cwd=cwd, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
        watchdog = threading.Timer(timeout, _kill, (proc.pid,))
        watchdog.start()
        try:
            _pid, status, usage = os.wait4(proc.pid, 0)
        finally:
            watchdog.cancel()
        wall = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
    finally:
        for handle in (out, err):
            if not isinstance(handle, int):
                handle.close()
    rss_mb = usage.ru_maxrss / 1024 if sys.platform != "darwin" else usage.ru_maxrss / 1024 / 1024
    return Sample(wall, usage.ru_utime + usage.ru_stime, rss_mb, proc.returncode)


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


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
