"""Where an OpenAI-compatible backend found its API key, and what a refusal (401, 403) says about it.

``HTTP 401: Invalid API Key`` alone leaves a new user guessing which variable
tsuka read. The refusal names it: not set (and a look-alike that is set, such
as ``OPENAI_KEY``), or set and sent but refused, or the project file's
``api_key_env`` variable. The key itself is never shown.

This module is the one place a key is read from the environment: the default
variable, the one ``--api-key-env`` or a project file's ``api_key_env`` names.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass

from tsuka_core.errors import BackendError, UsageError

__all__ = ["DEFAULT_KEY_ENV", "KeySource", "checked_key", "key_in", "key_is_set", "key_or_none"]

DEFAULT_KEY_ENV = "OPENAI_API_KEY"
"""The variable read when nothing else names one."""


@dataclass(frozen=True)
class KeySource:
    """The key a backend sends (if any) and where it came from, said in one phrase."""

    key: str | None
    origin: str
    """``OPENAI_API_KEY``, or the variable and the endpoint that named it, or the configuration."""

    @classmethod
    def find(cls, configured: str | None, configured_from: str | None, environ: Mapping[str, str]) -> KeySource:
        """The configured key (from ``configured_from``) if given, else ``OPENAI_API_KEY`` from ``environ``."""
        if configured and configured.strip():
            return cls(configured.strip(), configured_from or "the backend configuration's api_key")
        return cls(key_or_none(DEFAULT_KEY_ENV, environ), DEFAULT_KEY_ENV)

    def refusal_hint(self, status: int, environ: Mapping[str, str]) -> str:
        """What to check after the server answered ``status`` (401 or 403): which key was sent, or why none was."""
        if self.key is None:
            fix = f"set {self.origin}, or name another variable in the project file's api_key_env"
            return f"no API key was sent: {self.origin} is not set{_look_alikes(environ)}; {fix}"
        if status == 403:
            return f"the key in {self.origin} was sent and refused access: check its access to this model"
        return f"the key in {self.origin} was sent and refused: check its value"


def _look_alikes(environ: Mapping[str, str]) -> str:
    """``; OPENAI_KEY is set, but tsuka reads OPENAI_API_KEY`` for variables that look meant for it (names only)."""
    names = sorted(
        name
        for name, value in environ.items()
        if value.strip() and name != DEFAULT_KEY_ENV and "OPENAI" in name.upper() and "KEY" in name.upper()
    )
    if not names:
        return ""
    shown = ", ".join(names[:3])
    verb = "is" if len(names) == 1 else "are"
    return f" ({shown} {verb} set, but tsuka reads {DEFAULT_KEY_ENV})"


def checked_key(key: str, origin: str) -> str:
    """``key`` (surrounding white space already stripped) if HTTP can carry it in a header; never echoes it."""
    for position, char in enumerate(key, start=1):
        if not "!" <= char <= "~":
            what = "a non-ASCII character" if ord(char) > 127 else "a space" if char == " " else "a control character"
            raise BackendError(
                f"the API key ({origin}) holds {what} at position {position}, which cannot be sent in an "
                "HTTP header: check that its value was copied whole and nothing else"
            )
    return key


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def key_in(name: str | None, environ: Mapping[str, str] = os.environ) -> str | None:
    """The API key held by the variable ``name`` (``--api-key-env``); None without a name; unset is an error."""
    if name is None:
        return None
    if not _NAME.fullmatch(name):
        raise UsageError(f"--api-key-env {name!r}: not an environment variable name (e.g. MY_SERVER_KEY)")
    key = key_or_none(name, environ)
    if key is None:
        raise UsageError(f"--api-key-env names {name}, which is not set; set {name} to the API key")
    return key


def key_is_set(name: str, environ: Mapping[str, str] = os.environ) -> bool:
    """Whether the variable ``name`` holds a key (white space alone is none)."""
    return key_or_none(name, environ) is not None


def key_or_none(name: str, environ: Mapping[str, str] = os.environ) -> str | None:
    """The key the variable ``name`` holds, surrounding white space removed; None when it is unset or blank."""
    key = environ.get(name, "").strip()
    return key or None
