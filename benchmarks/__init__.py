"""wirescript benchmarks: the stub's cost over the SDK's own floor, and against the best in-process peer.

Run ``python -m benchmarks`` (``--quick`` for the CI gate). Every workload drives the real
provider SDK (``messages.stream(...).get_final_message()``, ``max_retries=0``) over three
transports, interleaved round by round in one process so machine drift hits all alike:

* ``floor``: a bare ``httpx2.MockTransport`` returning pre-built bytes of the very stream
  wirescript produced (captured once from wirescript): the SDK's own cost, the lower bound.
* ``wirescript``: a ``ScriptTransport`` serving the scripted turns.
* ``httpx2-pytest``: the best in-process peer on httpx2, serving the same pre-built bytes through
  its own matching, set up exactly as its ``httpx2_mock`` fixture does.

Results are reported as median, p90 and the ratio of medians to the floor of the same run.
"""
