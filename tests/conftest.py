"""Shared fixtures: the registry of installed plugins and the suites on disk."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

import tsuka_core

ROOT = Path(__file__).resolve().parents[1]
"""The project folder (the one holding ``benchmarks/``)."""
REFERENCE_ENV = "TSUKA_REFERENCE_SUITE"


@pytest.fixture(scope="session")
def registry() -> tsuka_core.Registry:
    """Every installed check type and backend."""
    return tsuka_core.load_registry()


@pytest.fixture(scope="session")
def default_suite() -> Path:
    """The default suite as installed (in a source checkout, the project's ``benchmarks/``)."""
    from tsuka_core.suite.loading import default_suite_path

    return default_suite_path()


@pytest.fixture(scope="module")
def suite(registry: tsuka_core.Registry, default_suite: Path) -> tsuka_core.Suite:
    """The project's own suite, loaded with the registry in use (a test module may narrow ``registry``)."""
    from tsuka_core.suite.loading import load_suite

    return load_suite(default_suite, registry)


@pytest.fixture
def fast_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    """Retries without waiting, and no base URL, key, store or history taken from the environment."""
    from tsuka_core.backends import http

    monkeypatch.setattr(http, "BACKOFF_BASE", 0.001)
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "TSUKA_PROFILES", "TSUKA_HISTORY"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="session")
def reference_suite() -> Path:
    """The reference fixture folder (``$TSUKA_REFERENCE_SUITE``, else ``../shared/reference/tsuka-benchmarks``)."""
    path = Path(os.environ.get(REFERENCE_ENV) or ROOT.parent / "shared" / "reference" / "tsuka-benchmarks")
    if not any(path.glob("*.json")):
        pytest.skip(
            f"compares tsuka with the TypeScript TSUKA's own seven test files, which tsuka does not ship; "
            f"to run it, set {REFERENCE_ENV} to a folder holding them"
        )
    return path


REQUIRED = {
    "model": "TSUKA_REQUIRE_MODEL",
    "browser": "TSUKA_REQUIRE_BROWSER",
    "bfcl": "TSUKA_REQUIRE_BFCL",
    "ifeval": "TSUKA_REQUIRE_IFEVAL",
}
"""Markers whose skips become failures when their variable is 1 (CI sets them all)."""


def pytest_configure(config: pytest.Config) -> None:
    """Give every test, and every tsuka process a test starts, a cache of its own (BFCL's converted suites)."""
    import tempfile

    del config
    os.environ["TSUKA_CACHE"] = tempfile.mkdtemp(prefix="tsuka-test-cache-")


FULL_ENV = "TSUKA_FULL_TESTS"
"""Set to 1 to run the ``heavy`` tests too (CI does): the model on whole suites, llama-server, package installs."""
HEAVY_REASON = (
    f"heavy (runs the model on a whole suite, starts llama-server, or builds and installs packages): "
    f"set {FULL_ENV}=1 to run it too (CI does)"
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Marks ``heavy`` every test that builds the example packages (the ``venv`` fixture); without
    ``TSUKA_FULL_TESTS=1`` the heavy tests are skipped, saying how to run them."""
    del config
    for item in items:
        if "venv" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.heavy)
    if os.environ.get(FULL_ENV) == "1":
        return
    for item in items:
        if item.get_closest_marker("heavy"):
            item.add_marker(pytest.mark.skip(reason=HEAVY_REASON))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """With ``TSUKA_REQUIRE_MODEL=1`` (``_BROWSER``, ``_BFCL``), a skipped ``model`` (``browser``, ``bfcl``) test
    fails."""
    report = yield
    heavy_left_out = item.get_closest_marker("heavy") is not None and os.environ.get(FULL_ENV) != "1"
    for marker, env in REQUIRED.items():
        if report.skipped and not heavy_left_out and item.get_closest_marker(marker) and os.environ.get(env) == "1":
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
            report.outcome = "failed"
            report.longrepr = f"{env}=1 but this {marker} test was skipped: {reason}"
    return report


@pytest.fixture(scope="session")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 (subjectAltName included) and its key, made with openssl."""
    import shutil
    import subprocess

    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is needed to make a certificate")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    command = ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1"]
    command += ["-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)]
    try:
        subprocess.run(command, check=True, capture_output=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        pytest.skip("openssl cannot make a certificate here")
    return cert, key
