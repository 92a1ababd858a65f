"""The error catalog: every documented error of each provider, as a turn and the exception it raises.

Test an app's error path against all of them in one line::

    @pytest.mark.parametrize("err", anthropic_errors())
    def test_the_app_explains_every_error(wirescript, err): ...

With the wirescript pytest plugin active, each case shows in the test id by its own id
(`test_the_app_explains_every_error[429-rate_limit_error]`).

Each `ErrorCase` holds the turn that produces the error (`case.turn`, or `case.turns()` for one
turn per attempt of the SDK's retry loop) and the exception class the installed SDK raises for it
(`case.exception`), resolved when first asked for: anthropic 2.x and 0.x raise different classes
for several statuses, and the SDK is imported only then.

In-stream errors (an error event inside a 200 stream, after the first text) are cases of their
own, with `in_stream=True`; they only happen to streaming requests. Each provider's cases live in
its package under `wirescript.wires`; this module is their public door.
"""

from __future__ import annotations

from .wires._catalog import ErrorCase, Provider
from .wires.anthropic.errors import anthropic_errors
from .wires.gemini.errors import gemini_errors
from .wires.openai.errors import openai_errors

__all__ = ["ErrorCase", "Provider", "anthropic_errors", "gemini_errors", "openai_errors"]
