"""Suites: the test-file format, loading a folder into a validated suite, its hash and identity.

Its face: :func:`~tsuka_core.suite.loading.load_suite`, :func:`~tsuka_core.suite.loading.suite_hash` and
:class:`~tsuka_core.suite.model.Suite`; ``identity`` tells which suite a stored profile was measured with.
"""
