"""Check the wheel and sdist `uv build` wrote: what a user installs is the package the repository describes.

    python .ci/check_dist.py DIST             # CI: both files, their contents and metadata
    python .ci/check_dist.py DIST --release vX.Y.Z   # the release workflow: also the tag, the changelog, the URLs

Standard library only (it runs before anything is installed). Exits 1 listing every problem.
`twine check --strict` checks the metadata's form (the README renders); this checks its substance.
"""

from __future__ import annotations

import argparse
import email.parser
import re
import sys
import tarfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAME = "wirescript"
URLS = ("Homepage", "Documentation", "Source", "Changelog", "Issues")
"""The project URLs a published release must carry (`[project.urls]`)."""


def source_version() -> str:
    """`__version__` of the source tree (one place to bump: pyproject reads it too)."""
    found = re.search(r'^__version__ = "([^"]+)"$', (ROOT / "src" / NAME / "__init__.py").read_text("utf-8"), re.M)
    if found is None:
        raise SystemExit("src/wirescript/__init__.py has no __version__ line")
    return found.group(1)


def wheel_problems(path: Path, version: str) -> list[str]:
    """What is wrong with the wheel: its files, its entry points and its metadata."""
    problems = []
    with zipfile.ZipFile(path) as wheel:
        names = set(wheel.namelist())
        info = f"{NAME}-{version}.dist-info"
        for wanted in (
            f"{NAME}/__init__.py",
            f"{NAME}/py.typed",
            f"{NAME}/pytest_plugin.py",
            f"{info}/licenses/LICENSE",
        ):
            if wanted not in names:
                problems.append(f"{path.name}: {wanted} is missing")
        strays = sorted(n for n in names if not n.startswith((f"{NAME}/", f"{info}/")))
        if strays:
            problems.append(f"{path.name}: files outside the package: {', '.join(strays[:5])}")
        compiled = sorted(n for n in names if "__pycache__" in n or n.endswith(".pyc"))
        if compiled:
            problems.append(f"{path.name}: compiled files: {', '.join(compiled[:5])}")
        entry_points = wheel.read(f"{info}/entry_points.txt").decode() if f"{info}/entry_points.txt" in names else ""
        if f"{NAME} = {NAME}.pytest_plugin" not in entry_points:
            problems.append(f"{path.name}: the pytest11 entry point ({NAME} = {NAME}.pytest_plugin) is missing")
        if f"{NAME} = {NAME}.cli:main" not in entry_points:
            problems.append(f"{path.name}: the {NAME} console script is missing")
        metadata = wheel.read(f"{info}/METADATA").decode() if f"{info}/METADATA" in names else ""
    return problems + metadata_problems(path.name, metadata, version)


def sdist_problems(path: Path, version: str) -> list[str]:
    """What is wrong with the sdist: the files a build and the test suite need, and its metadata."""
    top = f"{NAME}-{version}"
    with tarfile.open(path) as sdist:
        names = set(sdist.getnames())
        metadata = sdist.extractfile(f"{top}/PKG-INFO").read().decode() if f"{top}/PKG-INFO" in names else ""  # type: ignore[union-attr]
    problems = [
        f"{path.name}: {wanted} is missing"
        for wanted in (
            "pyproject.toml",
            "LICENSE",
            "README.md",
            "CHANGELOG.md",
            f"src/{NAME}/py.typed",
            "tests/conftest.py",
        )
        if f"{top}/{wanted}" not in names
    ]
    return problems + metadata_problems(path.name, metadata, version)


def metadata_problems(where: str, text: str, version: str) -> list[str]:
    """What is wrong with a METADATA / PKG-INFO file."""
    if not text:
        return [f"{where}: no metadata"]
    metadata = email.parser.Parser().parsestr(text)
    problems = []
    expected = {"Name": NAME, "Version": version, "License-Expression": "MIT", "License-File": "LICENSE"}
    for field, value in expected.items():
        if metadata.get(field) != value:
            problems.append(f"{where}: {field} is {metadata.get(field)!r}, expected {value!r}")
    if metadata.get("Description-Content-Type") != "text/markdown" or "# wirescript" not in metadata.get_payload():
        problems.append(f"{where}: the long description is not the README (text/markdown)")
    classifiers = metadata.get_all("Classifier") or []
    for wanted in ("Typing :: Typed", "Framework :: Pytest"):
        if wanted not in classifiers:
            problems.append(f"{where}: the classifier {wanted!r} is missing")
    supported = sorted(
        c.rsplit(" ", 1)[1] for c in classifiers if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)
    )
    requires = metadata.get("Requires-Python") or ""
    if not supported or requires != f">={supported[0]}":
        problems.append(f"{where}: Requires-Python is {requires!r}, but the oldest classifier is {supported[:1]}")
    return problems


def release_problems(tag: str, version: str, urls: list[str]) -> list[str]:
    """What stops `tag` from being published: the tag, `__version__` and the changelog agree, and the URLs are there."""
    problems = []
    if tag != f"v{version}":
        problems.append(f"the tag {tag!r} does not name the version being built (v{version}, from __version__)")
    changelog = (ROOT / "CHANGELOG.md").read_text("utf-8")
    if not re.search(rf"^## \[{re.escape(version)}\] - \d{{4}}-\d{{2}}-\d{{2}}$", changelog, re.M):
        problems.append(f"CHANGELOG.md has no '## [{version}] - YYYY-MM-DD' section: move [Unreleased] there first")
    labels = {url.split(",", 1)[0].strip() for url in urls}
    missing = [label for label in URLS if label not in labels]
    if missing:
        problems.append(f"the metadata has no project URL for {', '.join(missing)}: add them to [project.urls]")
    return problems


def main(argv: list[str] | None = None) -> int:
    """Check the directory's wheel and sdist (and, with --release, that its tag may be published)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dist", type=Path, help="the directory uv build wrote")
    parser.add_argument("--release", metavar="TAG", help="also check that TAG may be published")
    args = parser.parse_args(argv)
    version = source_version()
    wheels = sorted(args.dist.glob(f"{NAME}-*.whl"))
    sdists = sorted(args.dist.glob(f"{NAME}-*.tar.gz"))
    problems = []
    if [w.name for w in wheels] != [f"{NAME}-{version}-py3-none-any.whl"]:
        problems.append(
            f"{args.dist}: expected one wheel {NAME}-{version}-py3-none-any.whl, found {[w.name for w in wheels]}"
        )
    if [s.name for s in sdists] != [f"{NAME}-{version}.tar.gz"]:
        problems.append(f"{args.dist}: expected one sdist {NAME}-{version}.tar.gz, found {[s.name for s in sdists]}")
    for wheel in wheels:
        problems += wheel_problems(wheel, version)
    for sdist in sdists:
        problems += sdist_problems(sdist, version)
    if args.release is not None:
        urls: list[str] = []
        if wheels:
            with zipfile.ZipFile(wheels[0]) as wheel:
                text = wheel.read(f"{NAME}-{version}.dist-info/METADATA").decode()
            urls = email.parser.Parser().parsestr(text).get_all("Project-URL") or []
        problems += release_problems(args.release, version, urls)
    for problem in problems:
        print(f"check_dist: {problem}", file=sys.stderr)
    if not problems:
        print(f"check_dist: {', '.join(p.name for p in [*wheels, *sdists])}: ok")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
