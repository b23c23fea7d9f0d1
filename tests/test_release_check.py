"""The release check's own gate: a wheel without what tsuka needs at run time, or of another version, is refused."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from devtools import release_check


def wheel(folder: Path, version: str, names: tuple[str, ...]) -> Path:
    path = folder / f"tsuka-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for name in names:
            archive.writestr(name, "")
    return path


def test_a_wheel_holding_every_file_tsuka_needs_passes(tmp_path: Path) -> None:
    files = tuple(p if not p.endswith("/") else p + "01.json" for p in release_check.IN_THE_WHEEL)
    release_check.check_contents(wheel(tmp_path, "9.1.0", files), "9.1.0")


@pytest.mark.parametrize("left_out", release_check.IN_THE_WHEEL)
def test_a_wheel_without_one_of_them_is_refused_naming_it(tmp_path: Path, left_out: str) -> None:
    files = tuple(p if not p.endswith("/") else p + "01.json" for p in release_check.IN_THE_WHEEL if p != left_out)
    with pytest.raises(release_check.StepFailed, match=f"lacks {left_out}"):
        release_check.check_contents(wheel(tmp_path, "9.1.0", files), "9.1.0")


def test_a_wheel_of_another_version_is_refused(tmp_path: Path) -> None:
    with pytest.raises(release_check.StepFailed, match=r"tsuka-9\.0\.0-py3-none-any\.whl is not version 9\.1\.0"):
        release_check.check_contents(wheel(tmp_path, "9.0.0", release_check.IN_THE_WHEEL), "9.1.0")


def test_the_templates_the_embedded_backend_serves_are_among_what_a_wheel_must_hold() -> None:
    from tsuka_core.backends.llama_runtime import TOOL_TEMPLATES

    for name in TOOL_TEMPLATES.values():
        assert f"tsuka_core/backends/templates/{name}" in release_check.IN_THE_WHEEL
