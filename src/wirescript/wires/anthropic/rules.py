"""Strict-request rules of the Anthropic Messages API (`POST /v1/messages`).

The rules of the Messages body are shared with Bedrock's InvokeModel (Claude on Bedrock), which takes the
same body; they are defined in a module beside both wires and named here.
"""

from __future__ import annotations

from .._messages_rules import RETIRED, RULES, check_anthropic, plainly_valid, rules_violation

__all__ = ["RETIRED", "RULES", "check_anthropic", "plainly_valid", "rules_violation"]
