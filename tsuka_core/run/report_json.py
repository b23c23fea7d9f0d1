"""A run's result as JSON: what ``tsuka run --json`` prints and ``--json-file`` writes, for programs and CI."""

from __future__ import annotations

from typing import Any

from tsuka_core.engine.results import LevelResult
from tsuka_core.run.session import RunReport

__all__ = ["report_json"]


def report_json(report: RunReport) -> dict[str, Any]:
    """The run as JSON: the stored profiles exactly as stored, recommendations, failures, and check details."""
    return {
        "backend": report.backend,
        "provider": report.provider,
        "suite": str(report.suite.path),
        "testsHash": report.suite.hash,
        "profiles": report.profiles,
        "recommendations": report.recommendations,
        "failed": report.failed,
        **({"error": report.write_error} if report.write_error else {}),
        "notes": [note for swept in report.sweeps for note in swept.notes],
        "levels": [_level_json(level) for swept in report.sweeps for level in swept.levels],
    }


def _level_json(level: LevelResult) -> dict[str, Any]:
    return {
        "model": level.model,
        "reasoningEffort": level.effort,
        "effortApplied": level.effort_applied,
        "complete": level.complete,
        "tier": level.tier if level.measured_any else None,
        "scores": dict(level.scores),
        "repeats": level.repeats,
        "tests": [
            {
                "name": t.test.name,
                "category": t.test.category,
                "repeat": t.repeat,
                "status": t.status,
                "score": t.score,
                "error": t.error,
                "checks": [
                    {
                        "step": s.index,
                        "location": c.location,
                        "type": c.type,
                        "weight": c.weight,
                        "status": c.outcome.status,
                        "detail": c.outcome.detail,
                    }
                    for s in t.steps
                    for c in s.checks
                ],
            }
            for t in level.tests
        ],
    }
