"""Amazon Bedrock runtime: Converse, ConverseStream and InvokeModel (Claude), its strict rules and framing.

- `wire`: `BedrockWire`;
- `converse`: a turn as Converse renders it (JSON, stream events, errors);
- `rules`: Converse's strict rules (`check_converse`);
- `eventstream`: AWS event-stream framing (`application/vnd.amazon.eventstream`).

InvokeModel answers with the Anthropic Messages answer, `wires/_messages.py`, which the Anthropic
wire sends too: shared in `wires/` itself, so that neither provider's package imports the other.
"""

from __future__ import annotations

from .wire import BEDROCK_STOP_REASONS, OPERATIONS, BedrockWire

__all__ = ["BEDROCK_STOP_REASONS", "OPERATIONS", "BedrockWire"]
