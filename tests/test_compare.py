"""tsuka compare on recorded runs and stored profiles of the default suite: text, JSON, details, errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from answerers import by_model, fooled, perfect, which_test
from history_helpers import DEFAULT_SUITE, history_of, invoke
from loopback import LoopbackServer, Reply

from tsuka_core.cli.exits import BAD_INPUT, REGRESSED
from tsuka_core.cli.legacy_json import DEPRECATED_JSON_FILE

pytestmark = pytest.mark.usefixtures("fast_retries")

HOSTILE = "\x1b]0;pwned\x07\x1b[2J[bold red]loud[/bold red]"
"""An answer that would retitle and clear a terminal, and markup rich must not read."""


def hostile(body: dict[str, Any], n: int) -> Reply:
    """Right everywhere but the 8-word sentence, which it answers with escapes and markup."""
    if which_test(body)[0] == "frase_8_parole":
        return Reply.text(HOSTILE)
    return perfect(body, n)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Run 1: alpha right, beta fooled; run 2: alpha fooled, beta hostile; run 3 on an edited suite, 1 model."""
    folder = tmp_path_factory.mktemp("compare")
    store = folder / "models_profile.json"
    for answers in ({"alpha": perfect, "beta": fooled}, {"alpha": fooled, "beta": hostile}):
        with LoopbackServer(by_model(answers), models=["alpha", "beta"]) as server:
            result = invoke("run", "all", "--base-url", server.base_url, "--profiles", store, "-e", "none")
        assert result.exit_code == 0, result.stderr
    edited = folder / "edited"
    shutil.copytree(DEFAULT_SUITE, edited)
    (edited / "21_json_annidato.json").unlink()
    with LoopbackServer(perfect, models=["alpha"]) as server:
        result = invoke(
            "run", "all", "--base-url", server.base_url, "--profiles", folder / "other.json", "--suite", edited,
            "-e", "none", "--history-db", history_of(store),
        )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    return store


def compare(store: Path, *args: str | Path) -> Any:
    return invoke("compare", *args, "--profiles", store)


def test_run_against_run_shows_tiers_scores_and_what_changed(runs: Path) -> None:
    result = compare(runs, "1", "2")

    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert out.startswith("A: run 1 (suite default ")
    assert "Noise: paired bootstrap over the common tests (1000 resamples, seed 20250101, 95% interval)" in out
    alpha = out[out.index("alpha@none  tier") : out.index("beta@none  tier")]
    assert "alpha@none  tier large → medium (tier dropped)" in alpha
    assert "pass → fail (1):" in alpha
    assert "catena_tool_distrattori      1.00 → 0.63  pass → fail  (toolCalling)" in alpha
    flipped = 'tool_arg_equals: wrong arguments: get_invoices; customer_id is "CUS-3318", expected'
    assert f"passed → failed  steps[1].checks[1] {flipped}" in alpha
    assert "toolCalling" in alpha
    assert "Regression: alpha@none: tier large → medium" in out
    beta = out[out.index("beta@none  tier") :]
    assert "fail → pass (1):" in beta  # beta stopped being fooled...
    assert "pass → fail (1):" in beta  # ...and broke the sentence
    assert "frase_8_parole" in beta


def test_the_tier_drop_fails_the_gate(runs: Path) -> None:
    result = compare(runs, "1", "2", "--fail-on-regression")

    assert result.exit_code == REGRESSED
    assert "regression(s) (--fail-on-regression)" in result.stderr
    assert compare(runs, "1", "1", "--fail-on-regression").exit_code == 0


def test_last_and_last_tilde_name_the_runs_before_the_newest(runs: Path) -> None:
    assert compare(runs, "last~2", "last~1").stdout == compare(runs, "1", "2").stdout
    shown = invoke("show", "last~2", "--profiles", runs)
    assert shown.stdout.startswith("run 1 ")
    assert invoke("show", "last", "--profiles", runs).stdout.startswith("run 3 ")
    missing = invoke("show", "last~3", "--profiles", runs)
    assert missing.exit_code == BAD_INPUT
    assert "no run 'last~3' in" in missing.stderr
    assert "only 3 run(s) recorded" in missing.stderr


