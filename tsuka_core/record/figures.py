"""A scorecard's figures as a level's record keeps them: each a share and what it is taken over."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from tsuka_core.record.lenient import Lenient

__all__ = ["Figure", "ScorecardFigures"]


class Figure(BaseModel):
    """One figure of a scorecard: a share from 0 to 1, and how many items it is taken over."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    value: float = Field(ge=0, le=1, allow_inf_nan=False)
    """The share (an accuracy)."""
    count: int = Field(ge=0, le=10_000_000)
    """How many items (prompts, instructions, entries) it is taken over."""


class ScorecardFigures(Lenient):
    """The figures a registered scorecard gave one level: which scorecard, and each figure by its label."""

    objects_only: ClassVar[bool] = True

    name: str | None = None
    """The scorecard's name (``bfcl``, ``ifeval``)."""
    figures: dict[str, Figure] | None = None
    """Each figure by label (``accuracy``; ``prompt strict``...)."""
