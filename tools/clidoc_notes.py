"""The prose of ``docs/cli.md`` that click cannot know: sample output, details of output formats, links to other pages.

Everything else on that page (usage, help, options, environment variables
read through options, exit statuses) is generated from the commands by
``tools/clidoc.py``. A note is Markdown, keyed by command path.
"""

from __future__ import annotations

__all__ = ["ERRORS", "NOTES", "OTHER_ENV", "PREAMBLE"]

PREAMBLE = """
Every command is a thin shell over the Python API (`tsuka_core`), and every
command has `-h/--help`. `tsuka --version` prints the installed version.

This page is generated from the commands themselves; regenerate it with
`{REGENERATE}`.
"""
"""Follows the root command's help at the top of the page; ``{REGENERATE}`` is replaced by the command."""

OTHER_ENV: tuple[tuple[str, str, str], ...] = (
    (
        "OPENAI_BASE_URL",
        "`run`, `models`",
        "the server's base URL when `--base-url` is not given; its presence also selects the `openai` backend",
    ),
    (
        "OPENAI_API_KEY",
        "`run`, `models`",
        "sent as a Bearer token by the `openai` backend; optional (local servers rarely need one); "
        "never printed or stored",
    ),
    (
        "TSUKA_LOAD_PLUGINS",
        "every command",
        "comma-separated names of the plugin distributions to load besides the built-in one; set but empty, "
        "only the built-ins load",
    ),
)
"""Variables read by backends and the plugin manager rather than by an option: (name, used by, meaning)."""

ERRORS = """
Errors are one line on standard error, such as
`tsuka: error: unknown backend 'olama' ('tsuka backends' lists them)`, never a
traceback. An invalid suite prints one line per problem, then the count.
A usage error (a bad option value, an unknown option, a missing argument) is
one line too, with where help is, and exit status 2:
`tsuka: error: Invalid value for '--tools': File 'nope.json' does not exist. (see 'tsuka gate --help')`.
"""
"""Follows the table of exit statuses."""

_RUN = """
A request is tried again, up to `--retries` more times, after a connection
error, a time-out, 408, 429 or 5xx. With `--repeats N` a test scores the mean of its runs, the profile keeps the
spread and each run's score, and run K is sent seed + K − 1.

While it runs, a progress bar per `MODEL@EFFORT` is shown on a terminal (one
line per finished test otherwise). At the end it prints, for each level, the
tier, the category scores, the speed, every test's score, and the detail of
every failed (`x`) or errored (`!`) check; then the recommendations, what was
stored, and any level that could not be measured:

```text
careful-7b@xhigh  tier medium
  instruction 100%  json 100%  toolCalling 80%  |  139.2 tok/s  |  avg 7 completion tokens
    ...
    trappola_astensione          ERROR  step 0: POST http://127.0.0.1:39227/v1/chat/completions: HTTP 503: model is loading (gave up after 2 attempts)
    ...
Recommendation: careful-7b at effort none (tier large)
Stored 1 profile(s) in models_profile.json: careful-7b@none
not measured: careful-7b@xhigh not stored: trappola_astensione: step 0: POST http://127.0.0.1:39227/v1/chat/completions: HTTP 503: model is loading (gave up after 2 attempts)
```

The profile store is read before the first request, so a damaged store stops
the run before any model time is spent.

The `--json` document holds `backend`, `provider`, `suite`, `testsHash`, the
stored `profiles` and `recommendations`, `failed` (one line per level not
stored), `notes`, and `levels`: for each level its tier, scores, `repeats`,
and every run of every test with its `repeat` number (1 without `--repeats`),
status, score, error and each check's location, type, weight, status and
detail.

How a run works is described in [contract.md](contract.md); the embedded
backend in [embedded.md](embedded.md); the run history, the cache, JUnit and
`--min-tier` in [history-and-reports.md](history-and-reports.md).
"""  # noqa: E501 (sample output lines are as long as tsuka prints them)

