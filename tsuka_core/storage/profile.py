"""A stored profile as a typed model: the level record (``tsuka_core.record``), read field by field.

``Profile`` is :class:`~tsuka_core.record.level.LevelRecord` and ``StoredTestResult`` is
:class:`~tsuka_core.record.level.TestRuns`: the names these types had before a level had one record.
"""

from __future__ import annotations

from tsuka_core.record.lenient import Interval, Lenient, Number, Share
from tsuka_core.record.level import BENCHMARK_VERSION, LevelRecord, TestRuns

__all__ = ["BENCHMARK_VERSION", "Interval", "Lenient", "Number", "Profile", "Share", "StoredTestResult"]

Profile = LevelRecord
"""A stored profile: the level record."""
StoredTestResult = TestRuns
"""One entry of a profile's ``testResults``."""
