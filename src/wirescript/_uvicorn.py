"""Running a `ScriptApp` on uvicorn in a background thread.

`uvicorn.Server.serve()` serves the listening socket `ScriptServer` opened, and ends once
`should_exit` is set. uvicorn gives an ASGI app no handle on its connection, and a scripted
disconnect must close it; so each connection is served by `_Connection`, an `asyncio.Protocol` that
hands everything to uvicorn's own HTTP/1.1 protocol (the one `http="h11"` names) and tells the app
the connection's transport. It also times each request's head (`header_timeout`): uvicorn bounds
its size, not how slowly it trickles in.

Two of `serve()`'s steps are `_Server`'s own: its main loop is woken by `stop()` at once instead of
at uvicorn's next 0.1 s tick, and its shutdown closes the connections the app tracks, looking every
5 ms where uvicorn sleeps 0.1 s at least twice. A server started per test then stops in about 5 ms
instead of 170 ms (measured with uvicorn 0.54: `tests/test_server.py` took 14.7 s instead of 6.9 s).
`tests/test_server.py::test_the_uvicorn_steps_overridden_are_those_of_the_versions_tested` names
the versions this was checked against.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import threading
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .server import ScriptApp

__all__ = ["Runner"]

_START_TIMEOUT = 10.0
_STOP_TIMEOUT = 10.0
"""How long stopping may take: uvicorn's grace period for what is still being sent (stop() aborted
every request in flight already), and then the thread's join."""
_LOG = logging.getLogger("wirescript.server")
_ENDS = (b"\r\n\r\n", b"\n\n")  # the end of a request's head (h11 accepts bare line feeds too)


class Runner:
    """uvicorn serving `app` on the listening socket `sock`, in a background thread."""

    def __init__(self, app: ScriptApp, sock: socket.socket, *, header_timeout: float) -> None:
        import uvicorn

        config = uvicorn.Config(
            app,
            http=_protocol(app, header_timeout),
            proxy_headers=False,
            ws="none",
            lifespan="off",
            loop="asyncio",
            log_config=None,
            access_log=False,
            timeout_graceful_shutdown=int(_STOP_TIMEOUT),
        )
        self._app = app
        self._sock = sock
        self._server = _server_class()(config, app)
        self._thread = threading.Thread(target=self._run, name=f"wirescript-server-{sock.getsockname()[1]}")
        self._thread.daemon = True
        self._failure: BaseException | None = None

    @property
    def running(self) -> bool:
        """Whether the thread is serving."""
        return self._thread.is_alive()

    def start(self) -> None:
        """Start serving; return once uvicorn accepts connections.

        Raises:
            RuntimeError: uvicorn did not start (its failure is the cause).

        """
        self._thread.start()
        deadline = time.monotonic() + _START_TIMEOUT
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                failure = self._failure
                raise RuntimeError(f"wirescript: the server did not start: {failure!r}") from failure
            self._thread.join(0.001)

    def _run(self) -> None:
        try:
            self._server.run(sockets=[self._sock])
        except BaseException as exc:  # reported by start(); SystemExit is uvicorn's startup failure
            self._failure = exc

    def stop(self) -> None:
        """Abort what is in flight, let uvicorn shut down, and join its thread.

        Raises:
            RuntimeError: The thread did not stop (uvicorn ignored `should_exit` and `force_exit`).

        """
        self._app.abort_all()
        self._server.should_exit = True
        self._server.wake()
        if not self._thread.is_alive():
            return
        self._thread.join(_STOP_TIMEOUT * 2)
        if self._thread.is_alive():  # pragma: no cover - uvicorn ignored should_exit
            self._server.force_exit = True
            self._thread.join(_STOP_TIMEOUT)
        if self._thread.is_alive():  # pragma: no cover
            raise RuntimeError("wirescript: the server thread did not stop")