def test_profile_against_profile_pairs_two_models(runs: Path) -> None:
    result = compare(runs, "alpha@none", "beta")  # the profiles of run 2: alpha fooled, beta hostile

    assert result.exit_code == 0, result.stderr
    assert "A: profile alpha@none (suite default " in result.stdout
    assert "B: profile beta@none (suite default " in result.stdout
    assert "alpha@none → beta@none  tier medium → medium" in result.stdout
    assert "catena_tool_distrattori      0.63 → 1.00  fail → pass  (toolCalling)" in result.stdout
    assert "frase_8_parole               1.00 → 0.20  pass → fail  (instruction)" in result.stdout
    assert "passed → failed" not in result.stdout  # profiles keep no checks


def test_a_profile_against_a_run_pairs_the_same_level(runs: Path) -> None:
    result = compare(runs, "1", "alpha@none")

    assert result.exit_code == 0, result.stderr
    assert "alpha@none  tier large → medium (tier dropped)" in result.stdout
    assert "only in run 1 (not compared): beta@none" in result.stdout


def test_runs_of_different_suites_are_refused_in_one_line(runs: Path) -> None:
    result = compare(runs, "1", "3")

    assert result.exit_code == BAD_INPUT
    (line,) = result.stderr.splitlines()
    assert line.startswith("tsuka: error: run 1 was measured with suite ")
    assert line.endswith("; compare only the tests both have with --common-tests")
    assert result.stdout == ""


def test_common_tests_compares_what_both_suites_have(runs: Path, tmp_path: Path) -> None:
    out = tmp_path / "cmp.json"
    result = compare(runs, "2", "3", "--common-tests", "--json-file", out)

    assert result.exit_code == 0, result.stderr
    assert f"B: run 3 (suite {(runs.parent / 'edited').resolve()} " in result.stdout
    assert "--common-tests: only the tests both sides have are compared; tests are matched by name" in result.stdout
    assert "alpha@none: 6 common test(s), 1 only in run 2, 0 only in run 3" in result.stdout
    assert "category scores and tiers recomputed on the 6 common tests" in result.stdout
    data = json.loads(out.read_text(encoding="utf-8"))
    (level,) = data["levels"]
    assert data["commonTestsOnly"] is True
    assert level["onlyA"] == ["json_annidato"]
    json_delta = next(c for c in level["categories"] if c["category"] == "json")
    assert json_delta["tests"] == 1
    assert data["unpairedA"] == ["beta@none"]


def test_json_holds_the_whole_comparison(runs: Path, tmp_path: Path) -> None:
    out = tmp_path / "cmp.json"
    result = compare(runs, "1", "2", "--json-file", out)

    assert result.exit_code == 0
    assert f"Wrote {out}" in result.stdout
    assert result.stderr == ""
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["compareVersion"] == 1
    assert (data["a"]["kind"], data["a"]["label"], data["b"]["label"]) == ("run", "run 1", "run 2")
    assert data["hasRegression"] is True
    assert data["regressions"][0] == "alpha@none: tier large → medium"
    alpha = data["levels"][0]
    assert (alpha["a"], alpha["tierA"], alpha["tierB"], alpha["tierDropped"]) == ("alpha@none", "large", "medium", True)
    tools = alpha["categories"][2]
    assert (tools["category"], tools["scoreA"], tools["scoreB"], tools["tests"]) == ("toolCalling", 1, 0.85, 3)
    (change,) = alpha["changedTests"]
    assert change["direction"] == "pass->fail"
    assert change["checks"][0]["location"] == "steps[1].checks[1]"
    assert change["checks"][0]["detailB"].startswith('wrong arguments: get_invoices; customer_id is "CUS-3318"')


