"""tsuka and promptfoo side by side: the same single-request tests, the same loopback server, one run.

Both tools run N single-step tests against ``bench/_server.py`` (a fixed
latency, canned answers) at the same concurrency, each with its defaults (its
results stored as a user would keep them: tsuka's profile and history,
promptfoo's own database and cache, in a fresh folder). Every test of either
tool asks one chat completion and judges the answer with checks of the same
kinds: words, lines, regular expressions, JSON values, tool calls.

For each tool and N the script prints wall time, the harness cost per test
(``wall - ceil(N / C) * latency``, spread over the tests, start-up
included), CPU time, peak RSS, the requests (every one answered), the most it
held at once and the connections it accepted; then the ratio of the costs.

Usage (promptfoo is not a dependency of tsuka: install it anywhere)::

    npm install --prefix /tmp/pf promptfoo
    python bench/versus.py --promptfoo /tmp/pf/node_modules/.bin/promptfoo
    python bench/versus.py --promptfoo ... -n 200,2000 -l 20 -c 64 -r 3

Telemetry, update checks and sharing of promptfoo are turned off through its
documented environment variables; its configuration folder is a temporary one.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _measure import LoopbackProcess, run_process, server_stats
from _suite import KINDS, write_suite
from perf import Row, child_env

MODEL = "bench-a"

# The checks of each kind of bench/_suite.py, written as promptfoo assertions ("javascript" where it has no
# assertion of the kind). `output` is the answer's text, or the tool calls when the answer made some.
_FENCE = "(output.match(/```(?:json)?\\s*([\\s\\S]*?)```/) || [null, output])[1]"
PROMPTFOO_ASSERTS: dict[str, list[dict[str, Any]]] = {
    "sentence": [
        {"type": "javascript", "value": "output.trim().split(/\\s+/).length === 10", "weight": 2},
        {"type": "javascript", "value": "/^Every\\b/.test(output.trim())"},
        {"type": "javascript", "value": "/\\briver\\W*$/.test(output.trim())"},
        {"type": "not-contains", "value": ","},
        {"type": "javascript", "value": "/\\bfisherman\\b/i.test(output)"},
        {"type": "javascript", "value": "output.trim().length > 0"},
    ],
    "list": [
        {"type": "javascript", "value": "output.trim().split('\\n').length === 3", "weight": 2},
        {"type": "contains", "value": "copper"},
        {"type": "not-regex", "value": "^\\s*[-*\\d]"},
    ],
    "json": [
        {"type": "is-json", "weight": 3},
        {"type": "javascript", "value": "JSON.parse(output).cheapest.length === 3", "weight": 2},
        {"type": "javascript", "value": "JSON.parse(output).cheapest[0].name === 'spoon'"},
        {"type": "javascript", "value": "JSON.parse(output).cheapest[2].price === 9"},
        {"type": "javascript", "value": "JSON.parse(output).total_cost === 73", "weight": 2},
        {"type": "javascript", "value": "typeof JSON.parse(output).in_stock === 'boolean'"},
    ],
    "fenced": [
        {"type": "javascript", "value": f"!!JSON.parse({_FENCE})"},
        {"type": "javascript", "value": f"JSON.parse({_FENCE}).cheapest.filter(c => c.price > 5)[0].name === 'mug'"},
        {"type": "javascript", "value": f"JSON.parse({_FENCE}).store.tags.length === 2"},
        {"type": "javascript", "value": f"Number.isInteger(JSON.parse({_FENCE}).cheapest.length)"},
    ],
    "tool": [
        {"type": "javascript", "value": "output.some(c => c.function.name === 'get_weather')", "weight": 2},
        {"type": "javascript", "value": "!output.some(c => c.function.name === 'send_email')"},
        {"type": "javascript", "value": "JSON.parse(output[0].function.arguments).days === 3", "weight": 2},
        {"type": "javascript", "value": "JSON.parse(output[0].function.arguments).options.unit === 'celsius'"},
        {"type": "javascript", "value": "/^paris$/i.test(JSON.parse(output[0].function.arguments).city)"},
    ],
    "abstain": [
        {"type": "javascript", "value": "typeof output === 'string'", "weight": 2},
        {"type": "contains", "value": "send_email"},
    ],
}


def line(row: Row) -> str:
    """A row as printed: ``row.mode`` is the tool's name."""
    if row.failure:
        return f"{row.mode:<10} {row.n:>6}  FAILED: {row.failure}"
    return (
        f"{row.mode:<10} {row.n:>6} {row.latency_ms:>6} {row.concurrency:>4} {row.wall:>8.3f} "
        f"{row.ms_per_test:>8.3f} {row.cpu:>7.3f} {row.rss:>7.1f} {row.requests:>6} {row.max_in_flight:>8} "
        f"{row.connections:>5} {len(row.samples):>4}"
    )


HEAD = (
    f"{'tool':<10} {'N':>6} {'lat_ms':>6} {'C':>4} {'wall_s':>8} {'ms/test':>8} {'cpu_s':>7} {'rss_MB':>7} "
    f"{'req':>6} {'inflight':>8} {'conns':>5} {'runs':>4}"
)


