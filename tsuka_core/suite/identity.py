"""Which suite judges a stored profile: the one named with ``--suite``, else the one it was measured with."""

from __future__ import annotations

from pathlib import Path

from tsuka_core.suite.loading import DEFAULT_SUITE, default_suite_path, registered_folders, suite_hash, suite_label

__all__ = ["DEFAULT_SUITE", "SuiteHashes", "suite_label"]


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
        registered = None if Path(named).is_absolute() else registered_folders(None).get(named)
        if registered is not None:
            return registered
        return Path(named) if Path(named).is_dir() else default_suite_path()

    def __call__(self, named: object) -> str:
        """The hash of the suite a profile naming the suite ``named`` is judged against."""
        folder = self.folder(named)
        if folder not in self._hashes:
            self._hashes[folder] = suite_hash(folder)
        return self._hashes[folder]
