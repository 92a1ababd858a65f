"""What Anthropic documents of each Claude model that the strict rules read (`CLAUDE_MODELS`), and its entries.

Shared with Bedrock's InvokeModel, which takes the Messages body; defined beside both wires and named here.
A wire of your own declares an updated table:

```python
from wirescript import ScriptTransport
from wirescript.wires import AnthropicWire
from wirescript.wires.anthropic.models import ClaudeModel


class NewerClaude(AnthropicWire):
    models = AnthropicWire.models.updated({"claude-next": ClaudeModel(max_output_tokens=256_000)})


stub = ScriptTransport(["Hi"], wires=[NewerClaude()])
```
"""

from __future__ import annotations

from .._claude_models import CLAUDE_MODELS, ClaudeModel

__all__ = ["CLAUDE_MODELS", "ClaudeModel"]
