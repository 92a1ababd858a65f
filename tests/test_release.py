"""The package and its release: .ci/check_dist.py refuses what it should, and the release workflow is wired right.

`.ci/package` (run by `.ci/run`) builds the real wheel and sdist, checks them with twine and
check_dist.py and installs the wheel into a fresh environment; here check_dist.py is held to refusing
each broken distribution, and the release workflow to publishing only from a tag, through trusted
publishing, after the same checks.
"""

from __future__ import annotations

import importlib.util
import io
import tarfile
import zipfile
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

import wirescript

ROOT = Path(__file__).resolve().parent.parent
VERSION = wirescript.__version__


def _check_dist() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_dist", ROOT / ".ci" / "check_dist.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


check_dist = _check_dist()

METADATA = f"""\
Metadata-Version: 2.4
Name: wirescript
Version: {VERSION}
License-Expression: MIT
License-File: LICENSE
Classifier: Framework :: Pytest
Classifier: Programming Language :: Python :: 3.11
Classifier: Programming Language :: Python :: 3.13
Classifier: Typing :: Typed
Requires-Python: >=3.11
Description-Content-Type: text/markdown

# wirescript
"""
ENTRY_POINTS = (
    "[console_scripts]\nwirescript = wirescript.cli:main\n\n[pytest11]\nwirescript = wirescript.pytest_plugin\n"
)


def make_wheel(dist: Path, *, leave_out: str = "", metadata: str = METADATA) -> Path:
    info = f"wirescript-{VERSION}.dist-info"
    files = {
        "wirescript/__init__.py": "",
        "wirescript/py.typed": "",
        "wirescript/pytest_plugin.py": "",
        f"{info}/licenses/LICENSE": "MIT License",
        f"{info}/entry_points.txt": ENTRY_POINTS,
        f"{info}/METADATA": metadata,
    }
    path = dist / f"wirescript-{VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as wheel:
        for name, text in files.items():
            if name != leave_out:
                wheel.writestr(name, text)
    return path


def make_sdist(dist: Path, *, leave_out: str = "") -> Path:
    top = f"wirescript-{VERSION}"
    files = ["pyproject.toml", "LICENSE", "README.md", "CHANGELOG.md", "src/wirescript/py.typed", "tests/conftest.py"]
    path = dist / f"wirescript-{VERSION}.tar.gz"
    with tarfile.open(path, "w:gz") as sdist:
        for name, text in [*((f, "") for f in files if f != leave_out), ("PKG-INFO", METADATA)]:
            data = text.encode()
            member = tarfile.TarInfo(f"{top}/{name}")
            member.size = len(data)
            sdist.addfile(member, io.BytesIO(data))
    return path


def test_a_complete_distribution_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make_wheel(tmp_path)
    make_sdist(tmp_path)
    assert check_dist.main([str(tmp_path)]) == 0
    assert capsys.readouterr().out.endswith(": ok\n")


@pytest.mark.parametrize(
    ("leave_out", "problem"),
    [
        ("wirescript/py.typed", "wirescript/py.typed is missing"),
        (f"wirescript-{VERSION}.dist-info/licenses/LICENSE", "licenses/LICENSE is missing"),
        (f"wirescript-{VERSION}.dist-info/entry_points.txt", "the pytest11 entry point"),
    ],
)
def test_a_wheel_without_what_users_need_is_refused(tmp_path: Path, leave_out: str, problem: str) -> None:
    assert any(problem in p for p in check_dist.wheel_problems(make_wheel(tmp_path, leave_out=leave_out), VERSION))


@pytest.mark.parametrize(
    ("old", "new", "problem"),
    [
        ("License-File: LICENSE\n", "", "License-File is None"),
        ("Requires-Python: >=3.11\n", "Requires-Python: >=3.10\n", "Requires-Python is '>=3.10'"),
        ("Classifier: Typing :: Typed\n", "", "'Typing :: Typed' is missing"),
        ("Description-Content-Type: text/markdown\n", "", "the long description is not the README"),
    ],
)
def test_metadata_that_misdescribes_the_package_is_refused(tmp_path: Path, old: str, new: str, problem: str) -> None:
    assert old in METADATA
    wheel = make_wheel(tmp_path, metadata=METADATA.replace(old, new))
    assert any(problem in p for p in check_dist.wheel_problems(wheel, VERSION)), check_dist.wheel_problems(
        wheel, VERSION
    )


def test_an_sdist_without_its_license_is_refused(tmp_path: Path) -> None:
    assert check_dist.sdist_problems(make_sdist(tmp_path, leave_out="LICENSE"), VERSION) == [
        f"wirescript-{VERSION}.tar.gz: LICENSE is missing"
    ]


def test_a_tag_is_published_only_when_it_names_the_version_and_the_urls_are_set() -> None:
    urls = [f"{label}, https://example.invalid/{label.lower()}" for label in check_dist.URLS]
    problems = check_dist.release_problems("v9.9.9", VERSION, urls)
    assert problems[0] == f"the tag 'v9.9.9' does not name the version being built (v{VERSION}, from __version__)"
    assert check_dist.release_problems(f"v{VERSION}", VERSION, urls) == []  # the released version is in CHANGELOG.md
    assert check_dist.release_problems(f"v{VERSION}", VERSION, urls[1:]) == [
        "the metadata has no project URL for Homepage: add them to [project.urls]"
    ]
    assert (
        "CHANGELOG.md has no '## [9.9.9] - YYYY-MM-DD' section"
        in check_dist.release_problems("v9.9.9", "9.9.9", urls)[0]
    )


def workflow() -> dict[Any, Any]:
    loaded = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def test_the_release_workflow_runs_on_a_version_tag_only() -> None:
    triggers = workflow()[True]  # YAML 1.1 reads the key `on` as true
    assert triggers == {"push": {"tags": ["v*"]}}


def test_the_release_workflow_builds_with_uv_checks_and_publishes_by_trusted_publishing() -> None:
    loaded = workflow()
    assert loaded["permissions"] == {"contents": "read"}  # nothing else gets the OIDC token
    build, publish = loaded["jobs"]["build"], loaded["jobs"]["publish"]
    commands = [step.get("run", "") for step in build["steps"]]
    assert "uv build --out-dir dist" in commands
    assert any("twine check --strict dist/*" in command for command in commands)
    assert any('.ci/check_dist.py dist --release "$GITHUB_REF_NAME"' in command for command in commands)
    assert "permissions" not in build
    assert publish["needs"] == "build"
    assert publish["permissions"] == {"id-token": "write"}
    assert publish["environment"]["name"] == "pypi"
    # No password or token: the action uses trusted publishing.
    assert publish["steps"][-1] == {"uses": "pypa/gh-action-pypi-publish@v1.14.2"}


def test_the_package_ships_its_license_and_the_changelog_states_the_versioning_policy() -> None:
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License\n")
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "## Versioning" in changelog
    assert "DeprecationWarning" in changelog[changelog.index("## Versioning") : changelog.index("## [Unreleased]")]
