"""Finding secrets written into the project file: secret-named keys, key-like values, URLs carrying credentials."""

from __future__ import annotations

import re
from typing import Any

from tsuka_core.masking import looks_like_key
from tsuka_core.urls import url_parts

__all__ = ["secret_problems"]

Loc = tuple[str | int, ...]

SECRET_NAME = re.compile(
    r"(^|_)(api_?key|key|keys|token|secret|password|passwd|pass|pwd|auth|authorization|authentication|bearer"
    r"|credentials?|cookie|session_?id|private_?key|sig|signature)$"
)
"""A key (or query parameter) name, normalised by :func:`normal_name`, whose value would be a secret."""
NAMED = "secrets never live in the project file: name the variable holding it in api_key_env"
LOOKS = "this looks like an API key; keep it in an environment variable named by api_key_env"
QUERY = "remove it and name the key's variable in api_key_env"
USERINFO = "the URL holds credentials (user:password@); remove them and name the key's variable in api_key_env"


def normal_name(key: str) -> str:
    """``X-Api-Key``, ``x_api_key`` and ``xApiKey`` all as ``x_api_key``."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", key.strip())
    return re.sub(r"[\s_\-.]+", "_", spaced).lower()


def secret_name(key: str) -> bool:
    """True when a key (or a query parameter) named ``key`` would hold a secret."""
    return bool(SECRET_NAME.search(normal_name(key)))


def secret_problems(value: Any, loc: Loc = ()) -> list[tuple[Loc, str]]:
    """Every secret literal in the table ``value``: its location and what to do instead (never the secret)."""
    found: list[tuple[Loc, str]] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if secret_name(str(key)):
                found.append(((*loc, key), NAMED))
            else:
                found += secret_problems(item, (*loc, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += secret_problems(item, (*loc, index))
    elif isinstance(value, str):
        found += [(loc, message) for message in _text_problems(value)]
    return found


def _text_problems(value: str) -> list[str]:
    text = value.strip().strip("'\"")
    if looks_like_key(text):
        return [LOOKS]
    if "://" not in text:
        return []
    userinfo, names = url_parts(text)
    problems = [USERINFO] if userinfo is not None else []
    secret = [name for name in names if secret_name(name)]
    if secret:
        shown = ", ".join(repr(name[:40]) for name in secret)
        problems.append(f"the URL's query holds a secret ({shown}); {QUERY}")
    return problems
