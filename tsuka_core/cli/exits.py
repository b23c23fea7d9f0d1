"""The exit statuses of the ``tsuka`` command, declared once: what each means and which command ends with it.

``docs/cli.md`` is generated from these tables (``tools.clidoc``),
so what the page says about a command's exit status is what is declared here.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = [
    "BAD_INPUT",
    "BELOW_TIER",
    "BY_COMMAND",
    "FAILED",
    "INTERRUPTED",
    "LABELS",
    "MEANINGS",
    "OK",
    "REGRESSED",
    "TERMINATED",
    "UNPROFILED",
    "statuses",
]

OK = 0
FAILED = 1
BAD_INPUT = 2
BELOW_TIER = 3
REGRESSED = BELOW_TIER
"""``tsuka compare --fail-on-regression`` found a regression: the same status as a model below ``--min-tier``."""
UNPROFILED = 4
"""``--strict`` was given to ``tsuka tier`` or ``tsuka gate`` and the model has no valid profile."""
INTERRUPTED = 130
TERMINATED = 143

MEANINGS: Mapping[int, str] = {
    OK: "success",
    FAILED: "the run failed: a level could not be measured (the others were stored), a server could not be "
    "reached or kept answering with an error, or a rescore needs a live run",
    BAD_INPUT: "something to fix before trying again: an invalid suite, a bad option or argument, an unknown check "
    "type or backend, a backend that is not configured, a damaged or unwritable profile store, a plugin that "
    "fails to register (or the built-in one fails to load)",
    BELOW_TIER: "`--min-tier` was given and a model is below it at its recommended effort, or "
    "`--fail-on-regression` was given and `tsuka compare` found a regression",
    UNPROFILED: "`--strict` was given to `tier` or `gate` and the model has no valid profile for the suite (a "
    "name the store does not hold, or a stale, damaged or mislabelled profile): it was answered as small",
    INTERRUPTED: "interrupted with Ctrl-C (SIGINT)",
    TERMINATED: "stopped with SIGTERM",
}
"""Every status the command exits with, and what it means whichever command ends with it."""

LABELS: Mapping[int, str] = {
    OK: "success",
    FAILED: "the run failed",
    BAD_INPUT: "bad input or usage",
    BELOW_TIER: "below `--min-tier`, or a regression",
    UNPROFILED: "no valid profile, with `--strict`",
    INTERRUPTED: "interrupted with Ctrl-C",
    TERMINATED: "stopped with SIGTERM",
}
"""Each status in a few words, for a command that has nothing more to say about it."""

_EVERY_COMMAND = (OK, BAD_INPUT, INTERRUPTED, TERMINATED)

BY_COMMAND: Mapping[str, Mapping[int, str]] = {
    "run": {
        OK: "every level was measured and stored",
        FAILED: "some level, or some endpoint of the project file, could not be measured: it is named, an "
        "earlier profile for it is kept, and the other levels and endpoints are stored",
        BELOW_TIER: "`--min-tier` was given and a model is below it at its recommended effort",
        INTERRUPTED: "interrupted with Ctrl-C: the levels that had finished are stored, the others are not",
    },
    "models": {FAILED: "the server could not be reached or answered with an error"},
    "tier": {UNPROFILED: "`--strict` was given and the model has no valid profile (the tier printed is small)"},
    "gate": {
        UNPROFILED: "`--strict` was given and the model has no valid profile (the tools shown are a small model's)"
    },
    "rescore": {
        OK: "the levels were stored (or `--dry-run` showed them)",
        FAILED: "some test needs a live run; nothing was stored",
    },
    "compare": {
        OK: "compared (without `--fail-on-regression`, whatever changed)",
        BAD_INPUT: "a run or profile that does not exist, or sides measured with different suites "
        "(without `--common-tests`)",
        BELOW_TIER: "`--fail-on-regression` was given and a tier dropped or a category score dropped beyond noise",
    },
}
"""The statuses a command ends with besides those of every command, or in its own words; keyed by command path."""


def statuses(command_path: str) -> dict[int, str]:
    """Each status ``tsuka COMMAND_PATH`` can exit with, in order, with its meaning for that command."""
    own = BY_COMMAND.get(command_path, {})
    codes = sorted({*_EVERY_COMMAND, *own})
    return {code: own.get(code, LABELS[code]) for code in codes}
