"""Backends: the plugins that talk to a model server (or run a model in-process)."""
