"""One sweep across the project file's endpoints: one history run, one report, clashing names, unset key variables."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import xml.etree.ElementTree as ET
from contextlib import closing
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from answerers import by_model, perfect, tool_shy
from history_helpers import invoke, rows, stored, with_figure_columns, without_tested_at
from loopback import LoopbackServer

from tsuka_core.record import LevelRecord
from tsuka_core.storage.history import SCHEMA_VERSION, connect
from tsuka_core.storage.history_query import StoredRun, list_runs, load_run

pytestmark = pytest.mark.usefixtures("fast_retries")


def write(folder: Path, text: str) -> Path:
    path = folder / "tsuka.toml"
    path.write_text(text, encoding="utf-8")
    return path


def two_endpoints(folder: Path, one: LoopbackServer, two: LoopbackServer, extra: str = "") -> Path:
    """A project file measuring ``one`` (every model) and ``two`` (beta and alpha) at effort none."""
    return write(
        folder,
        f"""efforts = ["none"]
profiles = "store.json"
history = true
{extra}
[[endpoints]]
name = "one"
base_url = "{one.base_url}"

[[endpoints]]
name = "two"
base_url = "{two.base_url}"
models = ["beta", "alpha"]
concurrency = 2
""",
    )


def clashing_servers() -> tuple[LoopbackServer, LoopbackServer]:
    """Two servers both serving ``alpha``: right on the first, without tool calls on the second (tier small)."""
    one = LoopbackServer(by_model({"alpha": perfect}), models=["alpha"])
    two = LoopbackServer(by_model({"beta": perfect, "alpha": tool_shy}), models=["beta", "alpha"])
    return one, two


def history(folder: Path) -> Path:
    return folder / ".tsuka" / "history.sqlite"


KEYS = ["beta@none", "one:alpha@none", "two:alpha@none"]


# --- one history run and one report ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of one sweep of two endpoints that both serve alpha, with its store, history, JUnit and JSON."""
    folder = tmp_path_factory.mktemp("swept")
    one, two = clashing_servers()
    with one, two:
        config = two_endpoints(folder, one, two, 'junit = "junit.xml"\njson_file = "result.json"\n')
        result = invoke("run", "--config", config)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "Recorded as run 1 in" in result.stdout
    return folder


def test_a_sweep_is_one_history_run_naming_each_levels_endpoint(swept: Path) -> None:
    db = history(swept)
    (run,) = rows(db, "SELECT * FROM runs")
    assert (run["kind"], run["status"], run["backend"]) == ("run", "ok", "openai")
    providers = stored(swept / "store.json")["profiles"]
    one_url = providers["one:alpha@none"]["provider"].removeprefix("one ")
    two_url = providers["beta@none"]["provider"].removeprefix("two ")
    assert run["provider"] == f"one {one_url}, two {two_url}"
    assert json.loads(run["models"]) == ["one:alpha", "beta", "two:alpha"]
    options = json.loads(run["options"])
    assert options["endpoints"]["two"]["concurrency"] == 2
    assert options["endpoints"]["two"]["models"] == ["beta", "two:alpha"]
    assert options["failedEndpoints"] == []

    levels = rows(db, "SELECT model, name, endpoint, backend, provider, stored FROM levels ORDER BY name")
    assert [tuple(r) for r in levels] == [
        ("beta", "beta", "two", "openai", two_url, 1),
        ("alpha", "one:alpha", "one", "openai", one_url, 1),
        ("alpha", "two:alpha", "two", "openai", two_url, 1),
    ]
    loaded = load_run(db, 1)
    assert [lv.key for lv in loaded.levels] == ["one:alpha@none", "beta@none", "two:alpha@none"]
    assert {lv.key: lv.tier for lv in loaded.levels} == {
        "one:alpha@none": "large",
        "beta@none": "large",
        "two:alpha@none": "small",
    }


