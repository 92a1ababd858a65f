"""Envelope validators for SSE streams, strict where the SDKs are lenient.

The anthropic SDK silently accepts a stream with no `message_stop`, a body cut mid-event and
truncated tool JSON (it yields `input == {}`). `validate_anthropic_stream` rejects such streams
with a message naming the event, its line and what was expected. It lives with the Anthropic wire
(`wirescript.wires.anthropic.stream_check`); this module is its public door.
"""

from __future__ import annotations

from .wires.anthropic.stream_check import validate_anthropic_stream

__all__ = ["validate_anthropic_stream"]
