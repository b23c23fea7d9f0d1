"""The built-in plugin: check types, the two backends and the suites, found through the ``tsuka`` entry point."""
