from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import pytest

# Bytecode is written whatever PYTHONDONTWRITEBYTECODE says (this project's machines set it). pytest
# rewrites the asserts of the test modules and of every pytest plugin's package (hypothesis and
# wirescript among them) and caches the result only where bytecode may be written; without that
# cache each process of each run parses and compiles them all from source again: about 5 s of CPU
# per xdist worker. The modules imported from here on (the SDKs, the frameworks) get their .pyc too,
# which the processes a test starts read. The files land in __pycache__/ (ignored by git).
sys.dont_write_bytecode = False

from hypothesis import settings  # noqa: E402  # after the line above: its rewritten package is cached

# Hypothesis profiles. `ci` (selected when CI is set, as CI sets CI=true) is hypothesis' own: derandomized, no
# example database, no deadline, the reproduction blob printed; with 100 examples for a test of average cost, each
# property test runs the examples it states (`_support.examples`). `dev`, the default elsewhere, runs a quarter of
# them, for a quick local `uv run pytest`. `--hypothesis-profile ci` runs the thorough one anywhere.
settings.register_profile("ci", settings.get_profile("ci"), max_examples=100)
settings.register_profile("dev", settings.get_profile("default"), max_examples=25)
settings.load_profile("ci" if os.environ.get("CI") else "dev")

# Provider variables that would leak into the SDK clients: a test never reads a real key or URL.
_PROVIDER_ENV = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_CUSTOM_HEADERS",
    "ANTHROPIC_PROFILE",
    "OPENAI_API_KEY",
    "OPENAI_ADMIN_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_ORG_ID",
    "OPENAI_PROJECT_ID",
    "GOOGLE_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_GENAI_USE_VERTEXAI",
    "GOOGLE_CLOUD_PROJECT",
)


@pytest.fixture(autouse=True)
def _no_provider_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _PROVIDER_ENV:
        monkeypatch.delenv(name, raising=False)


def _doc_block_items(items: list[pytest.Item]) -> list[pytest.Item]:
    """The tests of tests/test_docs.py that each check one block of the docs."""
    return [item for item in items if getattr(item, "originalname", None) == "test_doc_block"]


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # The docs' blocks with tests are run by one pytest subprocess started as the session starts
    # (below); their tests only read its outcomes, so they go last, when it has finished.
    blocks = _doc_block_items(items)
    if blocks:
        chosen = set(map(id, blocks))
        items[:] = [item for item in items if id(item) not in chosen] + blocks


@pytest.fixture(scope="session", autouse=True)
def _docs_blocks_in_background(request: pytest.FixtureRequest) -> Iterator[None]:
    """Start the docs blocks' pytest run before the first test, when any of their tests is selected."""
    blocks = _doc_block_items(request.session.items)
    if not blocks:
        yield
        return
    factory: pytest.TempPathFactory = request.getfixturevalue("tmp_path_factory")
    with blocks[0].module.blocks_run_in_background(factory, blocks):
        yield


@pytest.fixture
def unheld() -> None:
    """The original socket and transport functions for this test: an earlier test's fixture took the session's hold.

    The network guard's patches stay laid from the first test that uses the `wirescript` fixture to the
    end of the session (`wirescript.guard.hold_patches`); a test of what entering and leaving lays and
    puts back lets go of that hold first. The next test that uses the fixture takes it again.
    """
    from wirescript.guard import release_patches

    release_patches()
