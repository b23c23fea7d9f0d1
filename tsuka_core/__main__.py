"""``python -m tsuka_core`` runs the ``tsuka`` command."""

from tsuka_core.cli import main

main()
