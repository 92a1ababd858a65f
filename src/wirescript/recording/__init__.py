"""Record mode: real traffic becomes an editable, key-free script.

- `RecordingTransport` (`_transport`): forwards each request, passes the answer through, and keeps
  it as a turn; `save()` writes the file.
- `Episodes` and `Rehost` (`_forward`): upstreams that replay a script and forward what runs past
  its end (`new_episodes`), or send a request that arrived at the recording server to its provider.
- The file (`_files`, `_append`): YAML with a summary comment above each turn, or JSON; appended to
  without touching a byte of what is there.
- Drift (`_drift`): the summary of each request, read back, and a replay that asks something else.

`wirescript record` (the command) is in `wirescript.cli`.
"""

from __future__ import annotations

from ._drift import drift, recorded_summaries
from ._forward import Episodes, Rehost
from ._transport import RecordingTransport

__all__ = ["Episodes", "RecordingTransport", "Rehost", "drift", "recorded_summaries"]
