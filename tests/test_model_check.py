"""A gateway that serves models it does not list: --no-model-check, or model_check = false per endpoint."""

from __future__ import annotations

from pathlib import Path

import pytest
from answerers import perfect
from history_helpers import invoke, stored
from loopback import LoopbackServer

pytestmark = pytest.mark.usefixtures("fast_retries")


def test_an_unlisted_model_is_refused_with_the_way_around_named(tmp_path: Path) -> None:
    with LoopbackServer(perfect, models=["listed"]) as server:
        result = invoke("run", "routed/any", "--base-url", server.base_url, "--profiles", tmp_path / "p.json")
    assert result.exit_code == 2
    (line,) = result.stderr.splitlines()
    assert "model 'routed/any' is not among the models" in line
    assert "--no-model-check, or model_check = false" in line
    assert server.bodies == []


def test_no_model_check_measures_a_model_the_gateway_does_not_list(tmp_path: Path) -> None:
    store = tmp_path / "p.json"
    with LoopbackServer(perfect, models=["listed"]) as server:
        result = invoke(
            "run", "routed/any", "--base-url", server.base_url, "--profiles", store, "-e", "none", "--no-model-check"
        )
    assert result.exit_code == 0, result.stdout + result.stderr
    assert list(stored(store)["profiles"]) == ["routed/any@none"]
    assert {body["model"] for body in server.bodies} == {"routed/any"}


@pytest.mark.parametrize(("where", "flag"), [("endpoint", ()), ("top", ()), ("endpoint", ("--model-check",))])
def test_model_check_false_in_the_project_file(tmp_path: Path, where: str, flag: tuple[str, ...]) -> None:
    config = tmp_path / "tsuka.toml"
    with LoopbackServer(perfect, models=["listed"]) as server:
        top = "model_check = false\n" if where == "top" else ""
        endpoint = "model_check = false\n" if where == "endpoint" else ""
        config.write_text(
            f'{top}efforts = ["none"]\nprofiles = "store.json"\n\n[[endpoints]]\nname = "gateway"\n'
            f'base_url = "{server.base_url}"\nmodels = ["routed/any"]\n{endpoint}',
            encoding="utf-8",
        )
        result = invoke("run", "--config", config, *flag)
    if flag:  # the command line wins over the file
        assert result.exit_code != 0
        assert "is not among the models" in result.stdout + result.stderr
        return
    assert result.exit_code == 0, result.stdout + result.stderr
    assert list(stored(tmp_path / "store.json")["profiles"]) == ["routed/any@none"]
