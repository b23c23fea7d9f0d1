"""``--repeats N``: every test run N times, scored by its mean, with the spread and each run kept in the profile."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from answerers import DEFAULT_TESTS, Answerer, perfect, refusing_effort, tool_shy
from click.testing import CliRunner
from loopback import LoopbackServer, Reply

from tsuka_core import BackendConfig, Registry, RunOptions, RunReport, run_benchmark
from tsuka_core.backends.openai import OpenAIBackend
from tsuka_core.cli.main import cli
from tsuka_core.engine import results
from tsuka_core.engine.results import group_runs
from tsuka_core.errors import RequestError
from tsuka_core.judge.scoring import mean_score, score_spread
from tsuka_core.suite import model
from tsuka_core.suite.loading import default_suite_path
from tsuka_core.suite.model import Suite
from tsuka_core.terms import Effort

DEFAULT_SUITE = default_suite_path()
"""The default suite as installed (in a source checkout, ``benchmarks/``): profiles measured with it are the
default suite's."""
TESTS = list(DEFAULT_TESTS)


pytestmark = pytest.mark.usefixtures("fast_retries")


def _key(body: dict[str, Any]) -> str:
    return json.dumps(body["messages"], sort_keys=True) + str(body.get("reasoning_effort"))


def alternating() -> Answerer:
    """Answer a conversation right the first time it is seen, tool-shy the second, right the third, and so on.

    Which run of a test gets which answer depends on arrival order; how many runs
    get each does not, so every test's mean and spread are fixed.
    """
    seen: Counter[str] = Counter()

    def answer(body: dict[str, Any], n: int) -> Reply:
        key = _key(body)
        seen[key] += 1
        return perfect(body, n) if seen[key] % 2 == 1 else tool_shy(body, n)

    return answer


def right_once() -> Answerer:
    """Answer a conversation right the first time it is seen, with a server error every time after."""
    seen: Counter[str] = Counter()

    def answer(body: dict[str, Any], n: int) -> Reply:
        key = _key(body)
        seen[key] += 1
        return perfect(body, n) if seen[key] == 1 else Reply.error(500, "the model crashed")

    return answer


class Quiet:
    """A sweep observer that keeps the notes and counts finished runs."""

    def __init__(self) -> None:
        self.notes: list[str] = []
        self.totals: list[int] = []
        self.done: list[tuple[str, int]] = []

    def level_started(self, model: str, effort: str, applied: bool, total: int) -> None:
        del model, effort, applied
        self.totals.append(total)

    def test_done(self, model: str, effort: str, result: results.TestResult) -> None:
        del model, effort
        self.done.append((result.test.name, result.repeat))

    def note(self, message: str) -> None:
        self.notes.append(message)


def measure(
    suite: Suite,
    registry: Registry,
    store: Path,
    answerer: Answerer,
    repeats: int,
    *,
    efforts: tuple[Effort, ...] = ("none",),
    config: dict[str, Any] | None = None,
    **options: Any,
) -> tuple[RunReport, LoopbackServer, Quiet]:
    """Run the default suite for model m1 against a loopback server answering with ``answerer``."""
    observer = Quiet()
    with LoopbackServer(answerer, models=("m1",)) as server:
        settings = {"retries": 1, "timeout": 10, **(config or {})}
        run = RunOptions(
            models=("m1",),
            config=BackendConfig(base_url=server.base_url, **settings),
            efforts=efforts,
            store_path=store,
            repeats=repeats,
            **options,
        )
        report = asyncio.run(run_benchmark(run, suite, registry, observer))
    return report, server, observer


def test_a_repeated_test_scores_the_mean_of_its_runs_and_keeps_their_spread(
    suite: Suite, registry: Registry, tmp_path: Path
) -> None:
    store = tmp_path / "p.json"
    report, server, observer = measure(suite, registry, store, alternating(), repeats=2)

    assert report.ok
    # Right runs send both steps of the two chained tests (9 requests), tool-shy runs stop after the first (7).
    assert len(server.bodies) == 16
    assert observer.totals == [14]
    assert sorted(observer.done) == sorted((name, k) for name in TESTS for k in (1, 2))
    profile = json.loads(store.read_text(encoding="utf-8"))["profiles"]["m1@none"]
    assert profile["repeats"] == 2
    entries = {e["name"]: e for e in profile["testResults"]}
    assert [e["name"] for e in profile["testResults"]] == TESTS
    for name in ("catena_tool_distrattori", "tool_write_append"):  # right once, tool-shy once
        assert sorted(entries[name]["runs"]) == [0, 1]
        assert (entries[name]["score"], entries[name]["spread"]) == (0.5, 0.5)
    for name in set(TESTS) - {"catena_tool_distrattori", "tool_write_append"}:
        assert entries[name]["runs"] == [1, 1]
        assert (entries[name]["score"], entries[name]["spread"]) == (1, 0)
    # Right runs make it large, tool-shy runs small; their mean is medium (toolCalling 0.5*0.8 + 0.2).
    assert profile["scores"] == {"instruction": 1, "json": 1, "toolCalling": 0.6}
    assert profile["tier"] == "medium"
    assert report.recommendations == {"m1": "none"}


