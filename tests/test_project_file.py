"""The project file: tsuka.toml read by tsuka run, checked at once, merged under the flags, and one endpoint sweep."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import sqlite3
import threading
from collections import Counter
from contextlib import closing
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from answerers import by_model, perfect, tool_shy
from click.testing import CliRunner, Result
from loopback import LoopbackServer

from tsuka_core.cli.main import cli

pytestmark = pytest.mark.usefixtures("fast_retries")

CLEAN_ENV: dict[str, str | None] = {
    "OPENAI_BASE_URL": None,
    "OPENAI_API_KEY": None,
    "TSUKA_PROFILES": None,
    "TSUKA_LOAD_PLUGINS": None,
}


def invoke(*args: str | os.PathLike[str], env: dict[str, str | None] | None = None) -> Result:
    runner = CliRunner(env={**CLEAN_ENV, **(env or {})})
    return runner.invoke(cli, [str(a) for a in args], catch_exceptions=False, prog_name="tsuka")


def write(folder: Path, text: str) -> Path:
    path = folder / "tsuka.toml"
    path.write_text(text, encoding="utf-8")
    return path


def stored(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def free_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_two_endpoints_are_measured_in_one_run(tmp_path: Path) -> None:
    with (
        LoopbackServer(by_model({"alpha": perfect}), models=["alpha"]) as one,
        LoopbackServer(by_model({"beta": tool_shy, "alpha": tool_shy}), models=["beta", "alpha"]) as two,
    ):
        config = write(
            tmp_path,
            f"""efforts = ["none"]
profiles = "store.json"
history = false

[[endpoints]]
name = "one"
base_url = "{one.base_url}"
models = "all"

[[endpoints]]
name = "two"
base_url = "{two.base_url}"
models = ["beta", "alpha"]
concurrency = 2
""",
        )
        result = invoke("run", "--config", config)

    assert result.exit_code == 0, result.stderr
    data = stored(tmp_path / "store.json")
    assert sorted(data["profiles"]) == ["beta@none", "one:alpha@none", "two:alpha@none"]
    assert data["profiles"]["one:alpha@none"]["tier"] == "large"
    assert data["profiles"]["two:alpha@none"]["tier"] == "small"
    assert data["profiles"]["beta@none"]["provider"] == f"two {two.base_url}"
    assert data["profiles"]["one:alpha@none"]["provider"] == f"one {one.base_url}"
    assert {b["model"] for b in one.bodies} == {"alpha"}
    assert Counter(b["model"] for b in two.bodies).keys() == {"alpha", "beta"}
    assert "stored as NAME:model" in result.output


def test_flags_win_over_the_file_and_the_file_over_defaults(tmp_path: Path) -> None:
    with LoopbackServer(by_model({"alpha": perfect}), models=["alpha"]) as server:
        config = write(
            tmp_path,
            f"""efforts = ["none", "low"]
profiles = "from-file.json"
history = false

[[endpoints]]
name = "local"
base_url = "{server.base_url}"
""",
        )
        result = invoke("run", "--config", config, "-e", "medium", env={"TSUKA_PROFILES": str(tmp_path / "env.json")})
    assert result.exit_code == 0, result.stderr
    assert list(stored(tmp_path / "from-file.json")["profiles"]) == ["alpha@medium"]
    assert not (tmp_path / "env.json").exists()
    assert {b["reasoning_effort"] for b in server.bodies} == {"medium"}


def test_a_key_literal_is_refused(tmp_path: Path) -> None:
    config = write(
        tmp_path,
        """[[endpoints]]
name = "hosted"
base_url = "https://example.invalid/v1"
api_key = "abc"
options = { header = "sk-live-0123456789" }
""",
    )
    result = invoke("run", "--config", config)
    assert result.exit_code == 2
    assert f"{config}:4: endpoints.0.api_key: secrets never live in the project file" in result.stderr
    assert f"{config}:5: endpoints.0.options.header: this looks like an API key" in result.stderr
    assert "sk-live" not in result.output
    assert "Traceback" not in result.stderr


def test_a_broken_file_lists_every_problem_with_its_location(tmp_path: Path) -> None:
    config = write(
        tmp_path,
        """efforts = ["none", "huge"]
concurency = 4
timeout = -1

[[endpoints]]
name = "a"
base_url = "http://127.0.0.1:1/v1"