def test_runs_show_and_report_read_the_sweep(swept: Path) -> None:
    db = history(swept)
    listed = invoke("runs", "--history-db", db, "--json")
    shown = invoke("show", "1", "two:alpha@none", "--history-db", db)
    transcript = invoke("show", "1", "one:alpha@none", "frase_8_parole", "--history-db", db)
    page = swept / "report.html"
    reported = invoke("report", "1", "-o", page, "--history-db", db)

    assert listed.exit_code == shown.exit_code == transcript.exit_code == reported.exit_code == 0, (
        listed.stderr + shown.stderr + transcript.stderr + reported.stderr
    )
    (run,) = json.loads(listed.stdout)
    assert sorted(level["key"] for level in run["levels"]) == KEYS
    profile = stored(swept / "store.json")["profiles"]["two:alpha@none"]
    two_url, sure = profile["provider"].removeprefix("two "), profile["tierConfidence"]
    assert f"two:alpha@none  tier small (confidence {sure:.2f})  recommended  endpoint two (openai at {two_url})" in (
        shown.stdout
    )
    assert "one:alpha@none frase_8_parole (instruction): score 1.00" in transcript.stdout
    html = page.read_text(encoding="utf-8")
    assert "one:alpha" in html
    assert "two:alpha" in html
    assert "Wrote " in reported.stdout
    assert "3 level(s)" in reported.stdout


def test_rescore_of_a_sweep_stores_each_level_under_its_key_and_provider(swept: Path, tmp_path: Path) -> None:
    folder = tmp_path / "copy"
    shutil.copytree(swept, folder)
    before = stored(folder / "store.json")["profiles"]

    result = invoke("rescore", "1", "--profiles", folder / "store.json")

    assert result.exit_code == 0, result.stdout + result.stderr
    assert "one:alpha@none  tier large" in result.stdout
    assert "two:alpha@none  tier small" in result.stdout
    after = stored(folder / "store.json")["profiles"]
    assert sorted(after) == KEYS
    assert {k: p["provider"] for k, p in after.items()} == {k: p["provider"] for k, p in before.items()}
    drop = {"testedAt", "rescoredFrom"}
    assert {k: {f: v for f, v in p.items() if f not in drop} for k, p in after.items()} == {
        k: {f: v for f, v in p.items() if f not in drop} for k, p in without_tested_at(before).items()
    }
    (rescore,) = [run for run, _ in list_runs(history(folder)) if run.kind == "rescore"]
    assert sorted(lv.key for lv in load_run(history(folder), rescore.id).levels) == KEYS
    assert {lv.endpoint for lv in load_run(history(folder), rescore.id).levels} == {"one", "two"}


def test_one_junit_and_one_json_file_cover_the_whole_sweep(swept: Path) -> None:
    suites = ET.parse(swept / "junit.xml").getroot().findall("testsuite")
    assert sorted(s.get("name") for s in suites) == KEYS
    data = json.loads((swept / "result.json").read_text(encoding="utf-8"))
    assert sorted(data["profiles"]) == KEYS
    assert sorted(f"{lv['model']}@{lv['reasoningEffort']}" for lv in data["levels"]) == KEYS
    assert data["recommendations"] == {"one:alpha": "none", "beta": "none", "two:alpha": "none"}


# --- clashing names in the summary and --min-tier --------------------------------------------------------------------


def test_recommendation_and_min_tier_use_the_stored_key_of_a_clashing_name(tmp_path: Path) -> None:
    one, two = clashing_servers()
    with one, two:
        result = invoke("run", "--config", two_endpoints(tmp_path, one, two), "--min-tier", "large")

    assert result.exit_code == 3, result.stdout + result.stderr
    assert "Recommendation: one:alpha at effort none (tier large)" in result.stdout
    assert "Recommendation: two:alpha at effort none (tier small)" in result.stdout
    assert "one:alpha@none: 7 test runs" in result.stderr
    assert "two:alpha@none: 7 test runs" in result.stderr
    assert "one:alpha@none 7/7 " in result.stderr
    assert "8/7" not in result.stderr
    below = [line for line in result.stderr.splitlines() if "below --min-tier" in line]
    assert below == ["tsuka: below --min-tier: two:alpha@none is small, below the minimum tier large"]


def test_min_tier_is_met_by_every_stored_key(tmp_path: Path) -> None:
    one = LoopbackServer(by_model({"alpha": perfect}), models=["alpha"])
    two = LoopbackServer(by_model({"beta": perfect, "alpha": perfect}), models=["beta", "alpha"])
    with one, two:
        result = invoke("run", "--config", two_endpoints(tmp_path, one, two), "--min-tier", "large")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "below --min-tier" not in result.stderr


# --- an unset key variable -------------------------------------------------------------------------------------------


def keyed_endpoints(folder: Path, up: LoopbackServer, hosted: LoopbackServer) -> Path:
    return write(
        folder,
        f"""efforts = ["none"]
profiles = "store.json"

[[endpoints]]
name = "up"
base_url = "{up.base_url}"

[[endpoints]]
name = "hosted"
base_url = "{hosted.base_url}"
api_key_env = "HOSTED_KEY"
""",
    )


