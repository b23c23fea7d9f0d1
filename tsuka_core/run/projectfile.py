"""The project file: ``tsuka.toml`` (or ``[tool.tsuka]`` of ``pyproject.toml``), its model, loading and checks."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from tsuka_core.errors import UsageError
from tsuka_core.run.project_secrets import secret_problems

if TYPE_CHECKING:
    from pydantic import BaseModel

    from tsuka_core.run.project_model import Endpoint, ProjectFile

__all__ = ["ConfigError", "Project", "find_project", "load_project", "project_schema"]

PROJECT_FILE = "tsuka.toml"

MAX_DEPTH = 16
"""The deepest nesting of tables and arrays read; a project file needs 4 (``endpoints``, one, ``options``, a value)."""
DEPTH_HINT = "Flatten the file (a project file needs a few levels; 'tsuka schema --config' shows them)."

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
    if _depth(table) > MAX_DEPTH:
        raise UsageError(f"{path}: nested more than {MAX_DEPTH} tables or arrays deep; nothing was run. {DEPTH_HINT}")
    from pydantic import ValidationError  # the model is loaded only when there is a file to check

    from tsuka_core.run.project_model import ProjectFile

    where = _Locator(path, text)
    problems = [where(loc) + message for loc, message in secret_problems(table)]
    try:
        data = ProjectFile.model_validate(table)
    except ValidationError as exc:
        problems += [where(err["loc"]) + _message(err) for err in exc.errors()]
        data = ProjectFile()
    problems += _endpoint_problems(where, data.endpoints)
    if problems:
        raise ConfigError(sorted(problems, key=lambda problem: _line_of(problem, path)))
    return Project(path, data)


def _line_of(problem: str, path: Path) -> int:
    """The line a problem names (``FILE:LINE: ...``), 0 for the whole file: problems are listed in file order."""
    line = problem.removeprefix(f"{path}:").split(":", 1)[0]
    return int(line) if line.isdigit() else 0


def project_schema() -> dict[str, Any]:
    """The JSON Schema of the project file."""
    from tsuka_core.run.project_model import ProjectFile

    return ProjectFile.model_json_schema()


def _endpoint_problems(where: _Locator, endpoints: list[Endpoint]) -> list[str]:
    """A name used twice, a base URL no backend could use."""
    problems = []
    seen: set[str] = set()
    for index, endpoint in enumerate(endpoints):
        if endpoint.name in seen:
            problems.append(f"{where(('endpoints', index, 'name'))}endpoint name {endpoint.name!r} is used twice")
        seen.add(endpoint.name)
        if (problem := url_problem(endpoint)) is not None:
            problems.append(f"{where(('endpoints', index, 'base_url'))}endpoint {endpoint.name}: {problem}")
        for position, url in enumerate(endpoint.base_urls or ()):
            if (problem := url_problem(endpoint, url, f"base_urls[{position}]")) is not None:
                problems.append(
                    f"{where(('endpoints', index, 'base_urls', position))}endpoint {endpoint.name}: {problem}"
                )
    return problems


def url_problem(endpoint: Endpoint, url: str | None = None, field: str = "base_url") -> str | None:
    """What makes the endpoint's base URL (or one replica's, ``url`` at ``field``) unusable, or None.

    No scheme or host, a bad port, spaces or control characters; a scheme other than http(s) for ``openai``.
    """
    url = endpoint.base_url if url is None else url
    if url is None:
        return None
    http = endpoint.backend == "openai"
    wanted = "an http:// or https:// URL" if http else "a URL (scheme://host[:port]/path)"
    try:
        parts = urlsplit(url)
        _port = parts.port  # raises ValueError when out of range or not a number
    except ValueError:
        return f"{field} is not {wanted} (its host or port cannot be read)"
    if re.search(r"[\s\x00-\x1f\x7f]", url) or not parts.scheme or not parts.hostname:
        return f"{field} is not {wanted}: it needs a scheme and a host, and no spaces or control characters"
    if http and parts.scheme.lower() not in ("http", "https"):
        return f"{field} is not {wanted}: its scheme is {parts.scheme[:20]!r}"
    return None


def _read_toml(path: Path) -> tuple[dict[str, Any], str]:
    import tomllib  # loaded only when there is a file to read

    try:
        text = path.read_text(encoding="utf-8")
        return tomllib.loads(text), text
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError([f"{path}: not valid TOML: {exc}"]) from None
    except RecursionError:
        raise UsageError(f"{path}: not valid TOML: nested too deeply to read; nothing was run. {DEPTH_HINT}") from None


def _depth(value: Any) -> int:
    """How many tables and arrays deep ``value`` goes (read without recursion, so any depth is measured)."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, depth + 1)
            if deepest > MAX_DEPTH:
                break
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def _message(err: Any) -> str:
    from tsuka_core.run.project_model import Endpoint, ProjectFile

    if err["type"] == "extra_forbidden":
        loc = err["loc"]
        model: type[BaseModel] = Endpoint if len(loc) > 1 and loc[0] == "endpoints" else ProjectFile
        close = difflib.get_close_matches(str(loc[-1]), list(model.model_fields), n=1)
        return "unknown key" + (f"; did you mean {close[0]!r}?" if close else "")
    return str(err["msg"])


_HEADER = re.compile(r"\s*\[\[\s*(tool\.tsuka\.)?endpoints\s*\]\]")


class _Locator:
    """Finds the line of a location of the table, reading the file's lines and endpoint headers once."""

    def __init__(self, path: Path, text: str) -> None:
        self.path = path
        self.lines = text.splitlines()
        self.headers = [n for n, line in enumerate(self.lines) if _HEADER.match(line)]

    def __call__(self, loc: tuple[Any, ...]) -> str:
        """``FILE:LINE: KEY: `` for ``loc``, the line found by searching the key within its own table."""
        start, end = 0, self.headers[0] if self.headers else len(self.lines)
        keys = [part for part in loc if isinstance(part, str)]
        if loc and loc[0] == "endpoints" and len(loc) > 1 and isinstance(loc[1], int):
            index = loc[1]
            if index < len(self.headers):
                start = self.headers[index]
                end = self.headers[index + 1] if index + 1 < len(self.headers) else len(self.lines)
            keys = keys[1:]
        line_no = start + 1 if start else None
        if keys:
            pattern = re.compile(rf"\s*\"?{re.escape(keys[0])}\"?\s*=")
            line_no = next((n + 1 for n in range(start, end) if pattern.match(self.lines[n])), line_no)
        dotted = ".".join(str(part) for part in loc) or "(file)"
        return f"{self.path}:{line_no}: {dotted}: " if line_no else f"{self.path}: {dotted}: "
