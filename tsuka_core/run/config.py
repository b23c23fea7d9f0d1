"""The settings that reach a backend, as one type: filled alike from the command line, the project file and its
endpoints.

``tsuka run`` and ``tsuka models`` pass their options (the project file's values
already put under the flags the user did not give) to :class:`ServerSettings`;
each endpoint of a project file is those settings with the endpoint's own
(:meth:`ServerSettings.for_endpoint`). It checks them once and gives the
backend's :class:`~tsuka_core.BackendConfig` and the replicas' base URLs.
Nothing else in ``run/`` reads an option by name.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from tsuka_core.backends.apikey import key_in, key_or_none
from tsuka_core.backends.base import BackendConfig
from tsuka_core.errors import UsageError

if TYPE_CHECKING:
    from tsuka_core.run.project_model import Endpoint

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
    """``--option KEY=VALUE`` pairs, as given (an endpoint's own after the run's: the later pair wins)."""
    key_named_by: str | None = None
    """Who named ``api_key_env`` when it is not the command line: ``endpoint NAME``."""

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

    def for_endpoint(self, endpoint: Endpoint) -> ServerSettings:
        """These settings with a project file's endpoint's own: its server (or replicas), key variable and options."""
        urls = tuple(endpoint.base_urls or ()) or ((endpoint.base_url,) if endpoint.base_url else ())
        pairs = (*self.backend_option, *(f"{k}={_text(v)}" for k, v in endpoint.options.items()))
        update: dict[str, Any] = {"base_url": urls, "backend_option": pairs}
        if endpoint.api_key_env:
            update.update(api_key_env=endpoint.api_key_env, key_named_by=f"endpoint {endpoint.name}")
        return self.model_copy(update=update)

    def _key(self) -> tuple[str | None, str | None]:
        """The API key and where it came from; UsageError when the variable named is not set."""
        if self.key_named_by is None or self.api_key_env is None:
            return api_key_from(self.api_key_env), self.api_key_env
        name = self.api_key_env
        key = key_or_none(name)
        if key is None:
            raise UsageError(
                f"{self.key_named_by}: api_key_env names {name}, which is not set; set {name} to its API key"
            )
        return key, f"{name} (api_key_env of {self.key_named_by})"

    def config(self) -> BackendConfig:
        """The backend's configuration, its API key read from the variable named (unset is an error)."""
        key, origin = self._key()
        return BackendConfig(
            base_url=self.base_url[0] if self.base_url else None,
            api_key=key,
            api_key_from=origin,
            model_path=str(self.model_path) if self.model_path else None,
            timeout=self.timeout,
            retries=self.retries,
            max_tokens=self.max_tokens,
            temperature=self.temperature,
            seed=self.seed,
            options=self.options(),
        )


def _text(value: str | int | float | bool) -> str:
    """An endpoint's option value as ``--option`` gives it: ``true``/``false`` for a boolean."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def backend_config(values: Mapping[str, Any]) -> BackendConfig:
    """A BackendConfig from the options of ``tsuka run`` / ``tsuka models`` (:class:`ServerSettings`)."""
    return ServerSettings.of(values).config()
