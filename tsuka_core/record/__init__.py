"""The one record of a measured level, as the profile store and the history keep it (``record.level``)."""

from tsuka_core.record.lenient import Lenient
from tsuka_core.record.level import BENCHMARK_VERSION, TSUKA_FIELDS, LevelRecord, TestRuns

__all__ = ["BENCHMARK_VERSION", "TSUKA_FIELDS", "Lenient", "LevelRecord", "TestRuns"]
