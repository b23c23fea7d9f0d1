"""The HTML report of a recorded run: one self-contained static page, every piece of model output escaped.

The page is rendered from the Jinja templates in ``templates/`` with
autoescaping on, so every value placed in it is escaped unless it is
:class:`markupsafe.Markup` (only the charts, which escape their own text). The
page fetches nothing (styles inline, charts inline SVG, no script at all), so
it works from ``file://`` and anywhere it is mailed; its Content Security
Policy forbids scripts and remote loads besides, so even a mistake in escaping
could not run what a model wrote.

A run made with repeats shows each test's mean score and spread at each level,
every run's check outcomes side by side, and each run's transcript on demand.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, Template

from tsuka_core.engine.answer_faults import fault_label
from tsuka_core.engine.confidence import BORDERLINE
from tsuka_core.report.figures import CATEGORY_SHORT, pct
from tsuka_core.report.html_view import efforts_of, models_of, run_grid, run_scores, run_shown, score_class, shown
from tsuka_core.storage.history_query import StoredRun
from tsuka_core.terms import CATEGORIES
from tsuka_core.timestamps import format_tested_at

__all__ = ["CSP", "render_report", "write_report"]

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"
"""The page's Content Security Policy: inline styles only; no script, no fetch, no remote anything."""

_MARK = {"passed": "✓", "failed": "✗", "errored": "!"}


def _mark(status: str) -> str:
    """A check outcome's mark: ✓, ✗, ``!`` (errored) or ``?``."""
    return _MARK.get(status, "?")


def _json_text(value: Any, indent: int | None = None) -> str:
    """``value`` as JSON text, non-ASCII kept (the template escapes it like any other text)."""
    return json.dumps(value, ensure_ascii=False, indent=indent, default=str)


@cache
def _environment() -> Environment:
    """The report's templates, autoescaped, with the filters and names they use."""
    env = Environment(
        loader=PackageLoader("tsuka_core.report"),
        autoescape=True,
        auto_reload=False,  # shipped with the package: no need to check for changes at every include
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        pct=pct,
        score_class=score_class,
        shown=shown,
        run_shown=run_shown,
        run_scores=run_scores,
        mark=_mark,
        fmt=format,
        json_text=_json_text,
    )
    env.globals.update(
        categories=CATEGORIES,
        category_short=CATEGORY_SHORT,
        run_grid=run_grid,
        borderline=BORDERLINE,
        fault_label=fault_label,
    )
    return env


def _page(run: StoredRun, generated_at: datetime | None) -> tuple[Template, dict[str, Any]]:
    models = models_of(run)
    context = {
        "csp": CSP,
        "run": run,
        "models": models,
        "efforts": efforts_of(models),
        "generated_at": format_tested_at(generated_at or datetime.now(UTC)),
    }
    return _environment().get_template("report.html"), context


def render_report(run: StoredRun, *, generated_at: datetime | None = None) -> str:
    """The whole page for ``run``."""
    template, context = _page(run, generated_at)
    return template.render(context)


def write_report(path: Path, run: StoredRun, *, generated_at: datetime | None = None) -> None:
    """Write the page for ``run`` to ``path`` (UTF-8) as it is rendered, a piece at a time."""
    template, context = _page(run, generated_at)
    template.stream(context).dump(str(path), encoding="utf-8")
