"""One record of a measured level: the profile and the history keep the same one, bounded the same way."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from answerers import perfect
from history_helpers import invoke
from loopback import LoopbackServer

from tsuka_core.backends.base import BackendConfig, ChatResponse
from tsuka_core.engine import results
from tsuka_core.engine.record import level_record, out_of_range
from tsuka_core.engine.results import LevelResult, StepResult
from tsuka_core.engine.sweep import level_result
from tsuka_core.record import LevelRecord
from tsuka_core.storage.history_query import load_run
from tsuka_core.storage.recorder import RunInfo, RunRecorder
from tsuka_core.suite.loading import load_suite
from tsuka_core.testing import ScriptedBackend

pytestmark = pytest.mark.usefixtures("fast_retries")


def _level(**changes: Any) -> LevelResult:
    suite = load_suite("default")
    backend = ScriptedBackend({}, BackendConfig())
    return replace(level_result(backend, suite, "m1", "none", True, ()), **changes)


@pytest.mark.parametrize(
    ("changes", "figure"),
    [
        ({"tokens_per_second": 1e16}, "tokensPerSecond 1e+16"),
        ({"avg_completion_tokens": 50_000_000}, "avgCompletionTokens 50000000"),
        ({"measured": {"timeToFirstTokenMs": 1e12}}, "timeToFirstTokenMs 1000000000000.0"),
        ({"measured": {"answerFaults": {"cutAtLimit": -1}}}, 'answerFaults {"cutAtLimit": -1}'),
    ],
)
def test_a_figure_out_of_range_is_left_out_and_named(changes: dict[str, Any], figure: str) -> None:
    measured = {"tokens_per_second": 42.5, "avg_completion_tokens": 128}
    record = level_record(_level(**{**measured, **changes}))
    assert out_of_range(record) == [figure]
    stored = record.stored()
    name = figure.split(maxsplit=1)[0]
    if name in ("tokensPerSecond", "avgCompletionTokens"):
        assert stored[name] == 0  # TSUKA requires the field: 0 is its "not reported"
    else:
        assert name not in stored
    untouched = level_record(_level(**measured)).stored()
    for other in {"tokensPerSecond", "avgCompletionTokens"} - {name}:
        assert stored[other] == untouched[other]  # the figure next to it is kept as measured
    assert LevelRecord.parse(stored).damaged == {}  # what was written reads back whole


def test_a_level_with_an_absurd_rate_is_recorded_and_read_back_from_the_history(tmp_path: Path) -> None:
    history = tmp_path / "h.sqlite"
    recorder = RunRecorder(history, RunInfo("suite", "hash", "scripted", "scripted", ["m1"], ["none"], {}))
    absurd = _level(tokens_per_second=1e16, avg_completion_tokens=10**9)
    recorder.record_levels([absurd], [level_record(absurd)])
    recorder.finish("ok")
    (level,) = load_run(history, 1).levels
    assert level.record.tokens_per_second == 0
    assert level.record.avg_completion_tokens == 0
    assert level.record.damaged == {}


def test_every_backend_records_the_settings_it_was_sent_with() -> None:
    config = BackendConfig(max_tokens=77, temperature=0.3, seed=5, options={"mode": "fast", "token": "sk-secret-1"})
    level = level_result(ScriptedBackend({}, config), load_suite("default"), "m1", "none", True, ())
    record = level_record(level).stored()
    assert record["sampling"] == {"maxTokens": 77, "temperature": 0.3, "seed": 5}
    assert record["backendOptions"] == {"mode": "fast", "token": "***"}


def test_the_profile_and_the_history_keep_the_same_record(tmp_path: Path) -> None:
    store = tmp_path / "models_profile.json"
    with LoopbackServer(perfect, models=["m1"]) as server:
        ran = invoke(
            "run", "m1", "--base-url", server.base_url, "--profiles", store, "-e", "none", "--max-tokens", "512",
            "--seed", "3", "--option", "stream=off",
        )  # fmt: skip
    assert ran.exit_code == 0, ran.stderr
    profile = json.loads(store.read_text(encoding="utf-8"))["profiles"]["m1@none"]
    (level,) = load_run(tmp_path / ".tsuka" / "history.sqlite", 1).levels
    recorded = level.record.stored()
    assert profile == recorded  # every field, testedAt included: one record, built from one clock
    assert profile["sampling"] == {"maxTokens": 512, "seed": 3}
    assert profile["backendOptions"] == {"stream": "off"}


def test_a_run_builds_each_levels_record_once_and_the_store_and_the_history_carry_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two models at two levels, from a project file's endpoint: four levels, four records built, no more (the
    out-of-range check, the store, the history and the summary all read the one the level carries)."""
    from tsuka_core.engine import record

    built: list[str] = []

    def counted(level: LevelResult, *args: Any, **kwargs: Any) -> LevelRecord:
        built.append(f"{level.model}@{level.effort}")
        return level_record(level, *args, **kwargs)

    monkeypatch.setattr(record, "level_record", counted)
    store = tmp_path / "models_profile.json"
    with LoopbackServer(perfect, models=["m1", "m2"]) as server:
        project = tmp_path / "tsuka.toml"
        project.write_text(f'[[endpoints]]\nname = "local"\nbase_url = "{server.base_url}"\n', encoding="utf-8")
        ran = invoke("run", "all", "--config", project, "--profiles", store, "-e", "none", "-e", "low")
    assert ran.exit_code == 0, ran.stderr
    assert sorted(built) == ["m1@low", "m1@none", "m2@low", "m2@none"]
    profiles = json.loads(store.read_text(encoding="utf-8"))["profiles"]
    levels = load_run(tmp_path / ".tsuka" / "history.sqlite", 1).levels
    assert {f"{lv.model}@{lv.effort}": lv.record.stored() for lv in levels} == profiles
    assert all(profile["provider"].startswith("local ") for profile in profiles.values())


