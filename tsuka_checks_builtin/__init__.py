"""The built-in check types and backends of tsuka, registered through the ``tsuka`` entry point."""
