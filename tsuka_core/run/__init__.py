"""What a program calls to measure: one run session, endpoint sweeps, the project file, rescoring.

Its face: :func:`~tsuka_core.run.session.run_benchmark` with :class:`~tsuka_core.run.session.RunOptions`,
:func:`~tsuka_core.run.endpoints.run_endpoints` for a project file's endpoints, and
:func:`~tsuka_core.run.rescore.rescore_run`; signal handling (``stopping``) keeps a stopped run's levels.
"""
