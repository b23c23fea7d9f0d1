"""The outcome of one check: passed, failed or errored, with a one-line detail."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["Outcome", "Status"]

Status = Literal["passed", "failed", "errored"]


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a check found. ``errored`` means it could not be judged; it scores as failed."""

    status: Status
    detail: str

    @property
    def passed(self) -> bool:
        """True when the check passed."""
        return self.status == "passed"

    @classmethod
    def check(cls, ok: bool, detail: str) -> Outcome:
        """Passed or failed by ``ok``, with the same detail either way."""
        return cls("passed" if ok else "failed", detail)

    @classmethod
    def fail(cls, detail: str) -> Outcome:
        """A failed outcome."""
        return cls("failed", detail)

    @classmethod
    def ok(cls, detail: str) -> Outcome:
        """A passed outcome."""
        return cls("passed", detail)

    @classmethod
    def error(cls, detail: str) -> Outcome:
        """The check could not be evaluated."""
        return cls("errored", detail)
