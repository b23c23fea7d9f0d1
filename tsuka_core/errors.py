"""Every error tsuka raises for a problem the user must fix.

The tree::

    TsukaError                  anything the user must fix; the CLI prints it as one line
    ├── PluginError             a plugin failed to import, or two plugins claim one name
    ├── SuiteError              a suite has problems; ``problems`` lists each one
    ├── BackendError            a backend cannot be used as configured (missing key, bad URL)
    │   └── RequestError        a request failed for good (after retries); ``retryable`` says why
    ├── StoreError              the profile store cannot be read, locked or written
    │   └── WriteFailedError    a write failed after the work was done; the message names exactly what was kept
    └── UsageError              an argument or option that cannot work

A wrong answer from a model is never an exception: it is a failed check.
"""

from __future__ import annotations

__all__ = [
    "BackendError",
    "PluginError",
    "RequestError",
    "StoreError",
    "SuiteError",
    "TsukaError",
    "UsageError",
    "WriteFailedError",
]


class TsukaError(Exception):
    """A problem the user must fix; its message is one complete line."""

    exit_code = 2


class PluginError(TsukaError):
    """A plugin failed to load, or two plugins registered the same name."""


class SuiteError(TsukaError):
    """A suite has one or more problems, each a line naming file and location.

    ``problems`` holds every problem found, one line each; the message is the
    first of them and how many more there are.
    """

    problems: list[str]
    """Every problem found, in file order, one line each (``01_t.json: checks[0]: ...``)."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = list(problems)
        count = len(self.problems)
        head = self.problems[0] if self.problems else "invalid suite"
        more = f" (and {count - 1} more)" if count > 1 else ""
        super().__init__(f"{head}{more}")


class BackendError(TsukaError):
    """A backend cannot work as configured."""


class RequestError(BackendError):
    """A request to a model server failed for good, after any retries."""

    exit_code = 1
    explains_refusal = False
    """True when the message already says what to check after a 401 or 403 (the key sent, or why none was)."""

    def __init__(self, message: str, *, status: int | None = None, retryable: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.retryable = retryable


class StoreError(TsukaError):
    """The profile store cannot be read, locked or written; nothing was changed."""


class WriteFailedError(StoreError):
    """A write failed once the work was done (a full disk): the message names what was stored and what was not."""

    exit_code = 1


class UsageError(TsukaError):
    """An argument or option that cannot work."""
