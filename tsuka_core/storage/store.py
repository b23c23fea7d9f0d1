"""Everything about ``models_profile.json``: what a profile holds, when it is valid, how it is written safely."""

from __future__ import annotations

import errno
import json
import os
import re
import secrets
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from tsuka_core.errors import StoreError
from tsuka_core.judge.jsontools import loads_strict
from tsuka_core.record.level import TSUKA_FIELDS
from tsuka_core.storage.files import check_store_link, make_folders, read_regular_file
from tsuka_core.storage.layout import dumps_store
from tsuka_core.storage.profile import BENCHMARK_VERSION, Profile
from tsuka_core.storage.suite_sections import SUITE_PROFILES, SUITE_RECOMMENDATIONS, place, sections, upgrade
from tsuka_core.suite.identity import DEFAULT_SUITE
from tsuka_core.terms import EFFORTS, PROFILES_ENV, Effort

__all__ = [
    "BENCHMARK_VERSION",
    "DEFAULT_LOCK_TIMEOUT",
    "PROFILE_FIELDS",
    "ProfileStore",
    "StoreData",
    "default_store_path",
    "dumps_store",
    "profile_key",
    "profile_status",
    "store_path",
]

DEFAULT_LOCK_TIMEOUT = 30.0
"""Seconds a write waits for another run's lock on the store."""

PROFILE_FIELDS: tuple[str, ...] = TSUKA_FIELDS
"""The profile fields of the TypeScript TSUKA, in the order they are written; this engine's own follow."""

_FIX = "nothing was written. Fix or move the file."


def profile_key(model: str, effort: str) -> str:
    """The store key of one model at one effort: ``model@effort``."""
    return f"{model}@{effort}"


def default_store_path() -> Path:
    """``$TSUKA_PROFILES`` when set and not empty, else ``models_profile.json`` here; ``~`` expanded."""
    return Path(os.environ.get(PROFILES_ENV) or "models_profile.json").expanduser()


def store_path(given: str | os.PathLike[str] | None = None) -> Path:
    """The profile store every command and ``allowed_tools()`` use: ``given`` (``~`` expanded) when it is not
    empty, else :func:`default_store_path`."""
    text = "" if given is None else os.fspath(given)
    return Path(text).expanduser() if text else default_store_path()


# --- profiles -------------------------------------------------------------------------------------------------------


def profile_status(profile: Profile | object, suite_hash: str) -> tuple[bool, str]:
    """Whether a stored profile (parsed, or any JSON value) may be used with the suite hashed ``suite_hash``.

    ``(True, "valid")``; ``(False, "stale: ...")`` naming what differs; ``(False, "not a profile")``.
    """
    return (profile if isinstance(profile, Profile) else Profile.parse(profile)).status(suite_hash)


# --- the file -------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StoreData:
    """One suite's profiles (parsed) and recommendations in file order, the other suites', and the file as read."""

    profiles: Mapping[str, Profile]
    """Every entry of this suite's profiles, parsed; check one with :meth:`Profile.status` before trusting it."""
    recommendations: Mapping[str, Any]
    raw: dict[str, Any]
    """The top-level object; unknown keys (and every profile as stored) are kept as they are on every write."""
    suite: str = DEFAULT_SUITE
    """The suite these profiles were measured with: ``default``, a registered name or a folder."""
    others: Mapping[str, StoreData] = field(default_factory=dict, compare=False, repr=False)
    """The other suites' profiles, by suite (every view read from a file reaches every other)."""

    @classmethod
    def from_raw(cls, raw: Mapping[str, Any]) -> StoreData:
        """The store holding ``raw`` (its parts checked as objects), read as :func:`upgrade` would leave it."""
        found = sections(_upgraded(raw))
        siblings: dict[str, dict[str, StoreData]] = {suite: {} for suite in found}
        views = {
            suite: cls({str(k): Profile.parse(v) for k, v in profiles.items()}, recs, dict(raw), suite, siblings[suite])
            for suite, (profiles, recs) in found.items()
        }
        for suite, others in siblings.items():  # every view reaches the others (a tier suite's the toolcount one)
            others.update((name, view) for name, view in views.items() if name != suite)
        return views[DEFAULT_SUITE]

    def for_suite(self, suite: str) -> StoreData:
        """The profiles and recommendations of ``suite`` (empty when the store holds none)."""
        if suite == self.suite:
            return self
        return self.others.get(suite) or StoreData({}, {}, self.raw, suite, {self.suite: self, **self.others})

    def by_suite(self) -> list[StoreData]:
        """Each suite's view, this one first."""
        return [self, *self.others.values()]

    def recommendation(self, model: str) -> Effort | None:
        """The stored recommended effort of ``model``; None when absent or not a known level."""
        effort = self.recommendations.get(model)
        return next((e for e in EFFORTS if e == effort), None)

    def profile(self, model: str, effort: str) -> Profile | None:
        """The entry under ``model@effort`` (check it with :meth:`Profile.status`); None if absent."""
        return self.profiles.get(profile_key(model, effort))


