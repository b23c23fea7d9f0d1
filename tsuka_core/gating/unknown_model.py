"""What to tell a caller who asked for a model the store holds no profile of: a close name, or another suite's."""

from __future__ import annotations

import difflib

from tsuka_core.storage.store import StoreData

__all__ = ["close_names", "unknown_model_lines"]


def _models(view: StoreData) -> set[str]:
    """The models with an entry in ``view``: each profile's ``model``, else the key's part before ``@``."""
    return {p.model if p.model is not None else key.rpartition("@")[0] for key, p in view.profiles.items()}


def close_names(name: str, known: set[str], n: int = 3) -> list[str]:
    """The stored names ``name`` may have meant: close spellings (case aside), then names holding it or held in it."""
    by_folded = {k.casefold(): k for k in sorted(known)}
    folded = name.casefold()
    close = [by_folded[k] for k in difflib.get_close_matches(folded, list(by_folded), n=n, cutoff=0.6)]
    close += [k for f, k in by_folded.items() if len(folded) >= 3 and (folded in f or f in folded) and k not in close]
    return close[:n]


def unknown_model_lines(data: StoreData, model: str, suite: str) -> list[str]:
    """Nothing when ``suite``'s profiles name ``model``; else a did-you-mean, the suites that do, and the fallback.

    The last line always says that the model counts as ``small`` (the safe side): an unknown name is never
    an error, so a gate keeps working while a model is measured, but a typo is never silent.
    """
    view = data.for_suite(suite)
    known = _models(view)
    if model in known:
        return []
    lines: list[str] = []
    close = close_names(model, known)
    if close:
        lines.append(f"no profile of {model!r} for suite {suite}; did you mean {', '.join(map(repr, close))}?")
    others = [other for other in data.by_suite() if other.suite != suite]
    elsewhere = [other.suite for other in others if model in _models(other)]
    if elsewhere:
        lines.append(f"{model!r} has profiles for suite {', '.join(elsewhere)} only; choose it with --suite")
    elif not close:
        near = [(name, other.suite) for other in others for name in close_names(model, _models(other))]
        if near:
            named = ", ".join(f"{name!r} (suite {where})" for name, where in near[:3])
            lines.append(f"no profile of {model!r} for suite {suite}; did you mean {named}?")
    lines.append(f"{model!r} is not profiled for suite {suite}: treated as small, the safe side")
    return lines
