"""Merging shards: the histories of ``tsuka run --shard I/N`` runs made into one store and one history run.

Each shard's last recorded run is read; together they must be every shard
``1/N`` to ``N/N`` of one measurement (the same suite, models, efforts,
settings, backend and server, and the same model behind it as the server
described it: kind, build, model file; the concurrency may differ), each finished
(a shard still running, interrupted or abandoned is named and refused), each
holding only the tests its ``I/N`` owns. Their levels, every shard's, are
joined test by test whatever the order the shards are given in, and judged
again from the recorded answers with the whole suite (by default the one the
shards recorded), exactly as ``tsuka rescore`` does, so the scores, intervals,
tiers and speeds equal those of one unsharded run that got the same answers.
Anything else is refused in one line, before anything is written. Shards
measured against different servers are one run only when the user says they
are replicas of one server (``replicas``): the provider then lists each.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from tsuka_core.backends.base import ServerFacts
from tsuka_core.errors import UsageError
from tsuka_core.run.rescore import RescoreResult, judge_recording, store_rescored
from tsuka_core.storage.history_query import StoredLevel, StoredRun, load_run
from tsuka_core.storage.store import ProfileStore
from tsuka_core.suite.model import Suite
from tsuka_core.suite.shard import Shard, parse_shard

__all__ = ["MergeResult", "merge_shards", "shard_history", "shard_runs"]

_FREE_SETTINGS = ("shard", "concurrency")
"""Settings the shards of one measurement may differ in."""
_UNFINISHED = ("running", "interrupted", "abandoned")
"""Run statuses of a shard that did not finish: its levels are partial."""


@dataclass(frozen=True)
class MergeResult:
    """The merged levels, judged, and the shards they came from (``file: run``)."""

    result: RescoreResult
    sources: list[str]


def shard_history(source: Path) -> Path:
    """The history file of ``source``: itself, or the ``.tsuka/history.sqlite`` (or ``history.sqlite``) in it."""
    if source.is_dir():
        for candidate in (source / ".tsuka" / "history.sqlite", source / "history.sqlite"):
            if candidate.is_file():
                return candidate
        raise UsageError(f"{source}: no .tsuka/history.sqlite or history.sqlite in this folder")
    if not source.is_file():
        raise UsageError(f"{source}: no such file or folder")
    return source


def shard_runs(sources: Sequence[Path]) -> list[tuple[str, StoredRun]]:
    """The last run of each source's history, with where it was read."""
    return [(str(path), load_run(path, "last")) for path in map(shard_history, sources)]


def merge_shards(
    runs: Sequence[tuple[str, StoredRun]],
    suite: Suite,
    store_path: Path,
    history: Path,
    *,
    replicas: bool = False,
) -> MergeResult:
    """Join the shards' runs into one, judge it with ``suite``, store and record it.

    Nothing is stored when some test of a level has no recorded answer (a
    shard that failed it): ``result.live`` names them, as for a rescore.
    ``replicas`` lets shards measured against different servers merge (each
    provider is listed).
    """
    store = ProfileStore(store_path)
    store.read()
    joined = _joined(runs, suite, replicas=replicas)
    result = judge_recording(joined, suite)
    if result.ok:
        options = {k: v for k, v in joined.options.items() if k not in _FREE_SETTINGS}
        options["mergedFrom"] = [f"{where}: run {run.id}" for where, run in runs]
        store_rescored(result, store, history, kind="merge", options=options)
    return MergeResult(result, [f"{where}: run {run.id} (shard {run.options.get('shard')})" for where, run in runs])


def _joined(runs: Sequence[tuple[str, StoredRun]], suite: Suite, *, replicas: bool = False) -> StoredRun:
    """One run holding every shard's tests, level by level; a UsageError for shards that are not one measurement."""
    if not runs:
        raise UsageError("tsuka merge needs the folders or history files of the shards")
    unfinished = [f"{where} (run {run.id} is {run.status})" for where, run in runs if run.status in _UNFINISHED]
    if unfinished:
        raise UsageError(f"cannot merge shards that did not finish: {'; '.join(unfinished)}; run them again")
    shards = sorted(((where, run, _shard_of(where, run)) for where, run in runs), key=lambda s: s[2][0])
    count = shards[0][2][1]
    seen = [index for _, _, (index, _n) in shards]
    if any(n != count for _, _, (_i, n) in shards) or seen != list(range(1, count + 1)):
        said = ", ".join(f"{index}/{n}" for _, _, (index, n) in shards)
        missing = [f"{i}/{count}" for i in range(1, count + 1) if i not in seen]
        twice = sorted({f"{i}/{count}" for i in seen if seen.count(i) > 1})
        detail = "; ".join(part for part in (f"missing {', '.join(missing)}" if missing else "",
                                            f"given twice {', '.join(twice)}" if twice else "") if part)  # fmt: skip
        raise UsageError(f"cannot merge shards {said}{f' ({detail})' if detail else ''}: give each shard 1/N to N/N "
                         "of one measurement exactly once")  # fmt: skip
    first_where, first, _ = shards[0]
    for where, run, _ in shards[1:]:
        difference = _difference(first, run, replicas=replicas)
        if difference:
            raise UsageError(f"cannot merge {where} with {first_where}: {difference}")
    if first.suite_hash != suite.hash:
        raise UsageError(
            f"cannot merge: the shards measured suite {first.suite_hash}, and {suite.path} is {suite.hash}; "
            "give the suite they measured with --suite"
        )
    for where, run, (index, n) in shards:
        _check_owned(where, run, Shard(index, n))
    provider = " + ".join(dict.fromkeys(run.provider for _, run, _ in shards))
    levels = [replace(level, provider=provider) for level in _levels([run for _, run, _ in shards])]
    joined = replace(first, levels=tuple(levels), provider=provider)
    if not joined.levels:
        raise UsageError(f"cannot merge: no shard recorded any level ({', '.join(w for w, _, _ in shards)})")
    return joined


