"""A sweep names what failed as the history does, names the endpoint's key variable, and checks base URLs early."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from answerers import by_model, failing, perfect
from history_helpers import invoke, rows
from loopback import LoopbackServer

pytestmark = pytest.mark.usefixtures("fast_retries")


def write(folder: Path, text: str) -> Path:
    path = folder / "tsuka.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_failures_name_the_key_the_history_stores(tmp_path: Path) -> None:
    """Two endpoints serve m1; one answers every request with an error: its failure is ``hang:m1@none``."""
    with (
        LoopbackServer(by_model({"m1": perfect}), models=["m1"]) as good,
        LoopbackServer(failing(500), models=["m1"]) as bad,
    ):
        config = write(
            tmp_path,
            f"""efforts = ["none"]
profiles = "store.json"
history = true
retries = 0
json_file = "result.json"

[[endpoints]]
name = "good"
base_url = "{good.base_url}"

[[endpoints]]
name = "hang"
base_url = "{bad.base_url}"
""",
        )
        result = invoke("run", "--config", config)
    assert result.exit_code == 1, result.stdout + result.stderr
    (level,) = rows(tmp_path / ".tsuka" / "history.sqlite", "SELECT name, effort FROM levels WHERE stored = 0")
    assert f"{level['name']}@{level['effort']}" == "hang:m1@none"
    failed = json.loads((tmp_path / "result.json").read_text(encoding="utf-8"))["failed"]
    assert [line.split(" not stored:")[0] for line in failed] == ["hang:m1@none"]
    said = " ".join(result.stdout.split())
    assert "hang:m1@none not stored:" in said
    assert " m1@none not stored" not in said


def test_a_bad_key_names_the_endpoints_variable(tmp_path: Path) -> None:
    with LoopbackServer(by_model({"m1": perfect}), models=["m1"]) as server:
        config = write(
            tmp_path,
            f"""[[endpoints]]
name = "hosted"
base_url = "{server.base_url}"
api_key_env = "HOSTED_KEY"
""",
        )
        result = invoke("run", "--config", config, "-e", "none", env={"HOSTED_KEY": "k\u00e9y-with-accent"})
    assert result.exit_code != 0
    said = " ".join((result.stdout + result.stderr).split())
    assert "the API key (HOSTED_KEY (api_key_env of endpoint hosted)) holds a non-ASCII character at position 2" in said
    assert "OPENAI_API_KEY" not in said
    assert "k\u00e9y" not in said
    assert server.requests == []


@pytest.mark.parametrize(
    "url",
    ["localhost:8080/v1", "http://127.0.0.1:99999/v1", "http:///v1", "ftp://127.0.0.1/v1", "http://exa mple.com/v1"],
)
def test_a_bad_base_url_is_refused_when_the_file_is_checked(tmp_path: Path, url: str) -> None:
    config = write(tmp_path, f'efforts = ["none"]\n\n[[endpoints]]\nname = "local"\nbase_url = "{url}"\n')
    result = invoke("run", "--config", config)
    assert result.exit_code == 2
    assert f"{config}:5: endpoints.0.base_url: endpoint local: base_url is not an http:// or https:// URL" in (
        result.stderr
    )
    assert "--base-url" not in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    "url",
    ["localhost:8080/v1", "http://127.0.0.1:99999/v1", "http:///v1", "ftp://127.0.0.1/v1", "http://exa mple.com/v1"],
)
def test_a_bad_replica_url_is_refused_as_a_bad_base_url_is(tmp_path: Path, url: str) -> None:
    config = write(
        tmp_path,
        f'efforts = ["none"]\n\n[[endpoints]]\nname = "pool"\nbase_urls = ["http://127.0.0.1:9/v1", "{url}"]\n',
    )
    result = invoke("run", "--config", config)
    assert result.exit_code == 2
    assert "endpoints.0.base_urls.1: endpoint pool: base_urls[1] is not an http:// or https:// URL" in result.stderr
    assert "Traceback" not in result.stderr
