"""A run leaves only the store and .tsuka/ in the user's folder; ``tsuka init`` suggests ignoring .tsuka/."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from answerers import perfect
from history_helpers import invoke
from loopback import LoopbackServer


def test_a_run_in_a_fresh_folder_leaves_no_lock_file_beside_the_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with LoopbackServer(perfect, models=["alpha"]) as server:
        result = invoke("run", "alpha", "--base-url", server.base_url, "-e", "none")
    assert result.exit_code == 0, result.stderr
    assert sorted(os.listdir(tmp_path)) == [".tsuka", "models_profile.json"]
    assert sorted(os.listdir(tmp_path / ".tsuka")) == ["history.sqlite", "models_profile.json.lock"]


def test_init_suggests_ignoring_tsuka_unless_gitignore_has_it(tmp_path: Path) -> None:
    result = invoke("init", "--config", tmp_path / "tsuka.toml")
    assert result.exit_code == 0, result.stderr
    assert "to keep them out of git: echo '.tsuka/' >> .gitignore" in result.stderr
    (tmp_path / ".gitignore").write_text("__pycache__/\n/.tsuka/\n", encoding="utf-8")
    result = invoke("init", "--config", tmp_path / "other.toml")
    assert result.exit_code == 0, result.stderr
    assert ".gitignore" not in result.stderr
