from __future__ import annotations

import os

import pytest
from hypothesis import settings

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
