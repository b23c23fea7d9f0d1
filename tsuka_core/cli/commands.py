"""Where each `tsuka` command lives, and its short help: the root group imports a module only to run its command."""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["COMMANDS", "LazyCommand"]


class LazyCommand(NamedTuple):
    """A command by the module that defines it and the attribute that holds it, with its short help."""

    module: str
    attribute: str
    short_help: str
    """The first sentence of the command's docstring, shown by ``tsuka --help`` (a test keeps them equal)."""


COMMANDS: dict[str, LazyCommand] = {
    "backends": LazyCommand(
        "plugin_cmds",
        "backends",
        "List every backend with its distribution, the environment it reads, its --option keys and its efforts.",
    ),
    "checks": LazyCommand(
        "plugin_cmds", "checks", "List every check type a test may use, with the distribution that provides it."
    ),
    "compare": LazyCommand(
        "compare_cmd", "compare", "Compare two measurements of the same tests: A is the before, B the after."
    ),
    "gate": LazyCommand(
        "profile_cmds", "gate", "Show which tools of FILE MODEL may be offered, by the tier of its valid profile."
    ),
    "hash": LazyCommand(
        "hash_cmd", "hash_", "Print the suite hash of SUITE (default: the installed suite), as profiles record it."
    ),
    "init": LazyCommand(
        "init_cmd", "init", "Write a commented starter project file (tsuka.toml); never overwrites one."
    ),
    "merge": LazyCommand(
        "merge_cmd",
        "merge",
        "Merge the shards of one measurement ('tsuka run --shard I/N') into one store and one history run.",
    ),
    "models": LazyCommand(
        "run_cmd", "models", "List the models the backend can reach (what 'tsuka run all' would measure)."
    ),
    "plugins": LazyCommand(
        "plugin_cmds",
        "plugins",
        "List every installed plugin: distribution, version, entry point, and what it registered or why it failed.",
    ),
    "profiles": LazyCommand(
        "profile_cmds",
        "profiles",
        "Show every stored profile (or MODEL's): tier, scores, effort, when tested, valid or stale and why.",
    ),
    "report": LazyCommand(
        "report_cmd", "report", "Write a recorded run (default: the last) as one self-contained HTML page."
    ),
    "rescore": LazyCommand(
        "history_cmds",
        "rescore",
        "Judge a suite's current checks against the answers of a recorded run, asking no model.",
    ),
    "run": LazyCommand(
        "run_cmd", "run", "Measure MODELS (default: all) at each effort level and store their profiles."
    ),
    "runs": LazyCommand(
        "history_cmds",
        "runs",
        "List the recorded runs, newest first: when, what, against which server, and the tier of each level.",
    ),
    "serve": LazyCommand(
        "serve_cmd",
        "serve",
        "Serve MODEL over llama.cpp's OpenAI-compatible HTTP API, exactly as the embedded backend runs it.",
    ),
    "scorecard": LazyCommand(
        "scorecard_cmd",
        "scorecard",
        "Print a benchmark's own table (BFCL's...) for MODELS from the stored profiles of its suites.",
    ),
    "schema": LazyCommand(
        "suite_cmds",
        "schema",
        "Print the JSON Schema of a test file, including every installed check type's parameters.",
    ),
    "show": LazyCommand(
        "history_cmds",
        "show",
        "Show a recorded run (RUN is its number, 'last', or 'last~N' for the N-th run before the last).",
    ),
    "suites": LazyCommand(
        "suite_cmds",
        "suites",
        "List every registered suite: name, distribution, tests per category, hash and folder.",
    ),
    "tier": LazyCommand(
        "profile_cmds",
        "tier",
        "Print MODEL's tier at EFFORT (default: its recommended effort), from its valid profile.",
    ),
    "validate": LazyCommand(
        "suite_cmds",
        "validate",
        "Check every test file of SUITE (default: the installed suite) and print its hash.",
    ),
}
"""Every command of the root group by name; modules are relative to ``tsuka_core.cli``."""