def test_details_show_both_answers_escaped(runs: Path) -> None:
    result = compare(runs, "1", "2", "--details")

    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert "══ run 1 alpha@none catena_tool_distrattori: score 1.00" in out
    assert "══ run 2 alpha@none catena_tool_distrattori: score 0.63" in out
    assert '→ get_invoices({"customer_id": "CUS-3318"})' in out
    assert "══ run 2 beta@none frase_8_parole: score 0.20" in out
    assert "\x1b" not in out
    assert "\x07" not in out
    assert "\\x1b]0;pwned" in out  # escaped...
    assert "\\x1b[2J[bold red]loud[/bold red]" in out  # ...and markup shown as written


def test_details_of_profiles_say_answers_are_not_kept(runs: Path) -> None:
    result = compare(runs, "alpha@none", "beta@none", "--details")

    assert "--details: answers are not kept in profiles, only in runs" in result.stdout
    assert "══" not in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("9", "1"), "tsuka: error: no run '9' in "),
        (("1", "gamma@none"), "tsuka: error: no profile 'gamma@none' in "),
        (("1", "gamma"), "tsuka: error: no run or profile 'gamma': a run is a number, 'last' or 'last~N'"),
    ],
)
def test_a_missing_side_is_one_line(runs: Path, args: tuple[str, str], message: str) -> None:
    result = compare(runs, *args)

    assert result.exit_code == BAD_INPUT
    (line,) = result.stderr.splitlines()
    assert line.startswith(message)


def test_a_missing_history_or_json_folder_is_one_line(tmp_path: Path, runs: Path) -> None:
    result = invoke("compare", "1", "2", "--profiles", tmp_path / "models_profile.json")
    assert result.exit_code == BAD_INPUT
    assert result.stderr.startswith("tsuka: error: no run history at ")
    (tmp_path / "out").symlink_to(tmp_path / "nowhere")
    result = compare(runs, "1", "2", "--json-file", tmp_path / "out" / "cmp.json")
    assert result.exit_code == BAD_INPUT
    assert "cannot create its folder" in result.stderr


def test_a_damaged_profile_is_one_line(tmp_path: Path) -> None:
    store = tmp_path / "models_profile.json"
    profile = {"model": "m", "tier": "large", "testsHash": "x", "testResults": [{"name": "a", "score": "high"}]}
    store.write_text(json.dumps({"profiles": {"m@none": profile}}), encoding="utf-8")

    result = invoke("compare", "m@none", "m@none", "--profiles", store)

    assert result.exit_code == BAD_INPUT
    (line,) = result.stderr.splitlines()
    assert line == (
        f"tsuka: error: {store}: profile m@none: testResults[0] needs a name, a category and a numeric score; "
        "it cannot be compared"
    )


def test_json_prints_the_comparison_on_stdout_and_the_text_on_stderr(runs: Path, tmp_path: Path) -> None:
    out = tmp_path / "cmp.json"
    for args in (("--json", "1", "2"), ("1", "2", "--json"), ("1", "--json", "2", "--json-file", out)):
        result = compare(runs, *args)
        assert result.exit_code == 0, result.stderr
        data = json.loads(result.stdout)
        assert (data["a"]["label"], data["b"]["label"]) == ("run 1", "run 2")
        assert "A: run 1 (suite default " in result.stderr
        assert "deprecated" not in result.stderr
    assert json.loads(out.read_text(encoding="utf-8")) == data


@pytest.mark.parametrize("form", [("--json", "{out}"), ("--json={out}",)])
def test_the_old_json_file_form_still_writes_the_file_with_a_warning(
    runs: Path, tmp_path: Path, form: tuple[str, ...]
) -> None:
    out = tmp_path / "cmp.json"
    result = compare(runs, "1", "2", *(word.format(out=out) for word in form))
    assert result.exit_code == 0, result.stderr
    assert result.stderr.splitlines() == [DEPRECATED_JSON_FILE]
    assert f"Wrote {out}" in result.stdout
    assert json.loads(out.read_text(encoding="utf-8"))["compareVersion"] == 1
