"""The settings that reach a backend, as one type: filled alike from the command line and the project file.

``tsuka run`` and ``tsuka models`` pass their options (the project file's values
already put under the flags the user did not give) to :class:`ServerSettings`;
it checks them once and gives the backend's :class:`~tsuka_core.BackendConfig`
and the replicas' base URLs. Nothing else in ``run/`` reads an option by name.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from tsuka_core.backends.apikey import key_in
from tsuka_core.backends.base import BackendConfig
from tsuka_core.errors import UsageError

__all__ = ["ServerSettings", "api_key_from", "backend_config"]


api_key_from = key_in
"""The API key held by the variable ``--api-key-env`` names (``backends.apikey.key_in``)."""


class ServerSettings(BaseModel):
    """Where a run's requests go and how they are sent: server, key variable, limits, sampling, backend options."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    base_url: tuple[str, ...] = ()
    """``--base-url``, once per replica; none: each backend reads its own environment variables."""
    api_key_env: str | None = None
    """The variable holding the API key; none: the one the backend declares."""
    model_path: Path | str | None = None
    """A model file, for backends that run a model in-process."""
    timeout: float = 300.0
    retries: int = 3
    max_tokens: int | None = None
    temperature: float | None = None
    seed: int | None = None
    backend_option: tuple[str, ...] = ()
    """``--option KEY=VALUE`` pairs, as given."""

    @field_validator("base_url", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        if value is None:
            return ()
        return (value,) if isinstance(value, str) else value

    @field_validator("backend_option", mode="before")
    @classmethod
    def _none_is_empty(cls, value: Any) -> Any:
        return () if value is None else value

    @classmethod
    def of(cls, values: Mapping[str, Any]) -> ServerSettings:
        """The settings among ``values`` (the options of a command, unset ones None); other keys are ignored."""
        given = {k: v for k, v in values.items() if v is not None}
        try:
            return cls.model_validate(given)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "settings"
            raise UsageError(f"{where}: {first['msg']}") from None

    @property
    def replicas(self) -> tuple[str, ...]:
        """The base URLs when there are several (replicas of one server); empty for one or none."""
        return self.base_url if len(self.base_url) > 1 else ()

    def options(self) -> dict[str, str]:
        """The backend options by key; UsageError (one line) for a pair that is not ``KEY=VALUE``."""
        pairs: dict[str, str] = {}
        for item in self.backend_option:
            key, sep, value = item.partition("=")
            if not sep or not key:
                raise UsageError(f"--option {item!r}: expected KEY=VALUE")
            pairs[key] = value
        return pairs

    def config(self) -> BackendConfig:
        """The backend's configuration, its API key read from the variable named (unset is an error)."""
        return BackendConfig(
            base_url=self.base_url[0] if self.base_url else None,
            api_key=api_key_from(self.api_key_env),
            api_key_from=self.api_key_env,
            model_path=str(self.model_path) if self.model_path else None,
            timeout=self.timeout,
            retries=self.retries,
            max_tokens=self.max_tokens,
            temperature=self.temperature,
            seed=self.seed,
            options=self.options(),
        )


def backend_config(values: Mapping[str, Any]) -> BackendConfig:
    """A BackendConfig from the options of ``tsuka run`` / ``tsuka models`` (:class:`ServerSettings`)."""
    return ServerSettings.of(values).config()