[[endpoints]]
name = "b"
modles = ["x"]
token = "abc"
""",
    )
    result = invoke("run", "--config", config)
    assert result.exit_code == 2
    err = result.stderr
    assert "6 problem(s) in the project file" in err
    assert f"{config}:1: efforts.1: " in err
    assert f"{config}:2: concurency: unknown key; did you mean 'concurrency'?" in err
    assert f"{config}:3: timeout: " in err
    assert f"{config}:11: endpoints.1.modles: unknown key; did you mean 'models'?" in err
    assert f"{config}:12: endpoints.1.token: secrets never live in the project file" in err
    lines = [int(line.split(":")[1]) for line in err.splitlines() if line.startswith(f"{config}:")]
    assert lines == [1, 2, 3, 11, 12, 12]  # in file order


def test_pyproject_tool_table_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.tsuka]\nrepeats = 3\nmax_tokens = 64\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = invoke("run", "--show-config")
    assert result.exit_code == 0, result.stderr
    shown = json.loads(result.stdout)
    assert shown["file"] == str(tmp_path / "pyproject.toml")
    assert (shown["run"]["repeats"], shown["run"]["max_tokens"]) == (3, 64)


def test_show_config_masks_secrets_and_runs_nothing(tmp_path: Path) -> None:
    with LoopbackServer(by_model({"alpha": perfect}), models=["alpha"]) as server:
        config = write(
            tmp_path,
            f"""concurrency = 3

[[endpoints]]
name = "hosted"
base_url = "{server.base_url}?deployment=hidden-value"
api_key_env = "HOSTED_KEY"
options = {{ api_token_name = "x" }}
""",
        )
        result = invoke("run", "--config", config, "--show-config", "-j", "5", env={"HOSTED_KEY": "very-secret-value"})
    assert result.exit_code == 0, result.stderr
    assert server.requests == []
    shown = json.loads(result.stdout)
    assert shown["run"]["concurrency"] == 5
    (endpoint,) = shown["endpoints"]
    assert endpoint["api_key"] == "***"
    assert endpoint["api_key_env"] == "HOSTED_KEY"
    assert "hidden-value" not in result.stdout
    assert "very-secret-value" not in result.stdout


def test_one_endpoint_down_leaves_the_others_stored_and_exits_1(tmp_path: Path) -> None:
    with LoopbackServer(by_model({"alpha": perfect}), models=["alpha"]) as server:
        config = write(
            tmp_path,
            f"""efforts = ["none"]
profiles = "store.json"
retries = 0
timeout = 5

[[endpoints]]
name = "up"
base_url = "{server.base_url}"

