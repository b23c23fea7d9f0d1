"""The embedded backend's ``--option`` keys: what each sets, and each read and checked in one line."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TypeVar

from tsuka_core.backends.embedded_model import OwnTemplate
from tsuka_core.errors import BackendError

__all__ = ["BATCHED", "DEFAULT_PARALLEL", "MAX_TEMPLATE_BYTES", "OPTIONS", "number_option", "own_template"]

_Number = TypeVar("_Number", int, float)

DEFAULT_PARALLEL = 1
"""Sequences decoded together unless ``--option parallel=N``: one, so that an answer is computed alone and never
depends on what is decoded beside it. llama.cpp's batched decoding is not batch-invariant: a request whose prompt
is evaluated in the same batch as other sequences' tokens can get another answer (Gemma 3 270M: 2 of 9 answers of
the default suite differed between two runs with 4); one at a time cost 1.08× the time for Gemma and nothing for
SmolLM2 on 2 cores (``docs/embedded.md``)."""
OPTIONS: Mapping[str, str] = {
    "chat_template": "a Jinja chat template file to serve the models with instead of their own "
    "(llama-server's --chat-template-file)",
    "n_ctx": "context per sequence, in tokens (default 4096)",
    "parallel": "sequences decoded together (default 1: answers that never depend on what runs beside them)",
    "repeat_penalty": "llama.cpp's repeat penalty (default 1.0)",
    "threads": "llama.cpp threads (default: the cores other programs leave free when the model loads)",
}
"""The ``--option KEY=VALUE`` keys this backend reads, each with what it sets."""


BATCHED = (
    "--option parallel decodes several answers together: faster on many cores, but llama.cpp's batched decoding "
    "is not batch-invariant, so an answer can change with the requests decoded beside it (recorded as "
    "compute.parallel)"
)
"""Said once a model loads with ``parallel`` above 1."""

MAX_TEMPLATE_BYTES = 1024 * 1024
"""The largest chat template file ``--option chat_template`` reads (a model's own is a few kilobytes)."""


def own_template(option: str | None) -> OwnTemplate | None:
    """The template ``--option chat_template=FILE`` gives, or None; a one-line error for a file it cannot use."""
    if option is None:
        return None
    path = Path(option).expanduser()
    where = f"backend 'embedded': --option chat_template={option}"
    try:
        if path.stat().st_size > MAX_TEMPLATE_BYTES:
            raise BackendError(f"{where} is larger than {MAX_TEMPLATE_BYTES // 1024} KB: not a chat template")
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BackendError(f"{where}: no such file") from None
    except UnicodeDecodeError:
        raise BackendError(f"{where} is not UTF-8 text") from None
    except OSError as error:
        raise BackendError(f"{where} cannot be read: {error.strerror or error}") from None
    if not text.strip():
        raise BackendError(f"{where} is empty")
    return OwnTemplate(text, path.name, option)


def number_option(options: Mapping[str, str], key: str, default: _Number, kind: type[_Number]) -> _Number:
    raw = options.get(key)
    if raw is None:
        return default
    try:
        value = kind(raw)
    except ValueError:
        raise BackendError(f"backend 'embedded': --option {key}={raw!r} is not a number") from None
    if value < 0:
        raise BackendError(f"backend 'embedded': --option {key}={raw!r} must not be negative")
    return value