def test_a_single_run_writes_no_repeat_fields(suite: Suite, registry: Registry, tmp_path: Path) -> None:
    store = tmp_path / "p.json"
    report, server, _ = measure(suite, registry, store, alternating(), repeats=1)

    assert report.ok
    assert len(server.bodies) == 9
    profile = json.loads(store.read_text(encoding="utf-8"))["profiles"]["m1@none"]
    assert "repeats" not in profile
    assert all(set(entry) == {"name", "category", "score"} for entry in profile["testResults"])
    assert profile["tier"] == "large"


def test_a_run_that_fails_for_good_leaves_the_level_unstored_and_names_the_run(
    suite: Suite, registry: Registry, tmp_path: Path
) -> None:
    store = tmp_path / "p.json"
    report, _, _ = measure(suite, registry, store, right_once(), repeats=2, config={"retries": 0})

    assert not report.ok
    assert report.profiles == {}
    assert not store.exists()
    (failure,) = report.failed
    assert failure.startswith("m1@none not stored: ")
    assert re.search(r"frase_8_parole \(run [12] of 2\): step 0: POST \S+: HTTP 500: the model crashed", failure)


def test_repeats_bypass_the_response_cache_and_say_so(suite: Suite, registry: Registry, tmp_path: Path) -> None:
    store = tmp_path / "p.json"
    history = tmp_path / "history.sqlite"
    first, _, _ = measure(suite, registry, store, perfect, repeats=1, history_path=history, cache_path=history)
    again, server, observer = measure(
        suite, registry, store, perfect, repeats=2, history_path=history, cache_path=history
    )

    assert first.cache == {"hits": 0, "misses": 9}
    assert again.ok
    assert again.cache is None
    assert len(server.bodies) == 18  # every run asked the model, none answered from the cache
    assert observer.notes == ["--repeats 2 bypasses the response cache: every run asks the model for a fresh answer"]


def _result(test: model.Test, score: float, repeat: int) -> results.TestResult:
    return results.TestResult(test, "ok", score, repeat=repeat)


def test_runs_group_by_test_in_first_seen_order_with_runs_in_repeat_order(suite: Suite) -> None:
    one, two = suite.tests[0], suite.tests[1]
    mixed = [_result(two, 1.0, 2), _result(one, 0.0, 2), _result(two, 0.0, 1), _result(one, 1.0, 1)]

    groups = group_runs(mixed)

    assert [(g.test.name, [r.repeat for r in g.runs]) for g in groups] == [(two.name, [1, 2]), (one.name, [1, 2])]
    assert [g.scores for g in groups] == [[0.0, 1.0], [1.0, 0.0]]


@pytest.mark.parametrize(
    ("runs", "mean", "spread"),
    [
        ([1.0], 1.0, 0.0),
        ([0.0, 1.0], 0.5, 0.5),
        ([1.0, 1.0, 0.0], 0.67, 0.47),
        ([0.25, 0.25, 0.25, 0.25], 0.25, 0.0),
        ([0.5, 0.75], 0.63, 0.13),  # 0.625 and 0.125 round half up
        ([], 0.0, 0.0),
    ],
)
def test_mean_and_spread_are_rounded_half_up(runs: list[float], mean: float, spread: float) -> None:
    assert mean_score(runs) == mean
    assert score_spread(runs) == spread


def test_the_cli_rejects_zero_repeats_with_a_one_line_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["run", "m1", "--repeats", "0", "--profiles", str(tmp_path / "p.json")])

    assert result.exit_code == 2
    assert "--repeats" in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "p.json").exists()


