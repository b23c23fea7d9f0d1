"""The HTML comparison page of two runs or profiles: one self-contained static page, every recorded value escaped.

It is rendered like the run report (:mod:`tsuka_core.report.html`): from the
package's Jinja templates with autoescaping on, with the report's styles and
Content Security Policy (no script, nothing fetched), streamed to the file.
"""

from __future__ import annotations

from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, Template

from tsuka_core.report.compare_page import PageView
from tsuka_core.report.compare_svg import signed_pct
from tsuka_core.report.figures import pct
from tsuka_core.report.html import CSP
from tsuka_core.timestamps import format_tested_at

__all__ = ["render_comparison", "write_comparison"]

_MARK = {"passed": "✓", "failed": "✗", "errored": "!", "absent": "–"}
"""Each check outcome's mark; ``absent`` is a check one side did not record (a profile keeps none)."""


@cache
def _environment() -> Environment:
    """The comparison page's templates (beside the report's), autoescaped, with the filters they use."""
    env = Environment(
        loader=PackageLoader("tsuka_core.report"),
        autoescape=True,
        auto_reload=False,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(pct=pct, signed_pct=signed_pct, mark=lambda status: _MARK.get(status, "?"))
    return env


def _page(page: PageView, generated_at: datetime | None) -> tuple[Template, dict[str, Any]]:
    context = {"csp": CSP, "page": page, "generated_at": format_tested_at(generated_at or datetime.now(UTC))}
    return _environment().get_template("compare.html"), context


def render_comparison(page: PageView, *, generated_at: datetime | None = None) -> str:
    """The whole comparison page."""
    template, context = _page(page, generated_at)
    return template.render(context)


def write_comparison(path: Path, page: PageView, *, generated_at: datetime | None = None) -> None:
    """Write the comparison page to ``path`` (UTF-8) as it is rendered, a piece at a time."""
    template, context = _page(page, generated_at)
    template.stream(context).dump(str(path), encoding="utf-8")
