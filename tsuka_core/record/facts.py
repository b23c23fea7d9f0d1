"""The record's nested objects, typed: the sampling sent, the compute an in-process model had, the server's facts,
the speed figures.

Each is read as the record is (:class:`~tsuka_core.record.lenient.Lenient`): a
value of the wrong kind is None and remembered, a key of a backend's own is
kept, and a value that is not an object at all is damage to the record's field.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import StrictBool

from tsuka_core.record.lenient import Count, Lenient, Number

__all__ = ["Compute", "Sampling", "ServerSaid", "SpeedFigure"]


class Sampling(Lenient):
    """The limits and sampling every request was sent with; a backend's own settings are kept beside these."""

    objects_only: ClassVar[bool] = True

    max_tokens: Count | None = None
    """The completion token limit each request sent."""
    temperature: Number | None = None
    """The sampling temperature."""
    seed: Number | None = None
    """The sampling seed."""
    top_k: Number | None = None
    """Top-k sampling (an in-process model's)."""
    top_p: Number | None = None
    """Nucleus sampling."""
    repeat_penalty: Number | None = None
    """The repeat penalty (an in-process model's)."""


class Compute(Lenient):
    """The CPU an in-process model computed with, and why."""

    objects_only: ClassVar[bool] = True

    threads: Count | None = None
    """The threads it computed with."""
    cores: Count | None = None
    """The cores the process may run on."""
    busy_cores: Count | None = None
    """Cores kept busy by other programs when the model loaded."""
    load: Number | None = None
    """The one-minute load average then."""
    chosen_by: str | None = None
    """``free cores``, or ``option`` for ``--option threads=N``."""
    parallel: Count | None = None
    """Answers decoded together."""


class ServerSaid(Lenient):
    """What a server said about itself, as the record keeps it (``ServerFacts.as_profile``'s form)."""

    objects_only: ClassVar[bool] = True

    kind: str | None = None
    """The server software: ``llama.cpp``, ``ollama``..."""
    version: str | None = None
    """Its version or build."""
    model_file: str | None = None
    """The model file it loaded, or the model's digest."""
    slots: Count | None = None
    """How many requests it serves at once."""
    supports_tools: StrictBool | None = None
    """Whether the model's chat template handles tools."""
    supports_parallel_tool_calls: StrictBool | None = None
    """Whether it handles several calls in one answer."""
    supports_reasoning_effort: StrictBool | None = None
    """Whether the model's chat template reads ``reasoning_effort``."""


class SpeedFigure(Lenient):
    """One speed figure over a level's answers: its median and 95th percentile, and how it was measured."""

    objects_only: ClassVar[bool] = True

    p50: Number | None = None
    """The median."""
    p95: Number | None = None
    """The 95th percentile, on the slow side."""
    answers: Count | None = None
    """How many answers it is taken over."""
    source: Literal["server", "stream", "wall"] | None = None
    """Where it came from: the server's timings, the stream, or each request's whole time."""
    formula: str | None = None
    """How it is computed, naming the server's own fields."""