def promptfoo_config(suite: Path, base_url: str, folder: Path) -> Path:
    """The promptfoo configuration of the tests in ``suite`` (same prompts, the same checks as assertions)."""
    tests = []
    for path in sorted(suite.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        kind = path.stem.rsplit("_", 1)[1]
        tests.append({"description": path.stem, "vars": {"prompt": data["prompt"]}, "assert": PROMPTFOO_ASSERTS[kind]})
    provider = {"id": f"openai:chat:{MODEL}", "config": {"apiBaseUrl": base_url, "apiKey": "none"}}
    config = {"providers": [provider], "prompts": ["{{prompt}}"], "tests": tests}
    path = folder.with_name(f"{folder.name}.promptfooconfig.json")
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def promptfoo_env(env: dict[str, str], folder: Path) -> dict[str, str]:
    """promptfoo's environment: its state in ``folder`` (no cached answer), no telemetry, update check or sharing."""
    return dict(
        env,
        PROMPTFOO_CONFIG_DIR=str(folder / "config"),
        PROMPTFOO_CACHE_PATH=str(folder / "cache"),
        PROMPTFOO_DISABLE_TELEMETRY="1",
        PROMPTFOO_DISABLE_UPDATE="1",
        PROMPTFOO_DISABLE_SHARING="1",
        OPENAI_API_KEY="none",
    )


def measure(
    row: Row, argv: list[str], env: Callable[[Path], dict[str, str]], folder: Path, port: int, repeats: int
) -> None:
    """Run ``argv`` ``repeats`` times, each in a fresh folder, recording each run and the server's counts.

    ``{work}`` in ``argv`` is the run's folder; ``env`` gives the environment of a run from its folder.
    """
    for attempt in range(1, repeats + 1):
        work = Path(tempfile.mkdtemp(prefix=f"{row.mode}-{row.n}-{attempt}-", dir=folder))
        server_stats(port, reset=True)
        command = [a.replace("{work}", str(work)) for a in argv]
        sample = run_process(command, env=env(work), cwd=work, stdout=work / "out.txt", stderr=work / "err.txt")
        stats = server_stats(port)
        if sample.returncode not in (0, 100) or stats["chat"] < row.n:  # promptfoo exits 100 when a test fails
            tail = (work / "err.txt").read_text(errors="replace").strip().splitlines()[-1:] or ["no output"]
            row.failure = f"exit {sample.returncode}, {stats['chat']} of {row.n} requests: {tail[0][:200]}"
            return
        if row.mode == "promptfoo":  # every test must pass, as every tsuka test scores 1
            stats_file = json.loads((work / "results.json").read_text(encoding="utf-8"))["results"]["stats"]
            if stats_file["successes"] != row.n:
                row.failure = f"{stats_file['successes']} of {row.n} tests passed: an assertion does not fit"
                return
        row.samples.append(sample)
        row.max_in_flight = max(row.max_in_flight, stats["max_in_flight"])
        row.connections = max(row.connections, stats.get("connections", 0))


def main() -> int:
    """Measure both tools at every N and print the rows and the ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--promptfoo", required=True, help="the promptfoo command (its path)")
    parser.add_argument("--tsuka", default=str(Path(sys.executable).with_name("tsuka")), help="the tsuka command")
    parser.add_argument("-n", default="200,2000", help="suite sizes, comma-separated (default 200,2000)")
    parser.add_argument("-l", "--latency", type=int, default=20, help="milliseconds per answer (default 20)")
    parser.add_argument("-c", "--concurrency", type=int, default=64, help="requests at once (default 64)")
    parser.add_argument("-r", "--repeats", type=int, default=1, help="runs per row, median kept (default 1)")
    args = parser.parse_args()
    if shutil.which(args.promptfoo) is None:
        parser.error(f"--promptfoo: {args.promptfoo} is not a command")
    sizes = [int(n) for n in args.n.split(",")]
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="tsuka-versus-") as tmp:
        folder = Path(tmp)
        env = child_env(folder)  # as perf.py's: a user's environment, bytecode cached
        with LoopbackProcess([MODEL], env) as server:
            base_url = server.base_url(args.latency)
            print(f"versus: N={args.n}, {args.latency} ms, C={args.concurrency}, {args.repeats} run(s) per row")
            print(HEAD)
            for n in [6, *sizes]:  # the first, small, row warms both tools' caches of compiled code; not shown
                suite = folder / f"suite-{n}"
                write_suite(suite, n)
                tsuka = Row("tsuka", n, n, args.latency, args.concurrency)
                argv = [args.tsuka, "run", MODEL, "-e", "none", "--base-url", base_url, "--suite", str(suite)]
                argv += ["--profiles", "{work}/profiles.json", "-j", str(args.concurrency)]
                measure(tsuka, argv, lambda _work: env, folder, server.port, args.repeats)
                config = promptfoo_config(suite, base_url, folder / suite.name)
                other = Row("promptfoo", n, n, args.latency, args.concurrency)
                argv = [args.promptfoo, "eval", "-c", str(config), "-j", str(args.concurrency), "--no-table"]
                argv += ["-o", "{work}/results.json"]
                measure(other, argv, lambda work: promptfoo_env(env, work), folder, server.port, args.repeats)
                if n in sizes:
                    print(line(tsuka), line(other), sep="\n", flush=True)
                    rows += [tsuka, other]
    print("harness cost per test, promptfoo / tsuka:")
    for n in sizes:
        mine, theirs = (next(r for r in rows if r.mode == t and r.n == n) for t in ("tsuka", "promptfoo"))
        if mine.failure or theirs.failure:
            print(f"  N={n}: not compared (a row failed)")
            continue
        cost, other_cost = mine.ms_per_test, theirs.ms_per_test
        print(f"  N={n}: {other_cost:.3f} / {cost:.3f} ms = {other_cost / cost:.2f}x")
    return 0


if __name__ == "__main__":
    assert set(PROMPTFOO_ASSERTS) == set(KINDS), "every kind of bench/_suite.py needs its promptfoo assertions"
    sys.exit(main())
