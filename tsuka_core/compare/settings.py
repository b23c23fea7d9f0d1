"""What each side of a comparison was measured with, and every difference between the two, one phrase each.

A run records its settings (``maxTokens``, temperature, seed, backend options, repeats) and each level the
sampling its backend sent; a profile records the sampling, the backend and the provider. A score that moved
between two sides measured differently may have moved for that reason: the comparison says so.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from tsuka_core.record.level import LevelRecord
from tsuka_core.storage.history_types import StoredRun

__all__ = ["differences", "profile_settings", "record_settings", "run_settings", "tool_prompt"]

_SAMPLING = ("maxTokens", "temperature", "seed", "topK", "repeatPenalty")
_RUN = ("maxTokens", "temperature", "seed", "backendOptions", "repeats", "modelPath")


def run_settings(run: StoredRun) -> dict[str, Any]:
    """A recorded run's settings: its backend and server, what it was asked with, its first level's record."""
    found: dict[str, Any] = {"backend": run.backend, "provider": run.provider}
    found.update({k: run.options[k] for k in _RUN if run.options.get(k) is not None})
    if run.levels:
        found.update(record_settings(run.levels[0].record))
    return found


def record_settings(record: LevelRecord) -> dict[str, Any]:
    """What a level's record says it was measured with: backend, provider, repeats, options, sampling, how the
    tools reached the prompt (:func:`tool_prompt`) and the kind of server."""
    found: dict[str, Any] = {k: record.found(k) for k in ("backend", "provider") if record.found(k) is not None}
    if record.repeats:
        found["repeats"] = record.repeats
    if record.backend_options:
        found["backendOptions"] = record.backend_options
    tools = tool_prompt(record)
    if tools is not None:
        found["tools"] = tools
    if record.server is not None and record.server.kind:
        found["server"] = record.server.kind
    sampling = record.sampling.stored() if record.sampling is not None else {}
    found.update({k: v for k, v in sampling.items() if k in _SAMPLING and v is not None})
    return found


def tool_prompt(record: LevelRecord) -> str | None:
    """How the offered tools reached the model's prompt, where the record says: the chat template an in-process
    model was rendered with, or whether a llama.cpp server's template rendered them (else its generic handling)."""
    if record.chat_template:
        return f"rendered by chat template {record.chat_template}"
    if record.tool_calling_server_support is False:
        return "server's generic handling: its template renders no tools"
    if record.tool_calling_server_support:
        return "rendered by the server's chat template"
    return None


profile_settings = record_settings
"""A stored profile's settings: the same reading as any level's record."""


def differences(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[str]:
    """``maxTokens 512 → 24`` for each setting both sides record and that differs (one side's alone is unknown)."""
    return [f"{key} {_shown(a[key])} → {_shown(b[key])}" for key in a if key in b and a[key] != b[key]]


def _shown(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= 60 else text[:57] + "..."
