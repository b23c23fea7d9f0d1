"""Regular expressions as checks use them: JavaScript-style flags and a time limit per search."""

from __future__ import annotations

from dataclasses import dataclass

import regex

from tsuka_core.errors import TsukaError

__all__ = ["DEFAULT_TIMEOUT", "KNOWN_FLAGS", "PathTimeout", "Pattern", "PatternTimeout"]

DEFAULT_TIMEOUT = 1.0
"""Seconds one search may take before it is abandoned (a ReDoS guard)."""

KNOWN_FLAGS = "imsgu"
"""Flags a check may give: i, m, s change matching; g and u are accepted and change nothing."""

_FLAG_BITS = {"i": regex.IGNORECASE, "m": regex.MULTILINE, "s": regex.DOTALL, "g": 0, "u": 0}


class PatternTimeout(TsukaError):  # noqa: N818  (reads as the event it is)
    """A search ran past its time limit."""


class PathTimeout(PatternTimeout):
    """A JMESPath search ran past its time limit (``tsuka_core.judge.jsontools.PATH_TIMEOUT``)."""


@dataclass(frozen=True, slots=True)
class Pattern:
    """A compiled pattern with its flags and time limit.

    Make one with :meth:`compile` (``Pattern.compile(r"\\bdata\\b", "i")``); the constructor takes what
    ``compile`` made (``source``, ``flags``, ``compiled``, ``timeout``). Every search (``search``, ``findall``,
    ``count``) stops after ``timeout`` seconds with :class:`PatternTimeout`.
    """

    source: str
    flags: str
    compiled: regex.Pattern[str]
    timeout: float = DEFAULT_TIMEOUT

    @classmethod
    def compile(cls, source: str, flags: str = "", timeout: float = DEFAULT_TIMEOUT) -> Pattern:
        """Compile ``source``; raises ValueError naming an unknown flag or the syntax error."""
        unknown = sorted({f for f in flags if f not in _FLAG_BITS})
        if unknown:
            raise ValueError(f"unknown regex flag(s) {''.join(unknown)!r}; use any of {KNOWN_FLAGS!r}")
        bits = regex.VERSION0
        for flag in flags:
            bits |= _FLAG_BITS[flag]
        try:
            compiled = regex.compile(source, bits)
        except regex.error as exc:
            raise ValueError(f"regex does not compile: {exc}") from exc
        except RecursionError:
            raise ValueError("regex does not compile: it is nested too deeply") from None
        return cls(source, flags, compiled, timeout)

    def search(self, text: str) -> bool:
        """True when the pattern is found anywhere in ``text``; raises PatternTimeout past the limit."""
        try:
            return self.compiled.search(text, timeout=self.timeout) is not None
        except TimeoutError as exc:
            raise PatternTimeout(f"regex search exceeded {self.timeout:g} s") from exc

    def findall(self, text: str) -> list[str]:
        """Every non-overlapping match in ``text``, left to right, as ``re.findall`` finds them (the whole match
        each, whatever the groups); raises PatternTimeout when finding them all passes the limit."""
        try:
            return [found.group() for found in self.compiled.finditer(text, timeout=self.timeout)]
        except TimeoutError as exc:
            raise PatternTimeout(f"regex search exceeded {self.timeout:g} s") from exc

    def count(self, text: str) -> int:
        """How many non-overlapping matches ``text`` holds (``len(re.findall(...))``); PatternTimeout past the
        limit."""
        return len(self.findall(text))
