"""The project file: ``tsuka.toml`` (or ``[tool.tsuka]`` of ``pyproject.toml``), its model, loading and checks."""

from __future__ import annotations

import difflib
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from tsuka_core.errors import UsageError
from tsuka_core.terms import Effort, Tier

__all__ = ["ConfigError", "Endpoint", "Project", "ProjectFile", "find_project", "load_project", "project_schema"]

PROJECT_FILE = "tsuka.toml"
SECRET_KEYS = frozenset({"api_key", "apikey", "key", "token", "secret", "password", "passwd"})
"""Key names whose value would be a secret: the file names the variable holding it instead (``api_key_env``)."""
SECRET_PREFIXES = ("sk-", "sk_", "ghp_", "hf_", "xoxb-", "AKIA")
"""Value prefixes of common API keys and tokens."""

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
    endpoints: list[Endpoint] = Field(default_factory=list, description="Servers one run measures together.")


PATH_KEYS = ("suite", "profiles", "junit", "json_file")
"""Top-level keys holding paths, read relative to the file's folder."""


class ConfigError(UsageError):
    """A project file with problems: every one of them, one line each naming the file, line and key."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__(f"{len(problems)} problem(s) in the project file; nothing was run:\n" + "\n".join(problems))


@dataclass(frozen=True)
class Project:
    """A checked project file and where it was read."""

    path: Path
    data: ProjectFile

    def resolve(self, value: str) -> Path:
        """A path of the file, relative to the file's folder."""
        return (self.path.parent / value).resolve() if not Path(value).is_absolute() else Path(value)


def find_project(explicit: Path | None, folder: Path) -> tuple[Path, dict[str, Any], str] | None:
    """The project file to read (explicit, else ``tsuka.toml``, else ``pyproject.toml``'s ``[tool.tsuka]``)."""
    if explicit is not None:
        if not explicit.is_file():
            raise UsageError(f"--config {explicit}: no such file")
        table, text = _read_toml(explicit)
        if explicit.name == "pyproject.toml":
            return explicit, table.get("tool", {}).get("tsuka", {}), text
        return explicit, table, text
    if (folder / PROJECT_FILE).is_file():
        table, text = _read_toml(folder / PROJECT_FILE)
        return folder / PROJECT_FILE, table, text
    pyproject = folder / "pyproject.toml"
    if pyproject.is_file():
        table, text = _read_toml(pyproject)
        tool = table.get("tool", {})
        if isinstance(tool, dict) and isinstance(tool.get("tsuka"), dict):
            return pyproject, tool["tsuka"], text
    return None


def load_project(explicit: Path | None = None, folder: Path | None = None) -> Project | None:
    """Read and check the project file, if there is one; ConfigError lists every problem at once."""
    found = find_project(explicit, folder or Path.cwd())
    if found is None:
        return None
    path, table, text = found
    problems = [_where(path, text, loc) + message for loc, message in secret_problems(table)]
    try:
        data = ProjectFile.model_validate(table)
    except ValidationError as exc:
        problems += [_where(path, text, err["loc"]) + _message(err) for err in exc.errors()]
        data = ProjectFile()
    names = [endpoint.name for endpoint in data.endpoints]
    for index, name in enumerate(names):
        if name in names[:index]:
            problems.append(_where(path, text, ("endpoints", index, "name")) + f"endpoint name {name!r} is used twice")
    if problems:
        raise ConfigError(problems)
    return Project(path, data)


def project_schema() -> dict[str, Any]:
    """The JSON Schema of the project file."""
    return ProjectFile.model_json_schema()


def secret_problems(value: Any, loc: tuple[str | int, ...] = ()) -> list[tuple[tuple[str | int, ...], str]]:
    """Every key-like literal in the file: a secret-named key, or a value that looks like an API key."""
    found: list[tuple[tuple[str | int, ...], str]] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if str(key).lower() in SECRET_KEYS or str(key).lower().endswith(("_token", "_secret", "_password")):
                found.append(
                    ((*loc, key), "secrets never live in the project file: name the variable holding it in api_key_env")
                )
            else:
                found += secret_problems(item, (*loc, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += secret_problems(item, (*loc, index))
    elif isinstance(value, str) and value.strip().startswith(SECRET_PREFIXES):
        found.append((loc, "this looks like an API key; keep it in an environment variable named by api_key_env"))
    return found


def _read_toml(path: Path) -> tuple[dict[str, Any], str]:
    try:
        text = path.read_text(encoding="utf-8")
        return tomllib.loads(text), text
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError([f"{path}: not valid TOML: {exc}"]) from None


def _message(err: Any) -> str:
    if err["type"] == "extra_forbidden":
        loc = err["loc"]
        model: type[BaseModel] = Endpoint if len(loc) > 1 and loc[0] == "endpoints" else ProjectFile
        close = difflib.get_close_matches(str(loc[-1]), list(model.model_fields), n=1)
        return "unknown key" + (f"; did you mean {close[0]!r}?" if close else "")
    return str(err["msg"])


def _where(path: Path, text: str, loc: tuple[Any, ...]) -> str:
    """``FILE:LINE: KEY: `` for a location of the table, the line found by searching the key in the text."""
    lines = text.splitlines()
    start = 0
    keys = [part for part in loc if isinstance(part, str)]
    if loc and loc[0] == "endpoints" and len(loc) > 1 and isinstance(loc[1], int):
        headers = [n for n, line in enumerate(lines) if re.match(r"\s*\[\[\s*(tool\.tsuka\.)?endpoints\s*\]\]", line)]
        if loc[1] < len(headers):
            start = headers[loc[1]]
        keys = keys[1:]
    line_no = start + 1 if start else None
    if keys:
        pattern = re.compile(rf"\s*\"?{re.escape(keys[0])}\"?\s*=")
        for number in range(start, len(lines)):
            if pattern.match(lines[number]):
                line_no = number + 1
                break
    dotted = ".".join(str(part) for part in loc) or "(file)"
    return f"{path}:{line_no}: {dotted}: " if line_no else f"{path}: {dotted}: "