def _server_class() -> type[Any]:
    import uvicorn

    class _Server(uvicorn.Server):
        """uvicorn's server, whose main loop `wake()` ends at once and whose shutdown is the app's connections'."""

        def __init__(self, config: uvicorn.Config, app: ScriptApp) -> None:
            super().__init__(config)
            self._app = app
            self._loop: asyncio.AbstractEventLoop | None = None
            self._woken: asyncio.Event | None = None

        def wake(self) -> None:
            """Make the main loop look at `should_exit` now (thread-safe)."""
            loop, woken = self._loop, self._woken
            if loop is not None and woken is not None:
                with contextlib.suppress(RuntimeError):  # the loop closed already: it has stopped by itself
                    loop.call_soon_threadsafe(woken.set)

        async def main_loop(self) -> None:
            self._woken, self._loop = asyncio.Event(), asyncio.get_running_loop()
            counter = 0
            while not await self.on_tick(counter):  # uvicorn's tick: the date header, should_exit
                counter = (counter + 1) % 864_000
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._woken.wait(), 0.1)

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            app = self._app
            for listener in self.servers:
                listener.close()
            app._cancel_tasks()  # stop() asked for it from its thread already: anything that came since
            loop = asyncio.get_running_loop()
            deadline = loop.time() + _STOP_TIMEOUT
            while app._tasks and loop.time() < deadline:  # the held get their 503, the others are dropped
                await asyncio.sleep(0.005)
            for task in list(app._tasks):
                task.cancel(msg="the server stopped")
            for connection in list(app._connections.values()):  # idle now: each is closed
                if connection.transport is not None:
                    connection.transport.close()
            while app._connections and loop.time() < deadline:
                await asyncio.sleep(0.005)
            for connection in list(app._connections.values()):  # past the grace: dropped, unread data too
                if connection.transport is not None:
                    connection.transport.abort()
            # Python >= 3.12 waits here for every connection to go: bounded, as uvicorn bounds it.
            closed = asyncio.gather(*(listener.wait_closed() for listener in self.servers))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(closed, max(deadline - loop.time(), 0.1))

    return _Server


def _protocol(app: ScriptApp, header_timeout: float) -> type[asyncio.Protocol]:
    """The protocol class uvicorn serves each connection with: its own HTTP/1.1, watched for the app."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class _Connection(asyncio.Protocol):
        """One connection: uvicorn's `H11Protocol` does the HTTP; this tells the app its transport, and times heads."""

        def __init__(self, **kwargs: Any) -> None:  # uvicorn's: config, server_state, app_state, _loop
            self._http = H11Protocol(**kwargs)
            self.transport: asyncio.Transport | None = None
            self._peer: tuple[Any, ...] | None = None
            self._heading = True
            """Whether a request's head is awaited: from the connection's start, and after each answer."""
            self._tail = b""
            self._timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            assert isinstance(transport, asyncio.Transport)
            self.transport = transport
            peer = transport.get_extra_info("peername")
            if isinstance(peer, tuple):
                self._peer = (str(peer[0]), int(peer[1]))  # as uvicorn gives it in the scope's "client"
                app._connections[self._peer] = self
            self._arm()
            self._http.connection_made(transport)

        def data_received(self, data: bytes) -> None:
            if self._heading:
                if self._timer is None:
                    self._arm()
                seen = self._tail + data
                if any(end in seen for end in _ENDS):
                    self._heading = False
                    self._disarm()
                else:
                    self._tail = seen[-3:]
            self._http.data_received(data)

        def eof_received(self) -> None:
            self._http.eof_received()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            if self._peer is not None and app._connections.get(self._peer) is self:
                del app._connections[self._peer]
            self._http.connection_lost(exc)

        def pause_writing(self) -> None:
            self._http.pause_writing()

        def resume_writing(self) -> None:
            self._http.resume_writing()

        def answered(self) -> None:
            """The app answered a request of this connection: the next bytes are the next request's head."""
            self._heading, self._tail = True, b""

        def _arm(self) -> None:
            self._disarm()
            self._timer = asyncio.get_running_loop().call_later(header_timeout, self._too_slow)

        def _disarm(self) -> None:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

        def _too_slow(self) -> None:
            self._timer = None
            if self._heading and self.transport is not None and not self.transport.is_closing():
                _LOG.info(
                    "wirescript: %s sent no complete request head within %g s (header_timeout); closed",
                    self._peer,
                    header_timeout,
                )
                with contextlib.suppress(Exception):
                    self.transport.close()

    return _Connection