def _upgraded(raw: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``raw`` with other suites' profiles moved out of ``profiles``; ``raw`` is left as it is."""
    copy = dict(raw)
    copy["profiles"] = dict(raw.get("profiles", {}))
    copy[SUITE_PROFILES] = {suite: dict(part) for suite, part in raw.get(SUITE_PROFILES, {}).items()}
    copy["recommendations"] = dict(raw.get("recommendations", {}))
    copy[SUITE_RECOMMENDATIONS] = {suite: dict(part) for suite, part in raw.get(SUITE_RECOMMENDATIONS, {}).items()}
    upgrade(copy)
    return copy


class ProfileStore:
    """``models_profile.json``: read it, or merge profiles into it under a lock with an atomic replace."""

    def __init__(self, path: str | os.PathLike[str], *, lock_timeout: float | None = None) -> None:
        self.path = Path(path)
        self._lock_timeout = lock_timeout
        self._target = Path(os.path.realpath(self.path))
        """The file written: a symbolic link's target is replaced, not the link."""

    @property
    def lock_timeout(self) -> float:
        """Seconds a write waits for the lock: the one given, else :data:`DEFAULT_LOCK_TIMEOUT` as it is now."""
        return DEFAULT_LOCK_TIMEOUT if self._lock_timeout is None else self._lock_timeout

    @property
    def lock_path(self) -> Path:
        """The lock file: ``.tsuka/<name>.lock`` in the store's folder, beside the history, out of the user's sight.

        It is kept, not removed after use: removing a lock file another writer
        may be waiting on would let two writers hold "the" lock at once. It is
        keyed by the store's resolved path, so every link to one store takes one lock.
        """
        return self._target.parent / ".tsuka" / f"{self._target.name}.lock"

    def read(self) -> StoreData:
        """The store's contents; an empty store when the file does not exist."""
        return _view(self._load(), self.path)

    def update(
        self,
        profiles: Mapping[str, Mapping[str, Any]],
        recommendations: Mapping[str, str],
        suite: str = DEFAULT_SUITE,
    ) -> None:
        """Put ``profiles`` and ``suite``'s ``recommendations`` in the store, keeping every other entry and the order.

        Each profile goes under the suite it names (:mod:`~tsuka_core.storage.suite_sections`); a store
        written before profiles were kept per suite is upgraded on the way.

        Raises StoreError, with nothing written, when the file is not a valid store, the lock cannot be
        taken within ``lock_timeout`` seconds, or the folder cannot be written.
        """
        if not profiles and not recommendations:
            return
        with self._locked():
            raw = self._load() or {}
            check_store_link(self.path, raw if self._target.exists() else None)
            _view(raw, self.path)
            upgrade(raw)
            place(raw, profiles, recommendations, suite)
            self._write(dumps_store(raw))

    def check_writable(self) -> None:
        """Raise StoreError now when a write would fail: a folder that cannot be made, a read-only folder or file.

        A run calls it before it measures anything, so that no measurement is
        made for a store that cannot take it. It creates the missing folders,
        and creates and removes a probe file beside the store; the store itself
        is not touched.
        """
        check_store_link(self.path, self._load())
        self._make_folder()
        folder = self._target.parent
        if self._target.exists() and not os.access(self._target, os.W_OK):
            raise StoreError(f"cannot write {self.path}: the file is read-only; nothing was written")
        probe = folder / f".{self._target.name}.{secrets.token_hex(6)}.probe"
        try:
            os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        except OSError as exc:
            raise StoreError(self._unwritable(exc)) from None
        with suppress(OSError):
            probe.unlink()

    def _load(self) -> dict[str, Any] | None:
        try:
            data = read_regular_file(self._target)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StoreError(f"{self.path} cannot be read ({exc.strerror or exc}); {_FIX}") from None
        try:
            value = loads_strict(data.decode("utf-8-sig"))
        except UnicodeDecodeError as exc:
            raise StoreError(f"{self.path} is not UTF-8 (byte {exc.start}); {_FIX}") from None
        except json.JSONDecodeError as exc:
            raise StoreError(f"{self.path} is not valid JSON (line {exc.lineno}, column {exc.colno}); {_FIX}") from None
        except ValueError as exc:
            raise StoreError(f"{self.path} is not valid JSON ({exc}); {_FIX}") from None
        if not isinstance(value, dict):
            raise StoreError(f"{self.path} does not hold a JSON object (found {_json_kind(value)}); {_FIX}")
        return value

    @contextmanager
    def _locked(self) -> Iterator[None]:
        self._make_folder()
        lock = FileLock(self.lock_path, timeout=self.lock_timeout)
        try:
            self.lock_path.parent.mkdir(exist_ok=True)  # never the store's own folder: a link's target's is not made
            lock.acquire()
        except Timeout:
            raise StoreError(
                f"cannot lock {self.lock_path} within {self.lock_timeout:g} s: another run is writing {self.path}; "
                "try again when it has finished"
            ) from None
        except OSError as exc:
            raise StoreError(self._unwritable(exc)) from None
        try:
            yield
        finally:
            lock.release()

    def _write(self, text: str) -> None:
        target = self._target
        if target.exists() and not os.access(target, os.W_OK):
            raise StoreError(f"cannot write {self.path}: the file is read-only; nothing was written")
        _remove_leftovers(target)
        temp = target.with_name(f".{target.name}.{secrets.token_hex(6)}.tmp")
        try:
            _write_synced(temp, text.encode("utf-8"), _mode_of(target))
            os.replace(temp, target)
        except OSError as exc:
            with suppress(OSError):
                temp.unlink()
            raise StoreError(self._unwritable(exc)) from None
        _sync_folder(target.parent)

    def _make_folder(self) -> None:
        """Create the store's missing folders (those of the path given: a link's target folder is never made)."""
        try:
            make_folders(self.path.parent)
        except OSError as exc:
            reason = f"cannot create its folder ({exc.strerror or exc})"
            raise StoreError(f"cannot write {self.path}: {reason}; nothing was written") from None

    def _unwritable(self, exc: OSError) -> str:
        folder = self._target.parent
        if exc.errno in {errno.EACCES, errno.EPERM, errno.EROFS}:
            return f"cannot write {self.path}: folder {folder} is not writable ({exc.strerror}); nothing was written"
        return f"cannot write {self.path} ({exc.strerror or exc}); nothing was written"


def _view(raw: dict[str, Any] | None, path: Path) -> StoreData:
    raw = {} if raw is None else raw
    for name in ("profiles", "recommendations", SUITE_PROFILES, SUITE_RECOMMENDATIONS):
        part = raw.get(name, {})
        if not isinstance(part, dict):
            raise StoreError(f'{path}: "{name}" is not a JSON object (found {_json_kind(part)}); {_FIX}')
        for suite, inner in part.items() if name in (SUITE_PROFILES, SUITE_RECOMMENDATIONS) else ():
            if not isinstance(inner, dict):
                found = _json_kind(inner)
                raise StoreError(f'{path}: "{name}" of suite {suite!r} is not a JSON object (found {found}); {_FIX}')
    return StoreData.from_raw(raw)


def _json_kind(value: object) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    return "a number" if isinstance(value, int | float) else "an object"


def _remove_leftovers(target: Path) -> None:
    """Delete temporary files that writers killed mid-write left beside ``target``.

    Safe only under the store's lock: every writer creates its temporary file
    while holding it, so any such file seen by the holder belongs to a dead writer.
    """
    pattern = re.compile(rf"\.{re.escape(target.name)}\.[0-9a-f]{{12}}\.tmp")
    with suppress(OSError):
        for entry in os.scandir(target.parent):
            if pattern.fullmatch(entry.name) and entry.is_file(follow_symlinks=False):
                with suppress(OSError):
                    os.unlink(entry.path)


def _mode_of(target: Path) -> int | None:
    try:
        return target.stat().st_mode & 0o7777
    except FileNotFoundError:
        return None


def _write_synced(temp: Path, data: bytes, mode: int | None) -> None:
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    if mode is not None:
        os.chmod(temp, mode)


def _sync_folder(folder: Path) -> None:
    """Make the rename itself durable where the platform allows it."""
    with suppress(OSError, AttributeError):
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
