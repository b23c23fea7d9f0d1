"""Comparing two measurements of the same tests: pairing their levels, the paired bootstrap, regressions.

Its face: :func:`~tsuka_core.compare.compute.compare` builds a :class:`~tsuka_core.compare.model.Comparison`
from two :mod:`~tsuka_core.compare.sides` (a recorded run or a stored profile); ``paired`` is the noise estimate.
"""
