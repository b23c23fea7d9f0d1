"""Every file tsuka writes has its missing folders created (as pytest does); never through a link to nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from answerers import perfect
from history_helpers import invoke
from loopback import LoopbackServer

from tsuka_core.storage.files import make_folders


def test_a_run_creates_the_folders_of_every_file_it_writes(tmp_path: Path) -> None:
    out = tmp_path / "a" / "b"
    with LoopbackServer(perfect, models=["alpha"]) as server:
        result = invoke(
            "run", "all", "--base-url", server.base_url, "-e", "none",
            "--profiles", out / "store" / "models_profile.json", "--history-db", out / "db" / "history.sqlite",
            "--junit", out / "reports" / "junit.xml", "--json-file", out / "json" / "run.json",
        )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert "alpha@none" in json.loads((out / "store" / "models_profile.json").read_text(encoding="utf-8"))["profiles"]
    assert (out / "db" / "history.sqlite").is_file()
    assert (out / "reports" / "junit.xml").read_text(encoding="utf-8").startswith("<?xml")
    assert json.loads((out / "json" / "run.json").read_text(encoding="utf-8"))["levels"]

    result = invoke("report", "--history-db", out / "db" / "history.sqlite", "-o", out / "site" / "run.html")
    assert result.exit_code == 0, result.stderr
    assert (out / "site" / "run.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_report_through_a_folder_link_to_nothing_is_one_line_and_creates_nothing(tmp_path: Path) -> None:
    (tmp_path / "site").symlink_to(tmp_path / "elsewhere")
    with LoopbackServer(perfect, models=["alpha"]) as server:
        done = invoke("run", "all", "--base-url", server.base_url, "-e", "none", "--profiles", tmp_path / "p.json")
    assert done.exit_code == 0, done.stderr
    result = invoke("report", "--profiles", tmp_path / "p.json", "-o", tmp_path / "site" / "new" / "run.html")
    assert result.exit_code == 2
    (line,) = result.stderr.splitlines()
    assert "site is a symbolic link to" in line
    assert not (tmp_path / "elsewhere").exists()


def test_make_folders_follows_a_link_to_a_folder_and_refuses_a_file_in_the_way(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "linked").symlink_to(tmp_path / "real")
    make_folders(tmp_path / "linked" / "x" / "y")
    assert (tmp_path / "real" / "x" / "y").is_dir()
    (tmp_path / "file").write_text("", encoding="utf-8")
    with pytest.raises(OSError, match="file is a file, not a folder"):
        make_folders(tmp_path / "file" / "sub")
