"""A hostile project file: every secret in it refused, nesting too deep for tomllib one line; never a traceback."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tsuka_core.cli.main import cli

SECRET = "0123456789abcdefXYZ"
CLEAN_ENV: dict[str, str | None] = {"OPENAI_BASE_URL": None, "OPENAI_API_KEY": None, "TSUKA_PROFILES": None}


def invoke(*args: str | os.PathLike[str]) -> Result:
    runner = CliRunner(env=CLEAN_ENV)
    return runner.invoke(cli, [str(a) for a in args], catch_exceptions=False, prog_name="tsuka")


def endpoint(line: str, base_url: str = "https://api.example.com/v1") -> str:
    return f'[[endpoints]]\nname = "hosted"\nbase_url = "{base_url}"\n{line}\n'


REFUSED = {
    "dashed key": (endpoint(f'options = {{ "api-key" = "{SECRET}" }}'), "endpoints.0.options.api-key", 4),
    "upper key": (endpoint(f'options = {{ API_KEY = "{SECRET}" }}'), "endpoints.0.options.API_KEY", 4),
    "camel key": (endpoint(f'options = {{ apiKey = "{SECRET}" }}'), "endpoints.0.options.apiKey", 4),
    "x-api-key header": (endpoint(f'options = {{ "x-api-key" = "{SECRET}" }}'), "endpoints.0.options.x-api-key", 4),
    "authorization": (
        endpoint(f'options = {{ Authorization = "Bearer {SECRET}" }}'),
        "endpoints.0.options.Authorization",
        4,
    ),
    "bearer value": (endpoint(f'options = {{ header = "Bearer {SECRET}" }}'), "endpoints.0.options.header", 4),
    "url userinfo": (endpoint("", f"https://user:{SECRET}@api.example.com/v1"), "endpoints.0.base_url", 3),
    "url api_key query": (endpoint("", f"https://api.example.com/v1?api_key={SECRET}"), "endpoints.0.base_url", 3),
    "url key query": (endpoint("", f"https://api.example.com/v1?v=2&key={SECRET}"), "endpoints.0.base_url", 3),
    "url token query": (endpoint("", f"https://api.example.com/v1?access-token={SECRET}"), "endpoints.0.base_url", 3),
    "key in url path": (endpoint("", f"https://api.example.com/sk-{SECRET}/v1"), "endpoints.0.base_url", 3),
}
PREFIXES = ("sk-", "gsk_", "AIza", "github_pat_", "glpat-", "ghp_", "xoxb-", "xoxp-", "hf_", "AKIA")


@pytest.mark.parametrize(("text", "where", "line"), list(REFUSED.values()), ids=list(REFUSED))
def test_a_secret_is_refused_by_key_name_header_or_url(tmp_path: Path, text: str, where: str, line: int) -> None:
    config = tmp_path / "tsuka.toml"
    config.write_text(text, encoding="utf-8")
    result = invoke("run", "--config", config)
    assert result.exit_code == 2
    (problem,) = [row for row in result.stderr.splitlines() if row.startswith(str(config))]
    assert problem.startswith(f"{config}:{line}: {where}: ")
    assert "api_key_env" in problem
    assert SECRET not in result.output
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("prefix", PREFIXES)
def test_a_value_with_a_known_key_prefix_is_refused(tmp_path: Path, prefix: str) -> None:
    config = tmp_path / "tsuka.toml"
    config.write_text(endpoint(f'options = {{ extra = "{prefix}{SECRET}" }}'), encoding="utf-8")
    result = invoke("run", "--config", config)
    assert result.exit_code == 2
    assert f"{config}:4: endpoints.0.options.extra: this looks like an API key" in result.stderr
    assert SECRET not in result.output


def test_ordinary_settings_are_not_taken_for_secrets(tmp_path: Path) -> None:
    config = tmp_path / "tsuka.toml"
    text = endpoint(
        'api_key_env = "HOSTED_API_KEY"\noptions = { max_tokens = 5, keep_alive = "5m", model_kind = "sketch" }',
        "https://api.example.com/openai/v1?api-version=2024-06-01",
    )
    config.write_text("max_tokens = 64\n" + text, encoding="utf-8")
    result = invoke("run", "--config", config, "--show-config")
    assert result.exit_code == 0, result.stderr
    (shown,) = json.loads(result.stdout)["endpoints"]
    assert shown["options"]["keep_alive"] == "5m"


DEEP = {
    "arrays in [project]": ("pyproject.toml", '[project]\nname = "x"\nkeywords = ' + "[" * 500 + "]" * 500 + "\n"),
    "table header": ("tsuka.toml", "[" + ".".join(["a"] * 1000) + "]\nx = 1\n"),
    "arrays in tsuka": ("tsuka.toml", "efforts = " + "[" * 200 + "]" * 200 + "\n"),
    "tool.tsuka header": ("pyproject.toml", "[tool.tsuka." + ".".join(["a"] * 1000) + "]\nx = 1\n"),
}


@pytest.mark.parametrize(("name", "text"), list(DEEP.values()), ids=list(DEEP))
def test_a_file_nested_too_deeply_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, text: str
) -> None:
    (tmp_path / name).write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = invoke("run", "--show-config")
    assert result.exit_code == 2
    assert "Traceback" not in result.stderr
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"tsuka: error: {tmp_path / name}: ")
    assert "nested" in line