_MODELS = """
The names go one per line to standard output, the backend's address to
standard error:

```text
$ tsuka models --base-url http://127.0.0.1:8080/v1
# http://127.0.0.1:8080/v1
careful-7b
hasty-3b
```
"""

_PROFILES = """
`*` marks each model's recommended level.

```sh
tsuka profiles
tsuka profiles hasty-3b --suite my-suite
```

An example of the output is in [profiles.md](profiles.md#tsuka-profiles).
"""

_TIER = """
The tier goes to standard output; the profile used and whether it is valid to
standard error:

```text
$ tsuka tier hasty-3b
medium
hasty-3b@none: valid
```
"""

_GATE = """
The tools file is a JSON array of tool definitions (or an object with a
`tools` array), each with an optional `requiredTier`.

```text
$ tsuka gate hasty-3b --tools tools.json
hasty-3b@none: tier medium
  visible  read_file
  visible  search_web
  hidden   write_file needs tier large; hasty-3b@none is medium
```

More examples, and the Python equivalent, are in
[profiles.md](profiles.md#tsuka-gate).
"""

_VALIDATE = """
It loads the suite exactly as a run would. An empty category gives a warning.

```text
$ tsuka validate my-suite
...
4 tests, suite hash 52ac4ba0
```

Examples of problems and how to fix them are in
[writing-tests.md](writing-tests.md#common-mistakes-and-what-tsuka-says).
"""

_HASH = """
It does not validate the files. A folder that does not exist or holds no
`*.json` file hashes to `none`.

```text
$ tsuka hash ../reference/tsuka-benchmarks
98ac6763
```
"""

_SCHEMA = """
The schema follows JSON Schema draft 2020-12.
[writing-tests.md](writing-tests.md#editor-support-the-json-schema) shows how
to use it in VS Code.
"""

_CHECKS = """
The built-in check types are described in [checks.md](checks.md).
"""

_CHECKS_SHOW = """
```text
$ tsuka checks show tool_not_called
tool_not_called: Pass when no tool is called (or, with `value`, when that tool is not called).
provided by tsuka 0.1.0
  value (string | null, optional, default null): The tool that must not be called; without it, no tool may be called.
  weight (number > 0, optional, default 1): weight of the check in its test
```
"""

_BACKENDS = """
A backend's name is what `--backend` takes; `efforts` says whether it can apply
effort levels (`applied` or `cannot apply`). The built-in backends are
`openai`, for any OpenAI-compatible server, and `embedded`, a small model run
inside the tsuka process ([embedded.md](embedded.md)).
"""

_PLUGINS = """
The built-in check types and backends arrive through the same `tsuka`
entry-point group as a third party's. A plugin that fails to import does
not stop the others: each command says so in one line on stderr and goes on,
`tsuka plugins` shows it as failed, and a check type, backend or suite only it
could provide is an unknown name whose error names it. Set
`TSUKA_LOAD_PLUGINS` to the distributions to load without it. Writing one is
described in
[plugins.md](plugins.md).
"""

_HISTORY = """
The run history is described in [history-and-reports.md](history-and-reports.md).
"""

_COMPARE = """
How "beyond noise" is decided (a paired bootstrap), real outputs, and the
structure `--json` writes are in [compare.md](compare.md).
"""

NOTES: dict[str, str] = {
    "run": _RUN,
    "models": _MODELS,
    "profiles": _PROFILES,
    "tier": _TIER,
    "gate": _GATE,
    "validate": _VALIDATE,
    "hash": _HASH,
    "schema": _SCHEMA,
    "checks": _CHECKS,
    "checks show": _CHECKS_SHOW,
    "backends": _BACKENDS,
    "plugins": _PLUGINS,
    "runs": _HISTORY,
    "show": _HISTORY,
    "rescore": _HISTORY,
    "report": _HISTORY,
    "compare": _COMPARE,
}
"""Markdown shown at the end of each command's section, after its options and exit statuses."""
