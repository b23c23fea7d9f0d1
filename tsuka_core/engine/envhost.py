"""A test's tool environments in a worker process: a call that hangs or takes too much ends its test, never the run.

The worker holds the environment the model's calls execute in and, when the
test states reference calls, a second one for those, built from the test's
configuration. It runs plugin code on arguments a model wrote, so it is
bounded: each call gets :data:`CALL_SECONDS`, the worker :data:`CPU_SECONDS` of
CPU and :data:`MEMORY_BYTES` of address space, and what it sends back
:data:`MAX_REPLY_BYTES`; past any bound the worker is killed and the test
errors, naming the call. The worker is a fresh interpreter
(``python -m tsuka_core.engine.envhost``: a program that embeds tsuka is never
re-run in it), given the parent's import path; messages are length-prefixed
JSON on its standard input and output, never pickles, and what the plugin
prints goes nowhere. A worker whose test ended well is kept (up to
:data:`IDLE_WORKERS`) and builds the next test's environments from scratch,
so a run pays an interpreter's start per test running at once, not per test.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import importlib
import json
import os
import select
import subprocess
import sys
import threading
import time
from typing import IO, Any, Literal

from tsuka_core.errors import TsukaError
from tsuka_core.judge.environment import EXECUTION_ERROR, ToolEnvironment

__all__ = ["CALL_SECONDS", "MAX_RESULT_CHARS", "EnvironmentHost", "ToolEnvironmentError"]

CALL_SECONDS = 10.0
"""The longest one call may take."""
START_SECONDS = 60.0
"""The longest starting the worker and building its environments may take (a loaded machine imports slowly)."""
CPU_SECONDS = 600
"""The CPU time a worker may use over its whole test."""
MEMORY_BYTES = 4 * 1024**3
"""The address space a worker may map."""
MAX_RESULT_CHARS = 1024 * 1024
"""A call's result longer than this is cut to it, and says so."""
MAX_REPLY_BYTES = 64 * 1024 * 1024
"""The largest message a worker may send back (a state, a set of differences)."""
IDLE_WORKERS = 16
"""Workers kept for the next tests once theirs ended well."""

Which = Literal["model", "reference"]


class ToolEnvironmentError(TsukaError):
    """The worker could not answer: it ran out of time or memory, died, or the environment could not be built."""


def _frame(value: Any) -> bytes:
    body = json.dumps(value, default=repr).encode()
    return len(body).to_bytes(8, "big") + body


_IDLE: list[subprocess.Popen[bytes]] = []
_IDLE_LOCK = threading.Lock()


def _idle_worker() -> subprocess.Popen[bytes] | None:
    with _IDLE_LOCK:
        while _IDLE:
            process = _IDLE.pop()
            if process.poll() is None:
                return process
    return None


def _keep(process: subprocess.Popen[bytes]) -> bool:
    with _IDLE_LOCK:
        if len(_IDLE) < IDLE_WORKERS and process.poll() is None:
            _IDLE.append(process)
            return True
    return False


def _stop_idle() -> None:
    with _IDLE_LOCK:
        idle = list(_IDLE)
        _IDLE.clear()
    for process in idle:
        _stop(process)


def _stop(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(OSError, ValueError):
        assert process.stdin is not None
        process.stdin.write(_frame({"op": "stop"}))
        process.stdin.close()
    try:
        process.wait(timeout=1)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=5)
    if process.stdout is not None:
        process.stdout.close()


atexit.register(_stop_idle)


class EnvironmentHost:
    """The worker of one test's environments; every method runs the exchange off the event loop."""

    def __init__(self, cls: type[ToolEnvironment[Any]], config: dict[str, Any], reference: bool) -> None:
        self._start_message = {
            "module": cls.__module__,
            "qualname": cls.__qualname__,
            "config": config,
            "reference": reference,
            "path": list(sys.path),
        }
        self._process: subprocess.Popen[bytes] | None = None
        self.name = cls.name

    async def __aenter__(self) -> EnvironmentHost:
        await asyncio.to_thread(self._start)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.to_thread(self.release)

    def _start(self) -> None:
        self._process = _idle_worker()
        if self._process is None:
            command = [sys.executable, "-m", "tsuka_core.engine.envhost"]
            self._process = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, close_fds=True
            )
        try:
            self._exchange(self._start_message, "building the environment", START_SECONDS)
        except ToolEnvironmentError:
            self.close()
            raise

    def release(self) -> None:
        """The test is over: its environments are dropped and the worker kept for another test, or stopped."""
        process = self._process
        if process is None:
            return
        try:
            self._exchange({"op": "release"}, "dropping the environments")
        except ToolEnvironmentError:
            return  # the worker is gone already
        self._process = None
        if not _keep(process):
            _stop(process)

    def close(self) -> None:
        """Stop the worker (killed if it does not stop at once)."""
        process, self._process = self._process, None
        if process is not None:
            _stop(process)

    def _exchange(self, message: dict[str, Any], what: str, seconds: float | None = None) -> Any:
        process = self._process
        if process is None or process.stdin is None or process.stdout is None:
            raise ToolEnvironmentError(f"{self.name}: the worker is stopped")
        seconds = CALL_SECONDS if seconds is None else seconds
        try:
            process.stdin.write(_frame(message))
            process.stdin.flush()
            raw = _read(process.stdout, time.monotonic() + seconds)
        except TimeoutError:
            self.close()
            raise ToolEnvironmentError(
                f"{self.name}: {what} took longer than {seconds:g} s; the worker was ended"
            ) from None
        except (OSError, EOFError, ValueError):
            code = process.poll()
            self.close()
            why = f"exit code {code}: it ran out of CPU time or memory, or crashed" if code else "its output was cut"
            raise ToolEnvironmentError(f"{self.name}: the worker stopped while {what} ({why})") from None
        reply = json.loads(raw)
        if reply.get("error"):
            raise ToolEnvironmentError(f"{self.name}: {what}: {reply['error']}")
        return reply.get("value")

    async def call(self, which: Which, name: str, arguments: dict[str, Any]) -> str:
        """Execute one call in the model's or the reference environment; its result as text."""
        message = {"op": "call", "which": which, "name": name, "arguments": arguments}
        found = await asyncio.to_thread(self._exchange, message, f"calling {name}")
        return str(found)

    async def state(self) -> dict[str, Any]:
        """The model's environment's state."""
        found = await asyncio.to_thread(self._exchange, {"op": "state"}, "reading the state")
        return found if isinstance(found, dict) else {}

    async def differences(self) -> dict[str, Any]:
        """How the reference environment's state differs from the model's ({} when the same)."""
        found = await asyncio.to_thread(self._exchange, {"op": "differences"}, "comparing the states")
        return found if isinstance(found, dict) else {}


