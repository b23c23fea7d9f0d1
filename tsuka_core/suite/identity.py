"""Which suite judges a stored profile: the one named with ``--suite``, else the one it was measured with."""

from __future__ import annotations

from pathlib import Path

from tsuka_core.suite.loading import default_suite_path, suite_hash

__all__ = ["DEFAULT_SUITE", "SuiteHashes", "suite_label"]

DEFAULT_SUITE = "default"
"""What a profile's ``suite`` says when it was measured with the suite installed with tsuka."""


def suite_label(path: Path) -> str:
    """What a profile stores as its ``suite``: the name of a registered suite (``default`` for the installed
    one, ``extended``...) whose folder it is, else the folder's full path."""
    resolved = Path(path).resolve()
    if resolved == default_suite_path().resolve():
        return DEFAULT_SUITE
    return next((name for name, folder in _registered().items() if folder == resolved), str(resolved))


def _registered() -> dict[str, Path]:
    """Each registered suite's folder (resolved), by name."""
    from tsuka_core.plugins.registry import load_registry

    return {name: suite.path.resolve() for name, suite in load_registry().suites.items()}


class SuiteHashes:
    """The hash each profile is judged against: ``--suite``'s when given, else that of the suite it names.

    A profile names its suite by a registered name or by a folder's full path.
    One that names no suite (written before profiles named theirs, or by the
    TypeScript TSUKA), a name no plugin registers, or a folder that is gone, is
    judged against the installed suite. Each folder is hashed once.
    """

    def __init__(self, given: Path | None = None) -> None:
        self.given = given
        self._hashes: dict[Path, str] = {}

    def folder(self, named: object) -> Path:
        """The suite folder a profile naming the suite ``named`` (its ``suite`` field) is judged against."""
        if self.given is not None:
            return self.given
        if not isinstance(named, str) or not named or named == DEFAULT_SUITE:
            return default_suite_path()
        registered = None if Path(named).is_absolute() else _registered().get(named)
        if registered is not None:
            return registered
        return Path(named) if Path(named).is_dir() else default_suite_path()

    def __call__(self, named: object) -> str:
        """The hash of the suite a profile naming the suite ``named`` is judged against."""
        folder = self.folder(named)
        if folder not in self._hashes:
            self._hashes[folder] = suite_hash(folder)
        return self._hashes[folder]