def test_two_settings_against_one_model_are_both_recorded_and_compared(tmp_path: Path) -> None:
    store = tmp_path / "models_profile.json"
    with LoopbackServer(perfect, models=["m1"]) as server:
        for limit in ("512", "24"):
            ran = invoke(
                "run", "m1", "--base-url", server.base_url, "--profiles", store, "-e", "none", "--max-tokens", limit
            )
            assert ran.exit_code == 0, ran.stderr
    history = tmp_path / ".tsuka" / "history.sqlite"
    limits = [load_run(history, n).levels[0].record.sampling for n in (1, 2)]
    assert [s.max_tokens if s else None for s in limits] == [512, 24]
    compared = invoke("compare", "1", "2", "--profiles", store)
    assert compared.exit_code == 0, compared.stderr
    assert "maxTokens 512 → 24" in compared.stdout


def test_compare_reads_a_levels_settings_from_its_record_the_chat_template_among_them() -> None:
    from tsuka_core.compare.settings import differences, record_settings

    embedded = LevelRecord.parse({"backend": "embedded", "provider": "embedded", "chatTemplate": "chatml-tools.jinja",
                                  "sampling": {"maxTokens": 512, "temperature": 0, "topK": 1}})  # fmt: skip
    other = LevelRecord.parse({"backend": "embedded", "provider": "embedded", "chatTemplate": "model",
                               "sampling": {"maxTokens": 512, "temperature": 0.7, "topK": 40}})  # fmt: skip
    assert differences(record_settings(embedded), record_settings(other)) == [
        "tools rendered by chat template chatml-tools.jinja → rendered by chat template model",
        "temperature 0 → 0.7",
        "topK 1 → 40",
    ]


def _answered(limits: list[int | None]) -> tuple[results.TestResult, ...]:
    """One test result per limit, each with one step answered by a request that sent that token limit."""
    test = load_suite("default").tests[0]
    steps = [(StepResult(0, True, (), response=ChatResponse(text="ok", token_limit=limit)),) for limit in limits]
    return tuple(results.TestResult(test, "ok", 1.0, answered) for answered in steps)