def _read(stream: IO[bytes], deadline: float) -> bytes:
    """One frame from ``stream`` by ``deadline`` (TimeoutError past it, EOFError when the worker is gone)."""
    header = _read_exactly(stream, 8, deadline)
    size = int.from_bytes(header, "big")
    if size > MAX_REPLY_BYTES:
        raise ValueError(f"a reply of {size} bytes")
    return _read_exactly(stream, size, deadline)


def _read_exactly(stream: IO[bytes], size: int, deadline: float) -> bytes:
    fd = stream.fileno()
    found = bytearray()
    while len(found) < size:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise TimeoutError
        chunk = os.read(fd, min(size - len(found), 1 << 20))
        if not chunk:
            raise EOFError
        found += chunk
    return bytes(found)


# --- the worker -----------------------------------------------------------------------------------------------------


def _limit() -> None:
    """The worker's address space, for its whole life."""
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    except (ImportError, ValueError, OSError):  # not every platform lets a process lower its limits
        pass


def _limit_cpu() -> None:
    """:data:`CPU_SECONDS` more CPU time for the test beginning (the hard limit left as it was)."""
    try:
        import resource

        used = resource.getrusage(resource.RUSAGE_SELF)
        _, hard = resource.getrlimit(resource.RLIMIT_CPU)
        soft = int(used.ru_utime + used.ru_stime) + 1 + CPU_SECONDS
        resource.setrlimit(resource.RLIMIT_CPU, (soft if hard == resource.RLIM_INFINITY else min(soft, hard), hard))
    except (ImportError, ValueError, OSError):
        pass


def _serve() -> None:
    """The worker's loop: build the environments, then answer each message until told to stop."""
    _limit()
    source = os.fdopen(os.dup(0), "rb")
    sink = os.fdopen(os.dup(1), "wb")
    os.dup2(os.open(os.devnull, os.O_RDWR), 0)
    os.dup2(2, 1)  # what the plugin prints goes where stderr goes (nowhere), never into the replies

    def reply(**fields: Any) -> None:
        sink.write(_frame(fields))
        sink.flush()

    def receive() -> Any:
        header = source.read(8)
        if len(header) < 8:
            raise EOFError
        return json.loads(source.read(int.from_bytes(header, "big")))

    while _serve_one(receive, reply):
        pass


def _serve_one(receive: Any, reply: Any) -> bool:
    """Build one test's environments and answer until the test is over; False when the worker is to stop."""
    try:
        start = receive()
    except (EOFError, OSError, ValueError):
        return False
    if start.get("op") == "stop":
        return False
    _limit_cpu()
    sys.path[:] = start["path"]
    environments: dict[str, ToolEnvironment[Any]] = {}
    try:
        cls: Any = importlib.import_module(start["module"])
        for part in start["qualname"].split("."):
            cls = getattr(cls, part)
        for which in ("model", "reference") if start["reference"] else ("model",):
            environments[which] = cls(cls.config_model.model_validate(start["config"]))
    except Exception as exc:  # the plugin's own failure, said to the test
        reply(error=f"{type(exc).__name__}: {exc}")
        return False
    reply(value=True)
    while True:
        try:
            message = receive()
        except (EOFError, OSError, ValueError):
            return False
        if message.get("op") == "stop":
            return False
        if message.get("op") == "release":
            reply(value=True)
            return True
        try:
            reply(value=_answer(environments, message))
        except Exception as exc:  # a state or a comparison the plugin could not make
            reply(error=f"{type(exc).__name__}: {exc}")


def _answer(environments: dict[str, ToolEnvironment[Any]], message: dict[str, Any]) -> Any:
    op = message.get("op")
    if op == "call":
        environment = environments[message["which"]]
        try:
            result = environment.call(message["name"], message["arguments"])
        except Exception as exc:  # what a call raises is its result, as the model would see it
            result = f"{EXECUTION_ERROR}{exc}"
        text = result if isinstance(result, str) else str(result)
        if len(text) > MAX_RESULT_CHARS:
            text = text[:MAX_RESULT_CHARS] + f"\n[result cut at {MAX_RESULT_CHARS} characters]"
        return text
    if op == "state":
        return _json_safe(environments["model"].state())
    if op == "differences":
        if "reference" not in environments:
            return {}
        return _json_safe(environments["model"].differences(environments["reference"]))
    raise ValueError(f"unknown message {op!r}")


def _json_safe(value: Any) -> Any:
    return json.loads(json.dumps(value, default=repr))


if __name__ == "__main__":
    _serve()
