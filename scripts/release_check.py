"""Build sitegen's release files once and check them as users will install them.

The release workflow (.github/workflows/release.yml) runs this; so does tests/test_release.py.

    python scripts/release_check.py build --out dist [--tag v0.1.0] [--deps-from PURELIB]
        builds the sdist, then the wheel from the sdist (`python -m build`, from a clean copy
        of the tree), runs `twine check --strict` on both, installs the wheel into a fresh
        virtual environment and runs `sitegen init` and `sitegen build --demo` there, away
        from the source tree. --tag fails unless it is v<version>. --deps-from takes
        sitegen's dependencies from that site-packages folder (the tests' own) instead of
        the package index.

    python scripts/release_check.py test-installed --dist dist
        installs the wheel with its test extras into a fresh virtual environment and runs
        the test suite against it, from a copy of the tree without the `sitegen/` sources.

It never uploads anything and never writes outside --out and its temporary folders.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: What a release is not built from: environments, caches and build leftovers.
NOT_SOURCE = shutil.ignore_patterns(".git", ".venv", ".ci-venv", "build", "dist", "*.egg-info",
                                    "__pycache__", ".*_cache", ".hypothesis", ".sitegen", "_site",
                                    "node_modules", "._site.sitegen-*")
#: Tests that build sitegen from the source tree themselves: the `build` step's business.
BUILDS_FROM_SOURCE = ["tests/test_wheel.py", "tests/test_ci_workflows.py",
                      "tests/test_release.py", "tests/test_install_kinds.py"]


class CheckFailed(Exception):
    """One check of the release failed; the message says which and why."""


def run(argv: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    """Run *argv*, echoing it; CheckFailed with its output when it fails."""
    print("+", " ".join(argv), flush=True)
    done = subprocess.run(argv, capture_output=True, text=True, check=False,
                          timeout=1800, **kwargs)  # type: ignore[call-overload]
    if done.returncode != 0:
        raise CheckFailed(f"{argv[0]} {' '.join(argv[1:3])} exited {done.returncode}:\n"
                          f"{done.stdout}{done.stderr}")
    return done


def project_version() -> str:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return str(data["project"]["version"])


def build(out: Path) -> tuple[Path, Path]:
    """The sdist and the wheel built from it, into *out* (which must hold no other release)."""
    out.mkdir(parents=True, exist_ok=True)
    if list(out.glob("sitegen_cas-*")):
        raise CheckFailed(f"{out} already holds release files: empty it first")
    with tempfile.TemporaryDirectory(prefix="sitegen-source-") as folder:
        source = Path(folder) / "sitegen"
        shutil.copytree(ROOT, source, ignore=NOT_SOURCE)
        run([sys.executable, "-m", "build", "--outdir", str(out), str(source)])
    sdists, wheels = sorted(out.glob("sitegen_cas-*.tar.gz")), sorted(out.glob("sitegen_cas-*.whl"))
    if len(sdists) != 1 or len(wheels) != 1:
        raise CheckFailed(f"expected one sdist and one wheel in {out}, found "
                          f"{[p.name for p in [*sdists, *wheels]]}")
    run([sys.executable, "-m", "twine", "check", "--strict", str(sdists[0]), str(wheels[0])])
    return sdists[0], wheels[0]


def fresh_env(folder: Path) -> Path:
    """A new virtual environment with pip; returns its python."""
    venv.EnvBuilder(with_pip=True).create(folder)
    return folder / "bin" / "python"


def purelib(python: Path) -> Path:
    return Path(run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]
                    ).stdout.strip())


def clean_env() -> dict[str, str]:
    """The environment for commands run from the installed wheel: no sitegen settings."""
    return {k: v for k, v in os.environ.items()
            if not k.startswith("SITEGEN_") and k != "PYTHONPATH"}


def smoke(wheel: Path, deps_from: Path | None, work: Path) -> None:
    """The wheel in a fresh environment: its `sitegen` runs init and build --demo."""
    python = fresh_env(work / "venv")
    if deps_from is not None:
        (purelib(python) / "sitegen-deps.pth").write_text(f"{deps_from}\n", encoding="utf-8")
        run([str(python), "-m", "pip", "install", "-q", "--no-deps", str(wheel)])
    else:
        run([str(python), "-m", "pip", "install", "-q", str(wheel)])
    env = clean_env()
    located = run([str(python), "-c", "import sitegen; print(sitegen.__file__)"],
                  cwd=str(work), env=env).stdout
    if not Path(located.strip()).is_relative_to(work / "venv"):
        raise CheckFailed(f"sitegen was imported from {located.strip()}, not the wheel")
    sitegen = str(python.parent / "sitegen")
    version = run([sitegen, "--version"], cwd=str(work), env=env).stdout
    if project_version() not in version:
        raise CheckFailed(f"the installed sitegen says {version.strip()!r}")
    site = work / "site"
    run([sitegen, "init", str(site)], cwd=str(work), env=env)
    run([sitegen, "build", "--demo"], cwd=str(site), env=env)
    for name in ("index.html", "feed.xml", "sitemap.xml"):
        if not (site / "_site" / name).is_file():
            raise CheckFailed(f"build --demo from the wheel wrote no _site/{name}")
    print(f"ok: {wheel.name} installs and builds the demo", flush=True)


def test_installed(dist: Path, work: Path) -> None:
    """The test suite, run against the wheel installed with its test extras."""
    (wheel,) = sorted(dist.glob("sitegen_cas-*.whl"))
    python = fresh_env(work / "venv")
    run([str(python), "-m", "pip", "install", "-q", f"{wheel.resolve()}[test]"])
    tree = work / "tree"
    shutil.copytree(ROOT, tree, ignore=shutil.ignore_patterns(
        "sitegen", ".git", ".venv", ".ci-venv", "build", "dist", "*.egg-info", "__pycache__",
        ".*_cache", "node_modules"))
    if (ROOT / "node_modules").is_dir():
        (tree / "node_modules").symlink_to(ROOT / "node_modules")
    ignored = [f"--ignore={name}" for name in BUILDS_FROM_SOURCE]
    print("+ pytest against the installed wheel", flush=True)
    done = subprocess.run([str(python), "-m", "pytest", "-q", "-n", "4", "-p", "no:cacheprovider",
                           *ignored], cwd=tree, env=clean_env(), check=False, timeout=3600)
    if done.returncode != 0:
        raise CheckFailed(f"the test suite failed against the installed wheel "
                          f"(exit {done.returncode})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    steps = parser.add_subparsers(dest="step", required=True)
    make = steps.add_parser("build", help="build, twine check, install and build the demo")
    make.add_argument("--out", type=Path, default=ROOT / "dist")
    make.add_argument("--tag", help="the release tag, which must be v<version>")
    make.add_argument("--deps-from", type=Path, metavar="PURELIB")
    tested = steps.add_parser("test-installed", help="the test suite against the wheel")
    tested.add_argument("--dist", type=Path, default=ROOT / "dist")
    options = parser.parse_args(argv)
    try:
        if options.step == "build":
            if options.tag is not None and options.tag != f"v{project_version()}":
                raise CheckFailed(f"the tag {options.tag} is not v{project_version()}, the "
                                  "version in pyproject.toml: tag the commit that sets it")
            _, wheel = build(options.out.resolve())
            with tempfile.TemporaryDirectory(prefix="sitegen-smoke-") as folder:
                smoke(wheel, options.deps_from, Path(folder))
        else:
            with tempfile.TemporaryDirectory(prefix="sitegen-installed-") as folder:
                test_installed(options.dist.resolve(), Path(folder))
    except CheckFailed as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
