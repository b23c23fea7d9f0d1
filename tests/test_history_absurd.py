"""Numbers no run could have written, read back from the history: one "damaged" line in every command, never a crash."""

from __future__ import annotations

import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from answerers import perfect
from click.testing import Result
from history_helpers import invoke
from loopback import LoopbackServer

pytestmark = pytest.mark.usefixtures("fast_retries")


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A history holding two runs of m1 at effort none."""
    folder = tmp_path_factory.mktemp("absurd")
    with LoopbackServer(perfect) as server:
        for _ in range(2):
            result = invoke("run", "m1", "--base-url", server.base_url, "--profiles", folder / "p.json", "-e", "none",
                            "--history-db", folder / "history.sqlite")  # fmt: skip
            assert result.exit_code == 0, result.stderr
    return folder / "history.sqlite"


def one_line(result: Result, status: int, *needles: str) -> None:
    assert result.exit_code == status, result.stderr
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("tsuka: error:")]
    assert len(lines) == 1, result.stderr
    assert all(needle in lines[0] for needle in needles), lines[0]


ABSURD = {
    "score 1e308": "UPDATE tests SET score = 1e308",
    "score NaN": "UPDATE tests SET score = 'NaN'",
    "score above 1": "UPDATE tests SET score = 1.5",
    "tokens/s 1e308": "UPDATE levels SET tokens_per_second = 1e308",
    "tokens/s NaN": "UPDATE levels SET tokens_per_second = 'NaN'",
    "category score 1e308": "UPDATE levels SET scores = '{\"instruction\": 1e308}'",
    "category score NaN": "UPDATE levels SET scores = '{\"instruction\": NaN}'",
    "average tokens 1e308": "UPDATE levels SET avg_completion_tokens = 1e308",
    "test weight 1e308": "UPDATE tests SET weight = 1e308",
    "check weight NaN": "UPDATE checks SET weight = 'NaN'",
    "repeats 1e18": "UPDATE levels SET repeats = 1000000000000000000",
    "request time 1e308": "UPDATE steps SET response = json_set(response, '$.duration', 1e308)",
    "first token time negative": "UPDATE steps SET response = json_set(response, '$.firstTokenMs', -1e308)",
}


@pytest.mark.parametrize("tampering", list(ABSURD.values()), ids=list(ABSURD))
def test_an_absurd_stored_number_is_one_damaged_line_everywhere(tmp_path: Path, two_runs: Path, tampering: str) -> None:
    copy = tmp_path / "history.sqlite"
    shutil.copyfile(two_runs, copy)
    with closing(sqlite3.connect(copy)) as db:
        db.execute(tampering)
        db.commit()
    for args in (
        ("show", "1"),
        ("report", "-o", tmp_path / "report.html"),
        ("compare", "1", "last"),
        ("report", "--compare", "1", "last", "-o", tmp_path / "compare.html"),
        ("rescore", "1", "--profiles", tmp_path / "p.json"),
    ):
        one_line(invoke(*args, "--history-db", copy), 2, str(copy), "is damaged")


@pytest.mark.parametrize("ref", ["9223372036854775808", "9223372036854775807", "1" * 40, "\u00b2", "\u0661"])
def test_a_run_number_past_what_sqlite_holds_names_no_run(two_runs: Path, ref: str) -> None:
    for command in ("show", "rescore"):
        one_line(invoke(command, ref, "--history-db", two_runs), 2, "no run", "'tsuka runs' lists them")
    one_line(invoke("compare", ref, "1", "--history-db", two_runs), 2)