def test_an_unset_key_variable_fails_only_its_endpoint(tmp_path: Path) -> None:
    with (
        LoopbackServer(by_model({"alpha": perfect}), models=["alpha"]) as up,
        LoopbackServer(by_model({"beta": perfect}), models=["beta"]) as hosted,
    ):
        result = invoke("run", "--config", keyed_endpoints(tmp_path, up, hosted), env={"HOSTED_KEY": None})

    assert result.exit_code == 1, result.stdout + result.stderr
    assert hosted.requests == []
    assert list(stored(tmp_path / "store.json")["profiles"]) == ["alpha@none"]
    said = "endpoint hosted: api_key_env names HOSTED_KEY, which is not set; set HOSTED_KEY to its API key"
    assert f"not measured: {said}" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr
    (run,) = rows(history(tmp_path), "SELECT status, options FROM runs")
    assert run["status"] == "failed"
    assert json.loads(run["options"])["failedEndpoints"] == [said]


def test_a_set_key_variable_is_sent_to_its_endpoint_only(tmp_path: Path) -> None:
    with (
        LoopbackServer(by_model({"alpha": perfect}), models=["alpha"]) as up,
        LoopbackServer(by_model({"beta": perfect}), models=["beta"]) as hosted,
    ):
        result = invoke("run", "--config", keyed_endpoints(tmp_path, up, hosted), env={"HOSTED_KEY": "k-123"})

    assert result.exit_code == 0, result.stdout + result.stderr
    assert sorted(stored(tmp_path / "store.json")["profiles"]) == ["alpha@none", "beta@none"]
    assert {r.headers.get("authorization") for r in hosted.requests} == {"Bearer k-123"}
    assert {r.headers.get("authorization") for r in up.requests} == {None}
    assert "k-123" not in history(tmp_path).read_bytes().decode("utf-8", errors="replace")


def test_no_endpoint_with_its_key_is_bad_input(tmp_path: Path) -> None:
    config = write(
        tmp_path,
        """[[endpoints]]
name = "hosted"
base_url = "http://127.0.0.1:9/v1"
api_key_env = "HOSTED_KEY"
""",
    )
    result = invoke("run", "--config", config, env={"HOSTED_KEY": None})
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        "tsuka: error: no endpoint can run: endpoint hosted: api_key_env names HOSTED_KEY, which is not set; "
        "set HOSTED_KEY to its API key"
    )


# --- a history of layout 2 -------------------------------------------------------------------------------------------


def as_layout_2(source: Path, target: Path) -> None:
    """Write ``target`` as tsuka wrote layout 2: ``source`` without the columns layouts 3 to 6 added, with the
    figure columns 6 dropped."""
    shutil.copyfile(source, target)
    with closing(sqlite3.connect(target)) as db:
        with_figure_columns(db)
        for column in ("name", "endpoint", "backend", "provider"):
            db.execute(f"ALTER TABLE levels DROP COLUMN {column}")
        for column in ("pid", "host", "process_start"):
            db.execute(f"ALTER TABLE runs DROP COLUMN {column}")
        db.execute("ALTER TABLE steps DROP COLUMN fault")
        db.execute("ALTER TABLE levels DROP COLUMN record")
        db.execute("PRAGMA user_version = 2")
        db.commit()


def without_records(run: StoredRun) -> StoredRun:
    """``run`` without its levels' written records, which a file of layout 2 reads from the level's columns."""
    return replace(run, levels=tuple(replace(level, record=LevelRecord()) for level in run.levels))


def test_a_layout_2_history_is_read_as_it_is_and_upgraded_for_a_sweep(swept: Path, tmp_path: Path) -> None:
    with LoopbackServer(by_model({"m1": perfect}), models=["m1"]) as server:
        single = invoke("run", "m1", "--base-url", server.base_url, "--profiles", tmp_path / "p.json", "-e", "none")
    assert single.exit_code == 0, single.stderr
    old = tmp_path / "old.sqlite"
    as_layout_2(history(tmp_path), old)
    original = load_run(history(tmp_path), 1)
    before = old.read_bytes()

    assert [lv.record.tier for lv in load_run(old, 1).levels] == [lv.record.tier for lv in original.levels]
    assert without_records(load_run(old, 1)) == without_records(original)
    assert invoke("show", "1", "m1@none", "--history-db", old).exit_code == 0
    assert old.read_bytes() == before, "reading upgraded the file"

    with closing(connect(old)):
        pass
    assert rows(old, "PRAGMA user_version")[0][0] == SCHEMA_VERSION == 6
    assert [tuple(r) for r in rows(old, "SELECT name, endpoint, backend, provider FROM levels")] == [
        (None, None, None, None)
    ]
    assert without_records(load_run(old, 1)) == without_records(original)

    one, two = clashing_servers()
    with one, two:
        config = two_endpoints(tmp_path, one, two)
        result = invoke("run", "--config", config, "--history-db", old)
    assert result.exit_code == 0, result.stderr
    assert sorted(lv.key for lv in load_run(old, 2).levels) == KEYS
    assert without_records(load_run(old, 1)) == without_records(original)