[[endpoints]]
name = "down"
base_url = "http://127.0.0.1:{free_port()}/v1"
""",
        )
        result = invoke("run", "--config", config)
    assert result.exit_code == 1, result.stderr
    assert list(stored(tmp_path / "store.json")["profiles"]) == ["alpha@none"]
    assert "endpoint down:" in result.output
    assert "Traceback" not in result.output


def test_schema_config_describes_the_file() -> None:
    result = invoke("schema", "--config")
    assert result.exit_code == 0
    schema = json.loads(result.stdout)
    assert "endpoints" in schema["properties"]
    assert "api_key_env" in schema["$defs"]["Endpoint"]["properties"]


# --- tsuka init -----------------------------------------------------------------------------------------------------


class _OllamaVersion(BaseHTTPRequestHandler):
    """Answers GET /api/version and /v1/models as Ollama does; 404 otherwise."""

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        routes = {"/api/version": {"version": "0.9.0"}, "/v1/models": {"data": [{"id": "qwen3:8b"}]}}
        payload = routes.get(self.path)
        body = json.dumps(payload or {"error": "not found"}).encode()
        self.send_response(200 if payload else 404)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_init_writes_a_starter_file_that_loads_and_refuses_to_overwrite(tmp_path: Path) -> None:
    path = tmp_path / "tsuka.toml"
    assert invoke("init", "--config", path).exit_code == 0
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# tsuka project file")
    assert invoke("run", "--config", path, "--show-config").exit_code == 0
    again = invoke("init", "--config", path)
    assert again.exit_code == 2
    assert "exists; not overwritten" in again.stderr
    assert path.read_text(encoding="utf-8") == text


def test_init_probe_writes_an_endpoint_for_each_kind_of_server(tmp_path: Path) -> None:
    from imitations import LlamaCppImitation

    ollama = ThreadingHTTPServer(("127.0.0.1", 0), _OllamaVersion)
    thread = threading.Thread(target=ollama.serve_forever, daemon=True)
    thread.start()
    try:
        with (
            LoopbackServer(models=["alpha", "beta"]) as plain,
            LlamaCppImitation(perfect, models=["smollm2"]) as llama,
        ):
            servers = {
                "plain": (plain.base_url, "OpenAI-compatible", ["alpha", "beta"]),
                "llama": (llama.base_url.removesuffix("/v1"), "llama.cpp", ["smollm2"]),
                "ollama": (f"http://127.0.0.1:{ollama.server_address[1]}", "Ollama", ["qwen3:8b"]),
            }
            for name, (url, kind, models) in servers.items():
                path = tmp_path / f"{name}.toml"
                result = invoke("init", "--probe", url, "--name", name, "--config", path)
                assert result.exit_code == 0, result.stderr
                text = path.read_text(encoding="utf-8")
                assert f"# {kind} server" in text
                shown = json.loads(invoke("run", "--config", path, "--show-config").stdout)
                (endpoint,) = shown["endpoints"]
                assert endpoint["name"] == name
                assert endpoint["models"] == models
                assert endpoint["base_url"] == url.removesuffix("/v1") + "/v1"
    finally:
        ollama.shutdown()
        ollama.server_close()
        thread.join(timeout=10)


def test_the_documented_example_is_a_valid_project_file(tmp_path: Path) -> None:
    from tsuka_core.run.projectfile import load_project

    page = (Path(__file__).resolve().parents[1] / "docs" / "project-file.md").read_text(encoding="utf-8")
    *others, example = re.findall(r"```toml\n(.*?)```", page, flags=re.DOTALL)
    for other in others:  # the smaller examples (replicas) are valid files too
        assert load_project(write(tmp_path, other)) is not None
    project = load_project(write(tmp_path, example))
    assert project is not None
    endpoints = {e.name: e for e in project.data.endpoints}
    assert list(endpoints) == ["llama", "ollama", "vllm", "hosted"]
    assert endpoints["hosted"].api_key_env == "HOSTED_API_KEY"


def test_a_stop_signal_during_an_endpoint_sweep_keeps_what_completed(tmp_path: Path) -> None:
    from faultserver import Fault, FaultPlan, FaultServer
    from stopping import signalled_run, stored_level

    store = tmp_path / "store.json"
    plan = FaultPlan.always(Fault.STALL)
    with (
        LoopbackServer(by_model({"alpha": perfect}), models=["alpha"]) as up,
        FaultServer(perfect, plan, models=["beta"], stall_seconds=60) as stalled,
    ):
        config = write(
            tmp_path,
            f"""efforts = ["none"]
profiles = "store.json"

[[endpoints]]
name = "up"
base_url = "{up.base_url}"

[[endpoints]]
name = "stalled"
base_url = "{stalled.base_url}"
""",
        )
        done, _ = signalled_run(
            ["run", "--config", str(config)], stored_level(store, "alpha@none"), signal.SIGTERM, settle=0
        )
    assert done.returncode == 143, done.stderr
    assert "Traceback" not in done.stderr
    assert list(stored(store)["profiles"]) == ["alpha@none"]
    assert "interrupted by SIGTERM" in done.stderr
    with closing(sqlite3.connect(tmp_path / ".tsuka" / "history.sqlite")) as db:
        assert db.execute("SELECT id, status FROM runs").fetchall() == [(1, "interrupted")]
        levels = db.execute("SELECT name, endpoint, stored FROM levels").fetchall()
    assert set(levels) <= {("alpha", "up", 1)}  # the stop may come between storing alpha and recording it


def test_a_problem_in_pyproject_is_located_in_its_tool_table(tmp_path: Path) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text(
        '[project]\nname = "x"\n\n[tool.tsuka]\nrepeats = 0\n\n'
        '[[tool.tsuka.endpoints]]\nname = "a"\nbakend = "openai"\n',
        encoding="utf-8",
    )
    result = invoke("run", "--config", path)
    assert result.exit_code == 2
    assert f"{path}:5: repeats: " in result.stderr
    assert f"{path}:9: endpoints.0.bakend: unknown key; did you mean 'backend'?" in result.stderr
