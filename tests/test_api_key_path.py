"""How a backend gets its API key: --api-key-env NAME, else the variable the backend declares; one way for all."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from typing import ClassVar

import httpx
import pytest

import tsuka_core
from tsuka_core.run.config import backend_config
from tsuka_core.run.session import make_backend
from tsuka_core.testing import registry_of


class KeyedBackend(tsuka_core.Backend):
    """A plugin backend that declares the variable holding its key."""

    name: ClassVar[str] = "keyed"
    env_vars: ClassVar[tuple[str, ...]] = ("KEYED_API_KEY",)
    api_key_env: ClassVar[str | None] = "KEYED_API_KEY"


class Plugin:
    @tsuka_core.hookimpl
    def register_backends(self, register: tsuka_core.RegisterBackend) -> None:
        register(KeyedBackend)


def _made(config: tsuka_core.BackendConfig) -> tsuka_core.Backend:
    async def make() -> tsuka_core.Backend:
        async with httpx.AsyncClient() as client:
            return make_backend(registry_of(Plugin(), builtins=False), "keyed", config, client)

    return asyncio.run(make())


def test_a_plugin_backend_gets_its_key_from_the_variable_it_declares(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KEYED_API_KEY", " sk-declared \n")
    assert _made(tsuka_core.BackendConfig()).config.api_key == "sk-declared"
    monkeypatch.delenv("KEYED_API_KEY")
    assert _made(tsuka_core.BackendConfig()).config.api_key is None


def test_api_key_env_wins_over_the_declared_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KEYED_API_KEY", "sk-declared")
    monkeypatch.setenv("MY_GATEWAY_KEY", "sk-chosen")
    config = backend_config({"api_key_env": "MY_GATEWAY_KEY"})
    assert _made(config).config.api_key == "sk-chosen"


def test_api_key_env_naming_an_unset_or_bad_variable_is_one_line_exit_2(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NOT_SET_KEY", raising=False)
    base = [sys.executable, "-m", "tsuka_core", "models", "-b", "openai", "--base-url", "http://127.0.0.1:9/v1"]
    unset = subprocess.run(
        [*base, "--api-key-env", "NOT_SET_KEY"], check=False, capture_output=True, text=True, timeout=60
    )
    bad = subprocess.run([*base, "--api-key-env", "a b"], check=False, capture_output=True, text=True, timeout=60)
    assert unset.returncode == 2
    assert unset.stderr.strip() == (
        "tsuka: error: --api-key-env names NOT_SET_KEY, which is not set; set NOT_SET_KEY to the API key"
    )
    assert bad.returncode == 2
    assert "not an environment variable name" in bad.stderr


def test_the_provider_docstring_says_what_the_base_class_returns() -> None:
    doc = tsuka_core.Backend.provider.__doc__ or ""
    assert doc.startswith("What profiles record as ``provider``; here the backend's name.")
    assert KeyedBackend(tsuka_core.BackendConfig(), httpx.AsyncClient()).provider == "keyed"


def test_server_settings_fill_from_any_options_and_refuse_bad_ones_in_one_line() -> None:
    from tsuka_core.errors import UsageError
    from tsuka_core.run.config import ServerSettings

    settings = ServerSettings.of({"base_url": ["http://127.0.0.1:1/v1", "http://127.0.0.1:2/v1"], "max_tokens": 64,
                                  "backend_option": ["stream=off"], "junit": None, "efforts": ("low",)})  # fmt: skip
    assert settings.replicas == ("http://127.0.0.1:1/v1", "http://127.0.0.1:2/v1")
    config = settings.config()
    assert (config.base_url, config.max_tokens, dict(config.options)) == (
        "http://127.0.0.1:1/v1",
        64,
        {"stream": "off"},
    )
    with pytest.raises(UsageError, match="timeout"):
        ServerSettings.of({"timeout": "soon"})
    with pytest.raises(UsageError, match="expected KEY=VALUE"):
        ServerSettings.of({"backend_option": ["stream"]}).config()