def test_the_cli_runs_repeats_and_prints_mean_spread_and_runs(tmp_path: Path) -> None:
    store = tmp_path / "p.json"
    with LoopbackServer(alternating(), models=("m1",)) as server:
        args = ["run", "m1", "-e", "none", "--repeats", "2", "--base-url", server.base_url]
        result = CliRunner().invoke(cli, [*args, "--profiles", str(store), "--no-history", "--json"])

    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout)
    (level,) = printed["levels"]
    assert level["repeats"] == 2
    assert sorted((t["name"], t["repeat"]) for t in level["tests"]) == sorted((n, k) for n in TESTS for k in (1, 2))
    assert printed["profiles"]["m1@none"]["repeats"] == 2
    assert "m1@none  tier medium (confidence 0.50)  (2 runs per test)" in result.stderr
    assert printed["profiles"]["m1@none"]["tierConfidence"] == 0.5
    advice = "borderline: tier confidence 0.50 is under 0.8; add more --repeats or use the extended suite"
    assert advice in result.stderr
    assert re.search(r"catena_tool_distrattori +0\.50 ± 0\.50  runs (0\.00 1\.00|1\.00 0\.00)", result.stderr)
    assert re.search(r"x run [12]: steps\[0\]\.checks\[0\] tool_called", result.stderr)


# --- runs that can differ, and efforts refused with many runs queued -----------------------------------------------


def test_each_run_is_sent_its_own_seed_so_runs_can_differ(suite: Suite, registry: Registry, tmp_path: Path) -> None:
    config = {"seed": 7, "temperature": 0.7}
    report, server, observer = measure(suite, registry, tmp_path / "p.json", perfect, repeats=3, config=config)

    assert report.ok
    assert Counter(body["seed"] for body in server.bodies) == {7: 9, 8: 9, 9: 9}
    # This server answers the same whatever the seed: said, since pass^k then measures nothing.
    assert observer.notes == [
        "m1: --repeats 3 at --temperature 0.7 gave identical answers run after run at none: the server does not "
        "sample (llama-server started with --top-k 1 or --temp 0, or a seed it reuses); pass^k and the spread "
        "measure nothing until it does"
    ]


def test_repeats_that_differ_say_nothing_of_sampling(suite: Suite, registry: Registry, tmp_path: Path) -> None:
    def sampling(body: dict[str, Any], n: int) -> Reply:
        reply = perfect(body, n)
        if reply.content is not None and not reply.tool_calls:
            return dataclasses.replace(reply, content=f"{reply.content} (answer {n})")
        return reply

    _, _, observer = measure(suite, registry, tmp_path / "p.json", sampling, repeats=2, config={"temperature": 0.7})
    assert observer.notes == []


def test_greedy_sampling_with_repeats_is_said(suite: Suite, registry: Registry, tmp_path: Path) -> None:
    _, _, observer = measure(suite, registry, tmp_path / "p.json", perfect, repeats=2, config={"temperature": 0})

    assert observer.notes == ["--repeats 2: --temperature 0 samples greedily, so every run gives the same answer"]


def test_a_refused_effort_cancels_the_runs_still_queued(suite: Suite, registry: Registry, tmp_path: Path) -> None:
    report, server, observer = measure(
        suite, registry, tmp_path / "p.json", refusing_effort, repeats=20, efforts=("low",), concurrency=4
    )

    assert report.ok
    assert list(report.profiles) == ["m1@none"]
    refused = [body for body in server.bodies if "reasoning_effort" in body]
    assert 1 <= len(refused) <= 8  # those in flight when the first refusal came back, not all 140 runs
    assert len(server.bodies) - len(refused) == 20 * 9  # the level measured once without it, every run
    assert observer.totals == [140, 140]


def test_a_backend_that_cannot_tell_whether_efforts_apply_is_swept_as_usual(
    suite: Suite, registry: Registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(self: OpenAIBackend, model: str) -> str | None:
        raise RequestError(f"GET /props for {model}: cannot connect")

    monkeypatch.setattr(OpenAIBackend, "effort_ignored", broken)
    report, _, observer = measure(suite, registry, tmp_path / "p.json", perfect, repeats=1, efforts=("none", "low"))

    assert report.ok
    assert list(report.profiles) == ["m1@none", "m1@low"]
    note, ignored = observer.notes  # the second: identical answers at both levels
    assert "appears to ignore the effort setting" in ignored
    assert note.startswith("m1: backend 'openai' could not tell whether efforts apply (RequestError: GET /props")
    assert note.endswith("sweeping the levels as usual")