def test_the_history_never_holds_the_clash_as_one_level(swept: Path) -> None:
    counts: dict[str, Any] = {}
    for row in rows(history(swept), "SELECT name, effort, count(*) AS n FROM levels GROUP BY name, effort"):
        counts[f"{row['name']}@{row['effort']}"] = row["n"]
    assert counts == dict.fromkeys(KEYS, 1)


# --- two backends ----------------------------------------------------------------------------------------------------

OLLAMA_PLUGIN = Path(__file__).resolve().parents[1] / "plugins_example" / "tsuka-backend-ollama"


def tsuka_with_ollama(folder: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    """``tsuka ARGS`` in a fresh interpreter that finds the example Ollama backend through its entry point."""
    info = folder / "plugin" / "tsuka_backend_ollama-0.1.0.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tsuka-backend-ollama\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[tsuka]\nbackend_ollama = tsuka_backend_ollama.plugin\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TSUKA_", "OLLAMA_"))}
    env["PYTHONPATH"] = os.pathsep.join([str(info.parent), str(OLLAMA_PLUGIN), *sys.path])
    tsuka = Path(sys.executable).with_name("tsuka")
    command = [str(tsuka), *(str(a) for a in args)]
    return subprocess.run(command, capture_output=True, text=True, env=env, cwd=folder, timeout=120, check=False)


def test_endpoints_of_two_backends_are_one_run_and_rescored_each_with_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(OLLAMA_PLUGIN / "tests"))
    from ollama_loopback import OllamaReply, OllamaServer

    with (
        LoopbackServer(by_model({"alpha": perfect}), models=["alpha"]) as openai,
        OllamaServer(lambda body, n: OllamaReply.text("I would rather not say."), models=["m1"]) as ollama,
    ):
        write(
            tmp_path,
            f"""efforts = ["none"]
profiles = "store.json"

[[endpoints]]
name = "local"
base_url = "{openai.base_url}"

[[endpoints]]
name = "native"
backend = "ollama"
base_url = "{ollama.base_url}"
models = ["m1"]
""",
        )
        result = tsuka_with_ollama(tmp_path, "run")
    assert result.returncode == 0, result.stdout + result.stderr
    profiles = stored(tmp_path / "store.json")["profiles"]
    assert {k: p["backend"] for k, p in profiles.items()} == {"alpha@none": "openai", "m1@none": "ollama"}
    assert profiles["m1@none"]["provider"].startswith("native http://127.0.0.1:")
    (run,) = rows(history(tmp_path), "SELECT backend, provider FROM runs")
    assert run["backend"] == "openai, ollama"
    assert {lv.key: lv.backend for lv in load_run(history(tmp_path), 1).levels} == {
        "alpha@none": "openai",
        "m1@none": "ollama",
    }

    rescored = tsuka_with_ollama(tmp_path, "rescore", "1", "--profiles", "store.json")

    assert rescored.returncode == 0, rescored.stdout + rescored.stderr
    again = stored(tmp_path / "store.json")["profiles"]
    assert {k: (p["backend"], p["provider"], p["tier"]) for k, p in again.items()} == {
        k: (p["backend"], p["provider"], p["tier"]) for k, p in profiles.items()
    }


def test_each_endpoints_level_is_the_same_record_in_the_store_and_the_history(swept: Path) -> None:
    profiles = stored(swept / "store.json")["profiles"]
    recorded = {lv.key: lv.record.stored() for lv in load_run(history(swept), 1).levels}
    assert set(recorded) == set(profiles)
    for key, profile in profiles.items():
        assert profile["provider"].split()[0] in ("one", "two")
        assert {k: v for k, v in profile.items() if k != "testedAt"} == {
            k: v for k, v in recorded[key].items() if k != "testedAt"
        }
