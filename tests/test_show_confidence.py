"""A recorded run's confidence in `tsuka show`, and each level's stored name and endpoint in `tsuka runs --json`."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from answerers import by_model, failing, fooled, perfect, which_test
from history_helpers import history_of, invoke, stored
from loopback import LoopbackServer, Reply
from test_profiles_confidence import right_then_fooled
from test_project_file_sweep import KEYS, clashing_servers, history, two_endpoints

from tsuka_core.engine.confidence import BORDERLINE

CATEGORIES = ("instruction", "json", "toolCalling")


def recorded(tmp_path: Path, *args: str) -> tuple[Path, str]:
    """The store of a run of ``sure`` (every answer right) and ``unsure`` (borderline), and the run's summary."""
    store = tmp_path / "models_profile.json"
    answers = by_model({"sure": perfect, "unsure": fooled, "varying": right_then_fooled()})
    with LoopbackServer(answers, models=["sure", "unsure", "varying"]) as server:
        ran = invoke("run", *args, "--base-url", server.base_url, "--profiles", store, "-e", "none")
    assert ran.exit_code == 0, ran.stderr
    return store, ran.stdout


def block(output: str, key: str) -> list[str]:
    """The lines of level ``key`` in a run summary or `tsuka show`: its heading down to its first test.

    Its failure kinds and speed lines are left out: these tests are about its confidence.
    """
    lines = [line for line in output.splitlines() if not line.startswith(("  failure kinds: ", "  speed "))]
    (at,) = [i for i, line in enumerate(lines) if line.startswith(f"{key}  tier ")]
    end = next(i for i in range(at + 1, len(lines)) if lines[i].startswith("    "))
    return lines[at:end]


def expected(profile: dict[str, Any], repeats: int = 1) -> list[str]:
    """The confidence lines a level with the stored ``profile`` must show, written from the profile's own numbers."""
    spans = "  ".join(f"{c} {round(lo * 100)}%-{round(hi * 100)}%" for c, (lo, hi) in profile["intervals"].items())
    lines = [f"  95% intervals: {spans}"]
    if profile["tierConfidence"] < BORDERLINE:
        more = "add --repeats" if repeats == 1 else "add more --repeats"
        lines.append(
            f"  borderline: tier confidence {profile['tierConfidence']:.2f} is under {BORDERLINE}; "
            f"{more} or use the extended suite"
        )
    if repeats > 1:  # then pass^1 and pass^n of each category, and the flaky tests
        table = profile["passHatK"]
        spans = "  ".join(
            f"{c} pass^1 {round(v[0] * 100)}% pass^{repeats} {round(v[-1] * 100)}%" for c, v in table.items()
        )
        lines.append(f"  reliability over {repeats} runs: {spans}")
        if profile["flakyTests"]:
            lines.append(f"  flaky (passed some runs, failed others): {', '.join(profile['flakyTests'])}")
    return lines


@pytest.mark.parametrize("repeats", [1, 3])
def test_show_gives_each_level_the_confidence_of_the_summary_and_the_profile(repeats: int, tmp_path: Path) -> None:
    store, summary = recorded(tmp_path, "sure", "unsure", "varying", "--repeats", str(repeats))
    profiles = stored(store)["profiles"]
    assert list(profiles["unsure@none"]["intervals"]) == list(CATEGORIES)

    shown = invoke("show", "last", "--profiles", store)

    assert shown.exit_code == 0, shown.stderr
    for key, profile in profiles.items():
        tier = f"{key}  tier {profile['tier']} (confidence {profile['tierConfidence']:.2f})"
        ran, listed = block(summary, key), block(shown.stdout, key)
        assert ran[0].startswith(tier), ran[0]
        assert listed[0].startswith(f"{tier}  recommended"), listed[0]
        assert ran[2:] == listed[2:] == expected(profile, repeats), key
    assert len(block(shown.stdout, "unsure@none")) == 4 + (repeats > 1)  # with the borderline advice
    assert len(block(shown.stdout, "sure@none")) == 3 + (repeats > 1)
    assert ("add more --repeats" in shown.stdout) == (repeats > 1)


def test_show_of_one_level_shows_its_confidence_too(tmp_path: Path) -> None:
    store, _ = recorded(tmp_path, "unsure")
    profile = stored(store)["profiles"]["unsure@none"]

    shown = invoke("show", "1", "unsure@none", "--profiles", store)

    assert shown.exit_code == 0, shown.stderr
    assert block(shown.stdout, "unsure@none")[2:] == expected(profile)
    assert "✓ checks[0] word_count" in shown.stdout


def one_test_failing(body: dict[str, Any], n: int) -> Reply:
    """Right everywhere but in ``frase_8_parole``, whose requests fail."""
    return failing()(body, n) if which_test(body)[0] == "frase_8_parole" else perfect(body, n)


def test_a_level_with_errored_tests_or_a_record_without_confidence_shows_none(tmp_path: Path) -> None:
    store = tmp_path / "models_profile.json"
    with LoopbackServer(by_model({"m1": one_test_failing, "m2": perfect}), models=["m1", "m2"]) as server:
        ran = invoke("run", "m1", "m2", "--base-url", server.base_url, "--profiles", store, "-e", "none",
                     "--retries", "0")  # fmt: skip
    assert "frase_8_parole" in ran.stdout + ran.stderr
    with closing(sqlite3.connect(history_of(store))) as db:
        db.execute("UPDATE levels SET record = json_remove(record, '$.tierConfidence') WHERE model = 'm2'")
        db.commit()

    shown = invoke("show", "last", "--profiles", store)

    assert shown.exit_code == 0, shown.stderr
    assert "    frase_8_parole               ERROR  " in shown.stdout
    assert block(shown.stdout, "m1@none")[0].startswith("m1@none  tier ")
    assert block(shown.stdout, "m2@none")[0].startswith("m2@none  tier large  recommended")
    assert "confidence" not in shown.stdout
    assert "95% intervals" not in shown.stdout
    assert "borderline" not in shown.stdout


# --- tsuka runs --json ------------------------------------------------------------------------------------------------


def test_runs_json_names_each_levels_endpoint_and_stored_name(tmp_path: Path) -> None:
    one, two = clashing_servers()
    with one, two:
        ran = invoke("run", "--config", two_endpoints(tmp_path, one, two))
    assert ran.exit_code == 0, ran.stdout + ran.stderr
    single = tmp_path / "single"
    single.mkdir()
    store, _ = recorded(single, "sure")

    (run,) = json.loads(invoke("runs", "--history-db", history(tmp_path), "--json").stdout)
    (alone,) = json.loads(invoke("runs", "--profiles", store, "--json").stdout)

    levels = sorted(run["levels"], key=lambda lv: lv["key"])
    assert [lv["key"] for lv in levels] == KEYS
    assert [(lv["name"], lv["endpoint"]) for lv in levels] == [("beta", "two"), ("one:alpha", "one"),
                                                                ("two:alpha", "two")]  # fmt: skip
    assert alone["levels"] == [
        {"key": "sure@none", "name": "sure", "endpoint": None, "tier": "large", "recommended": True, "repeats": 1}
    ]
    profiles = stored(tmp_path / "store.json")["profiles"]
    shown = invoke("show", "1", "--history-db", history(tmp_path))
    for key in KEYS:
        assert f"{key}  tier {profiles[key]['tier']} (confidence {profiles[key]['tierConfidence']:.2f})" in shown.stdout