def _check_owned(where: str, run: StoredRun, shard: Shard) -> None:
    """UsageError naming a test the shard recorded that its ``I/N`` does not hold (a hand-made or damaged shard)."""
    for level in run.levels:
        stray = next((test.name for test in level.tests if not shard.holds(test.name)), None)
        if stray is not None:
            raise UsageError(
                f"cannot merge {where}: shard {shard} recorded test {stray!r} of {level.key}, which shard {shard} "
                "does not hold; its history is not that of a 'tsuka run --shard'"
            )


def _shard_of(where: str, run: StoredRun) -> tuple[int, int]:
    text = run.options.get("shard")
    if run.kind != "run" or not isinstance(text, str):
        raise UsageError(f"cannot merge {where}: its last run ({run.id}) is not a 'tsuka run --shard I/N'")
    try:
        shard = parse_shard(text)
    except UsageError:
        raise UsageError(f"cannot merge {where}: its last run ({run.id}) records a damaged shard {text!r}") from None
    return shard.index, shard.count


def _difference(one: StoredRun, other: StoredRun, *, replicas: bool = False) -> str | None:
    """What makes two shards' runs parts of different measurements, on one line; None when nothing does."""
    if one.suite_hash != other.suite_hash:
        return f"they measured different suites ({one.suite_hash}, {other.suite_hash})"
    if one.backend != other.backend:
        return f"they were measured with different backends ({one.backend}, {other.backend})"
    if one.provider != other.provider and not replicas:
        return (
            f"they were measured against different servers ({one.provider}; {other.provider}); "
            "when these are replicas of one server, say so with --replicas"
        )
    if list(one.models) != list(other.models) or list(one.efforts) != list(other.efforts):
        return f"they measured different models or efforts ({_what(one)}; {_what(other)})"
    mine, theirs = _settings(one.options), _settings(other.options)
    changed = sorted(k for k in mine.keys() | theirs.keys() if mine.get(k) != theirs.get(k))
    if changed:
        return f"they were run with different settings ({', '.join(changed)})"
    return _other_model(one, other)


def _other_model(one: StoredRun, other: StoredRun) -> str | None:
    """How the server behind two shards' levels said it served another model (its file, build or kind)."""
    served = {level.key: _identity(level) for level in one.levels}
    for level in other.levels:
        mine, theirs = served.get(level.key), _identity(level)
        if mine is not None and mine != theirs:
            changed = sorted(k for k in mine.keys() | theirs.keys() if mine.get(k) != theirs.get(k))
            said = "; ".join(f"{k} {mine.get(k)!r} and {theirs.get(k)!r}" for k in changed)
            return f"the server served another model for {level.key} ({said}): they are different measurements"
    return None


def _identity(level: StoredLevel) -> dict[str, str]:
    return ServerFacts.from_profile(level.record.server).identity


def _what(run: StoredRun) -> str:
    return f"{', '.join(run.models)} at {', '.join(run.efforts)}"


def _settings(options: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in options.items() if k not in _FREE_SETTINGS}


def _levels(runs: Sequence[StoredRun]) -> list[StoredLevel]:
    """Every level any shard recorded (in the shards' order, then their own), with every shard's tests of it.

    A level only some shards recorded (the others' server refused the model, say) is kept: its missing tests
    then make the merge store nothing and name them.
    """
    levels: list[StoredLevel] = []
    for run in runs:
        for level in run.levels:
            if any(_same(level, kept) for kept in levels):
                continue
            tests = [t for shard in runs for other in shard.levels if _same(other, level) for t in other.tests]
            levels.append(replace(level, tests=tuple(tests)))
    return levels


def _same(one: StoredLevel, other: StoredLevel) -> bool:
    return (one.name or one.model, one.effort, one.endpoint) == (
        other.name or other.model,
        other.effort,
        other.endpoint,
    )