def test_the_token_limit_a_plugin_backend_sent_is_recorded_by_the_engine() -> None:
    """No --max-tokens: the limit every answer says its request sent is the record's maxTokens, whatever the
    backend (a plugin backend need not copy a convention into profile_extra)."""
    backend = ScriptedBackend({}, BackendConfig())
    suite = load_suite("default")
    sent = level_result(backend, suite, "m1", "none", True, _answered([777, 777]))
    assert level_record(sent).stored()["sampling"] == {"maxTokens": 777}
    mixed = level_result(backend, suite, "m1", "none", True, _answered([777, 512]))
    assert "maxTokens" not in (level_record(mixed).stored().get("sampling") or {})  # no one limit: none claimed
    unknown = level_result(backend, suite, "m1", "none", True, _answered([None]))
    assert "maxTokens" not in (level_record(unknown).stored().get("sampling") or {})
    given = level_result(ScriptedBackend({}, BackendConfig(max_tokens=64)), suite, "m1", "none", True, _answered([777]))
    assert level_record(given).stored()["sampling"] == {"maxTokens": 64}  # the user's setting is what was asked


def test_a_key_whose_model_holds_an_at_sign_is_read_from_its_last_at() -> None:
    """``org/m@v2@low``: the level is after the last ``@``, so a record saying ``low`` is not mislabelled."""
    record = LevelRecord.parse({"reasoningEffort": "low"})
    assert record.mislabelled("org/m@v2@low") is None
    assert record.mislabelled("org/m@v2@high") == 'is stored under "org/m@v2@high" but its reasoningEffort says "low"'


def test_a_field_of_no_declared_name_is_found_among_the_kept_ones() -> None:
    record = LevelRecord.parse({"customFigure": 7, "tier": "small"})
    assert record.found("customFigure") == 7
    assert record.found("tier") == "small"
    assert record.found("nothingHere") is None


NESTED = {
    "sampling": {"maxTokens": 512, "temperature": 0.2, "seed": 7, "topK": 40, "minP": 0.05},
    "compute": {"threads": 4, "cores": 8, "busyCores": 2, "load": 1.5, "chosenBy": "free cores", "parallel": 1},
    "server": {"kind": "llama.cpp", "version": "b6000", "slots": 2, "supportsTools": True},
    "speedFigures": {"latencyMs": {"p50": 120.5, "p95": 300.0, "answers": 9, "source": "wall", "formula": "t"}},
    "backendOptions": {"stream": True, "mode": ["a", 1]},
}


def test_the_nested_fields_are_typed_and_written_back_as_read() -> None:
    record = LevelRecord.parse({"tier": "small", **NESTED})

    assert record.damaged == {}
    assert record.sampling is not None
    assert (record.sampling.max_tokens, record.sampling.top_k) == (512, 40)
    assert record.sampling.found("minP") == 0.05  # a backend's own setting is kept
    assert record.compute is not None
    assert (record.compute.threads, record.compute.chosen_by) == (4, "free cores")
    assert record.server is not None
    assert (record.server.kind, record.server.supports_tools) == ("llama.cpp", True)
    assert record.speed_figures is not None
    assert record.speed_figures["latencyMs"].answers == 9
    assert record.stored() == {"tier": "small", **NESTED}


@pytest.mark.parametrize(
    ("field", "value", "inner"),
    [
        ("sampling", 5, None),
        ("compute", [4], None),
        ("server", "llama.cpp", None),
        ("speedFigures", {"latencyMs": 3}, None),
        ("compute", {"threads": "four", "cores": 8}, "threads"),
        ("server", {"kind": "llama.cpp", "slots": -1}, "slots"),
        ("sampling", {"maxTokens": True}, "maxTokens"),
    ],
)
def test_a_nested_field_of_the_wrong_kind_is_damage_where_it_is(field: str, value: Any, inner: str | None) -> None:
    record = LevelRecord.parse({"tier": "small", field: value})

    if inner is None:  # not an object where one belongs: the record's field is damaged
        assert record.damaged == {field: value}
        return
    assert record.damaged == {}
    nested = record.found(field)
    assert nested.damaged == {inner: value[inner]}
    assert nested.found(inner) == value[inner]
    assert inner not in nested.stored()  # never written back as if it were of its kind


def test_tool_scores_are_read_by_count_as_the_gate_and_the_report_read_them() -> None:
    stored = {"1": 1, "4": 0.9, "16": 0.5, "0": 1, "x": 1, "\u0663": 1, "-2": 1}

    record = LevelRecord.parse({"tier": "small", "toolCountScores": stored})

    assert record.tool_scores_by_count == {1: 1.0, 4: 0.9, 16: 0.5}
