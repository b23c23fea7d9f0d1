"""pass^k with ``--repeats``: the estimator, and a server that alternates right and wrong answers, end to end."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from answerers import DEFAULT_TESTS, perfect, which_test
from click.testing import CliRunner, Result
from loopback import LoopbackServer, Reply

from tsuka_core.cli.main import cli
from tsuka_core.engine.reliability import Tries, pass_hat_k, reliability, stored_reliability

pytestmark = pytest.mark.usefixtures("fast_retries")

CLEAN_ENV: dict[str, str | None] = {"OPENAI_BASE_URL": None, "OPENAI_API_KEY": None, "TSUKA_PROFILES": None}


def invoke(*args: str | os.PathLike[str]) -> Result:
    return CliRunner(env=CLEAN_ENV).invoke(cli, [str(a) for a in args], catch_exceptions=False, prog_name="tsuka")


def alternating() -> Any:
    """Each run of a test starts right, wrong, right, wrong... by arrival; later steps of a run are answered right.

    A wrong start is a stray tool call where the test offers tools, else "no": either fails every test.

    So every test passes exactly half of its runs, however the concurrent runs interleave.
    """
    started: Counter[str] = Counter()

    def answer(body: dict[str, Any], n: int) -> Reply:
        name, step = which_test(body)
        if any(m["role"] == "assistant" for m in body["messages"]) or step > 0:
            return perfect(body, n)  # a later step: its run started right
        key = f"{name}@{body.get('reasoning_effort')}"
        started[key] += 1
        if started[key] % 2 == 1:
            return perfect(body, n)
        return Reply.tool_call("send_email", {"to": "x"}) if body.get("tools") else Reply.text("no")

    return answer


def test_the_estimator_is_tau_benchs() -> None:
    assert pass_hat_k(2, 4, 1) == 0.5
    assert pass_hat_k(2, 4, 2) == pytest.approx(1 / 6)
    assert pass_hat_k(2, 4, 3) == 0
    assert pass_hat_k(4, 4, 4) == 1
    with pytest.raises(ValueError, match="k=5"):
        pass_hat_k(2, 4, 5)


def test_a_category_weighs_its_tests_and_flaky_tests_are_named() -> None:
    found = reliability(
        [
            Tries("steady", "json", 3.0, (1, 1, 1)),
            Tries("shaky", "json", 1.0, (1, 0.5, 1)),
            Tries("never", "instruction", 1.0, (0.9, 0.9, 0.9)),
        ]
    )

    assert found is not None
    assert found.runs == 3
    assert found.by_category["json"] == pytest.approx((3 / 4 + 2 / 3 / 4, 3 / 4 + 1 / 3 / 4, 3 / 4))
    assert found.by_category["instruction"] == (0, 0, 0)  # a score under 1 never passes
    assert found.flaky == ("shaky",)
    assert reliability([Tries("once", "json", 1.0, (1,))]) is None


@pytest.mark.parametrize(
    "value",
    [
        {"passHatK": {"json": [0.5]}},
        {"passHatK": {"json": [0.5, "x"]}},
        {"passHatK": {"json": [2, 1]}},
        {"passHatK": 3},
    ],
)
def test_a_malformed_stored_table_reads_as_none(value: object) -> None:
    assert stored_reliability(value) is None


def test_an_alternating_server_with_four_repeats_gives_a_half_a_sixth_and_zero(tmp_path: Path) -> None:
    store, history = tmp_path / "p.json", tmp_path / "h.sqlite"
    with LoopbackServer(alternating(), models=["m1"]) as server:
        result = invoke(
            "run", "m1", "--base-url", server.base_url, "--profiles", store, "--history-db", history,
            "--repeats", "4", "--cache",
        )  # fmt: skip

    assert result.exit_code == 0, result.output
    profile = json.loads(store.read_text(encoding="utf-8"))["profiles"]["m1@none"]
    table = profile["passHatK"]
    assert set(table) == {"instruction", "json", "toolCalling"}
    for values in table.values():
        assert len(values) == 4
        assert values[0] == 0.5
        assert values[1] == pytest.approx(1 / 6)
        assert values[3] == 0
    assert sorted(profile["flakyTests"]) == sorted(DEFAULT_TESTS)
    assert "reliability over 4 runs: instruction pass^1 50% pass^4 0%" in result.output
    assert "flaky (passed some runs, failed others): frase_8_parole" in result.output

    shown = invoke("show", "last", "--history-db", history, "--profiles", store)
    assert "reliability over 4 runs: instruction pass^1 50% pass^4 0%" in shown.output
    listed = invoke("profiles", "--profiles", store)
    assert "pass^1 50% pass^4 0%" in listed.output
    page = tmp_path / "report.html"
    made = invoke("report", "last", "--history-db", history, "--profiles", store, "-o", page)
    assert made.exit_code == 0, made.output
    html = page.read_text(encoding="utf-8")
    assert "Reliability over repeats" in html
    row = html[html.index("Reliability over repeats") :].split("</tr>")[1]
    assert row.count(">50%<") == 3
    assert row.count(">0%<") == 3


def test_a_single_run_has_no_pass_hat_k(tmp_path: Path) -> None:
    store = tmp_path / "p.json"
    with LoopbackServer(perfect, models=["m1"]) as server:
        result = invoke("run", "m1", "--base-url", server.base_url, "--profiles", store, "--no-history")

    assert result.exit_code == 0, result.output
    profile = json.loads(store.read_text(encoding="utf-8"))["profiles"]["m1@none"]
    assert "passHatK" not in profile
    assert "reliability over" not in result.output


def test_compare_shows_how_pass_hat_k_changed(tmp_path: Path) -> None:
    store, history = tmp_path / "p.json", tmp_path / "h.sqlite"
    for answerer in (alternating(), perfect):
        with LoopbackServer(answerer, models=["m1"]) as server:
            ran = invoke(
                "run", "m1", "--base-url", server.base_url, "--profiles", store, "--history-db", history,
                "--repeats", "4", "-e", "none",
            )  # fmt: skip
        assert ran.exit_code == 0, ran.output

    shown = invoke("compare", "1", "2", "--history-db", history, "--profiles", store)
    assert "toolCalling pass^1 0.50 → 1.00 (+0.50), pass^4 0.00 → 1.00 (+1.00)" in shown.output
    written = tmp_path / "compare.json"
    compared = invoke("compare", "1", "m1@none", "--history-db", history, "--profiles", store, "--json", written)
    assert compared.exit_code == 0, compared.output
    data = json.loads(written.read_text(encoding="utf-8"))
    (level,) = data["levels"]
    by_category = {entry["category"]: entry for entry in level["passHatK"]}
    assert by_category["json"] == {
        "category": "json", "k": 4, "passHat1A": 0.5, "passHat1B": 1, "passHatKA": 0, "passHatKB": 1,
    }  # fmt: skip
