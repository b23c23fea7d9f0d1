"""The plugin contract and the only code that calls hooks: hook specs, the plugin manager, the registry.

Its face: the markers and register callbacks of ``hookspecs`` and :func:`~tsuka_core.plugins.registry.load_registry`.
"""
