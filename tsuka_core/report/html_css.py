"""The HTML report's one inline stylesheet (no fonts or images fetched: the page works from file://)."""

from __future__ import annotations

__all__ = ["CATEGORY_COLORS", "STYLE"]

CATEGORY_COLORS = {"instruction": "#6366f1", "json": "#0ea5e9", "toolCalling": "#f59e0b"}
"""One colour per category, the same in every chart and legend."""

STYLE = """
:root {
  --bg: #f5f6fa; --card: #ffffff; --ink: #1f2430; --muted: #667085; --line: #e4e7ec;
  --good: #12b76a; --mid: #f79009; --bad: #f04438; --accent: #4f46e5;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  color: var(--ink); background: var(--bg);
}
* { box-sizing: border-box; }
body { margin: 0; padding: 0 0 48px; line-height: 1.45; }
header.top { background: linear-gradient(120deg, #312e81, #4f46e5 60%, #0ea5e9); color: #fff; padding: 28px 40px 24px; }
header.top h1 { margin: 0 0 6px; font-size: 26px; letter-spacing: -0.01em; }
header.top .meta { opacity: 0.9; font-size: 14px; display: flex; flex-wrap: wrap; gap: 6px 18px; }
header.top .meta b { font-weight: 600; }
main { max-width: 1200px; margin: 0 auto; padding: 0 24px; }
section.card { background: var(--card); border-radius: 14px; box-shadow: 0 1px 3px rgba(16,24,40,.08),
  0 1px 2px rgba(16,24,40,.04); padding: 22px 26px; margin-top: 22px; }
h2 { margin: 0 0 4px; font-size: 20px; }
h3 { margin: 18px 0 8px; font-size: 15px; color: var(--muted); font-weight: 600; text-transform: uppercase;
  letter-spacing: .04em; }
.sub { color: var(--muted); font-size: 14px; margin: 0 0 12px; }
table { border-collapse: collapse; width: 100%; font-size: 14px; }
th, td { text-align: left; padding: 7px 10px; border-bottom: 1px solid var(--line); vertical-align: middle; }
th { color: var(--muted); font-weight: 600; font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.tier { display: inline-block; padding: 2px 10px; border-radius: 999px; font-size: 12px; font-weight: 700;
  letter-spacing: .03em; color: #fff; }
.tier.small { background: var(--bad); } .tier.medium { background: var(--mid); }
.tier.large { background: var(--good); }
.tier.none { background: #98a2b3; }
.rec { outline: 3px solid var(--accent); outline-offset: 2px; }
.star { color: var(--accent); font-weight: 700; margin-left: 4px; }
.callout { background: #eef2ff; border-left: 4px solid var(--accent); padding: 10px 14px; border-radius: 8px;
  margin: 10px 0 4px; font-size: 15px; }
.warn { background: #fffaeb; border-left: 4px solid var(--mid); padding: 8px 12px; border-radius: 8px; margin: 8px 0;
  font-size: 14px; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(440px, 1fr)); gap: 18px; margin-top: 8px; }
figure { margin: 0; padding: 12px; border: 1px solid var(--line); border-radius: 12px; }
figcaption { font-weight: 600; font-size: 14px; margin-bottom: 4px; }
figcaption small { display: block; font-weight: 400; color: var(--muted); }
.legend { display: flex; gap: 14px; flex-wrap: wrap; font-size: 12px; color: var(--muted); margin-top: 4px; }
.legend i { display: inline-block; width: 10px; height: 10px; border-radius: 3px; margin-right: 5px;
  vertical-align: -1px; }
svg.chart { width: 100%; height: auto; display: block; }
svg.chart .grid { stroke: #eaecf0; stroke-width: 1; }
svg.chart .axis { stroke: #98a2b3; stroke-width: 1; }
svg.chart .tick, svg.chart .sublabel { font-size: 10px; fill: #667085; }
svg.chart .label { font-size: 12px; fill: #1f2430; font-weight: 600; }
svg.chart .value { font-size: 9px; fill: #475467; }
svg.chart .line { fill: none; stroke-width: 2.5; }
.score { display: inline-block; min-width: 52px; text-align: center; padding: 2px 8px; border-radius: 6px;
  font-weight: 600; font-variant-numeric: tabular-nums; }
.score.good { background: #d1fadf; color: #05603a; } .score.mid { background: #fef0c7; color: #93370d; }
.score.bad { background: #fee4e2; color: #912018; } .score.err { background: #f2f4f7; color: #344054; }
.score.mini { min-width: 0; font-size: 11px; padding: 1px 6px; margin-left: 6px; font-weight: 600; }
figure table th, figure table td { padding: 6px 5px; font-size: 13px; }
figure { overflow-x: auto; }
h4 { margin: 14px 0 4px; font-size: 15px; }
details { border: 1px solid var(--line); border-radius: 10px; margin: 8px 0; background: #fcfcfd; }
details > summary { cursor: pointer; padding: 9px 12px; font-weight: 600; list-style-position: inside; }
details[open] > summary { border-bottom: 1px solid var(--line); }
details .body { padding: 10px 14px; }
details details { background: #fff; }
ul.checks { list-style: none; padding: 0; margin: 6px 0; font-size: 14px; }
ul.checks li { padding: 3px 0; }
.mark { display: inline-block; width: 20px; text-align: center; font-weight: 700; }
.passed .mark { color: var(--good); } .failed .mark { color: var(--bad); } .errored .mark { color: #7a5af8; }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; }
pre { white-space: pre-wrap; word-break: break-word; background: #f8f9fc; border: 1px solid var(--line);
  border-radius: 8px; padding: 8px 10px; margin: 4px 0 10px; }
.msg { margin: 6px 0; }
.role { font-size: 11px; font-weight: 700; text-transform: uppercase; letter-spacing: .05em; color: var(--muted); }
.role.assistant { color: var(--accent); }
pre.reasoning { background: #f4f3ff; color: #4a4a68; font-style: italic; }
.facts { color: var(--muted); font-size: 12px; }
.pill { display: inline-block; font-size: 11px; padding: 1px 7px; border-radius: 999px; background: #f2f4f7;
  color: #344054; margin-left: 6px; font-weight: 600; }
table.runs { width: auto; margin: 6px 0 8px; }
table.runs th.run, table.runs td.run { text-align: center; padding: 4px 10px; }
table.runs .score.mini { margin-left: 0; }
details.run > summary { font-weight: 500; }
footer { text-align: center; color: var(--muted); font-size: 12px; margin-top: 30px; }
"""
