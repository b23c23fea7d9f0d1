"""The engine: running a suite's tests against a backend at each effort level, and what a level found.

Its face: :func:`~tsuka_core.engine.sweep.sweep_models` and the result types of ``results``
(``LevelResult``, ``TestResult``...); the runner, first-request gate, speed metrics, answer-fault labels,
confidence bootstrap and task groups are behind it.
"""
