"""The project file's model: what ``tsuka.toml`` may say, checked by pydantic (``run.projectfile`` reads it)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from tsuka_core.terms import Effort, Tier

__all__ = ["Endpoint", "OptionValue", "ProjectFile"]

OptionValue = str | int | float | bool


class Endpoint(BaseModel):
    """One server to measure: its backend, where it answers, and which of its models."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$", description="Short name, unique in the file.")
    backend: str = Field(default="openai", description="Backend name ('tsuka backends').")
    base_url: str | None = Field(default=None, description="Server base URL, e.g. http://127.0.0.1:8080/v1.")
    base_urls: list[str] | None = Field(
        default=None,
        min_length=2,
        description="Several base URLs serving the same models (replicas, no load balancer): requests are spread "
        "over them, each with its own concurrency; instead of base_url.",
    )
    models: list[str] | Literal["all"] = Field(default="all", description='Model names, or "all" it lists.')
    efforts: list[Effort] | None = Field(default=None, description="Effort levels; default: the run's.")
    concurrency: int | None = Field(default=None, ge=1, le=1024, description="Requests in flight at once.")
    api_key_env: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
        description="The NAME of the environment variable holding the API key (never the key itself).",
    )
    options: dict[str, OptionValue] = Field(default_factory=dict, description="Backend-specific settings.")
    model_check: bool | None = Field(
        default=None,
        description="false: measure model names the server does not list (a gateway); default: the run's.",
    )

    @model_validator(mode="after")
    def _one_kind_of_url(self) -> Endpoint:
        if self.base_url is not None and self.base_urls is not None:
            raise ValueError("give base_url (one server) or base_urls (its replicas), not both")
        return self


class ProjectFile(BaseModel):
    """What a ``tsuka run`` takes, set once for a project; command-line flags win over it."""

    model_config = ConfigDict(extra="forbid", title="tsuka project file")

    suite: str | None = Field(default=None, description="Suite folder, relative to this file.")
    profiles: str | None = Field(default=None, description="Profile store, relative to this file.")
    efforts: list[Effort] | None = Field(default=None, description="Effort levels to measure.")
    concurrency: int | None = Field(default=None, ge=1, le=1024)
    timeout: float | None = Field(default=None, ge=0.1, allow_inf_nan=False, description="Seconds per request.")
    retries: int | None = Field(default=None, ge=0)
    repeats: int | None = Field(default=None, ge=1, le=100)
    temperature: float | None = Field(default=None, allow_inf_nan=False)
    max_tokens: int | None = Field(default=None, ge=1)
    history: bool | None = None
    junit: str | None = Field(default=None, description="JUnit XML file, relative to this file.")
    json_file: str | None = Field(default=None, description="JSON result file, relative to this file.")
    min_tier: Tier | None = None
    model_check: bool | None = Field(default=None, description="false: measure model names the server does not list.")
    endpoints: list[Endpoint] = Field(default_factory=list, description="Servers one run measures together.")
