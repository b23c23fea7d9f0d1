"""A server refusing the key (401, 403) is one line saying where tsuka looked for it: unset, refused, api_key_env."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from history_helpers import invoke
from loopback import LoopbackServer, Reply

from tsuka_core.backends.apikey import KeySource

pytestmark = pytest.mark.usefixtures("fast_retries")


def refused(status: int) -> Any:
    return lambda body, n: Reply.error(status, "Invalid API Key")


def run_refused(tmp_path: Path, status: int, env: dict[str, str | None], *config: str | Path) -> str:
    """The one line saying why alpha was refused, after a run against a server refusing every request."""
    with LoopbackServer(refused(status), models=["alpha"]) as server:
        where = ("--config", *config) if config else ("alpha", "--base-url", server.base_url)
        if config:
            Path(config[0]).write_text(Path(config[0]).read_text(encoding="utf-8").replace("URL", server.base_url))
        result = invoke("run", *where, "--profiles", tmp_path / "p.json", "-e", "none", env=env)
    assert result.exit_code == 1, result.stdout + result.stderr
    said = " ".join((result.stdout + result.stderr).split())  # rich wraps long lines
    assert said.count(f"HTTP {status}: Invalid API Key (") == 1, said
    assert "check the API key" not in said  # the engine's generic hint gave way to the backend's
    return said


def test_no_key_set_says_which_variable_and_names_a_look_alike(tmp_path: Path) -> None:
    said = run_refused(tmp_path, 401, {"OPENAI_KEY": "sk-1234567890", "OPENAI_API_KEY": None})
    assert (
        "HTTP 401: Invalid API Key (no API key was sent: OPENAI_API_KEY is not set (OPENAI_KEY is set, but tsuka "
        "reads OPENAI_API_KEY); set OPENAI_API_KEY, or name another variable in the project file's api_key_env)"
    ) in said
    assert "sk-1234567890" not in said


def test_a_set_key_that_is_refused_is_said_so_without_showing_it(tmp_path: Path) -> None:
    said = run_refused(tmp_path, 401, {"OPENAI_API_KEY": "sk-wrong-0987654321"})
    assert "HTTP 401: Invalid API Key (the key in OPENAI_API_KEY was sent and refused: check its value)" in said
    assert "sk-wrong-0987654321" not in said


def test_a_403_says_the_key_was_refused_access(tmp_path: Path) -> None:
    said = run_refused(tmp_path, 403, {"OPENAI_API_KEY": "sk-wrong-0987654321"})
    assert "(the key in OPENAI_API_KEY was sent and refused access: check its access to this model)" in said


def test_the_project_files_key_variable_is_named(tmp_path: Path) -> None:
    config = tmp_path / "tsuka.toml"
    config.write_text('[[endpoints]]\nname = "hosted"\nbase_url = "URL"\napi_key_env = "GATEWAY_KEY"\n')
    said = run_refused(tmp_path, 401, {"GATEWAY_KEY": "gw-123456789"}, config)
    assert "(the key in GATEWAY_KEY (api_key_env of endpoint hosted) was sent and refused: check its value)" in said


def test_look_alikes_are_names_only_and_empty_ones_are_skipped() -> None:
    source = KeySource.find(None, None, {})
    hint = source.refusal_hint(401, {"AZURE_OPENAI_KEY": "x", "OPENAI_TOKEN_KEY": " ", "HOME": "/root"})
    assert "(AZURE_OPENAI_KEY is set, but tsuka reads OPENAI_API_KEY)" in hint
    assert "OPENAI_TOKEN_KEY" not in hint
