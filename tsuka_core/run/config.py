"""A backend's configuration from a run's options: the server, the API key's variable, limits and sampling."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tsuka_core.backends.apikey import key_in
from tsuka_core.backends.base import BackendConfig
from tsuka_core.errors import UsageError

__all__ = ["api_key_from", "backend_config", "replica_urls"]


api_key_from = key_in
"""The API key held by the variable ``--api-key-env`` names (``backends.apikey.key_in``)."""


def _base_urls(values: Mapping[str, Any]) -> tuple[str, ...]:
    given = values.get("base_url") or ()
    return (given,) if isinstance(given, str) else tuple(given)


def replica_urls(values: Mapping[str, Any]) -> tuple[str, ...]:
    """The base URLs of ``--base-url`` given more than once (replicas of one server); empty for one or none."""
    urls = _base_urls(values)
    return urls if len(urls) > 1 else ()


def backend_config(values: Mapping[str, Any]) -> BackendConfig:
    """A BackendConfig from the options of ``tsuka run`` / ``tsuka models`` (click's names for them)."""
    pairs: dict[str, str] = {}
    for item in values.get("backend_option") or ():
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError(f"--option {item!r}: expected KEY=VALUE")
        pairs[key] = value
    urls = _base_urls(values)
    base_url = urls[0] if urls else None  # without one, each backend reads its own environment variables
    model_path = values.get("model_path")
    return BackendConfig(
        base_url=base_url,
        api_key=api_key_from(values.get("api_key_env")),
        api_key_from=values.get("api_key_env"),
        model_path=str(model_path) if model_path else None,
        timeout=values.get("timeout", 300.0),
        retries=values.get("retries", 3),
        max_tokens=values.get("max_tokens"),
        temperature=values.get("temperature"),
        seed=values.get("seed"),
        options=pairs,
    )
