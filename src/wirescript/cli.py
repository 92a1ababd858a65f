"""The `wirescript` command line (also `python -m wirescript`).

```
wirescript schema                 print the JSON Schema of script files
wirescript check FILE...          validate JSON/YAML script files
wirescript audit PATH...          find real keys, key reads and unscripted clients in a test tree
wirescript serve FILE             serve a script over loopback HTTP until stopped (prints the base URL)
wirescript record --out FILE      record real traffic through a loopback server into a script
```

Exit status: 0 on success, 1 when `check` or `audit` found a problem, 2 for a usage error.

Each command is a function `_<name>(commands)` that adds its subparser and sets `handler` to a
function `(argparse.Namespace) -> int`; add a command by writing one and listing it in `_COMMANDS`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any, TypeAlias

__all__ = ["build_parser", "main", "record_command", "serve_command"]

_Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


def main(argv: list[str] | None = None) -> int:
    """Run the command line with `argv` (default: `sys.argv[1:]`); return the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version or a usage error: argparse has printed it
        return exc.code if isinstance(exc.code, int) else 2
    handler: Callable[[argparse.Namespace], int] | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        return handler(args)
    except BrokenPipeError:  # the reader left early (`| head`): silence the flush at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every command."""
    from . import __version__

    parser = argparse.ArgumentParser(
        prog="wirescript",
        description="wirescript: a scripted LLM provider on the HTTP wire, for tests that run the real SDK.",
    )
    parser.add_argument("--version", action="version", version=f"wirescript {__version__}")
    commands = parser.add_subparsers(title="commands", metavar="COMMAND")
    for add in _COMMANDS:
        add(commands)
    return parser


# ------------------------------------------------------------------------------------------ schema


def _schema(commands: _Commands) -> None:
    parser = commands.add_parser(
        "schema",
        help="print the JSON Schema of script files",
        description=(
            "Print the JSON Schema of a wirescript script file (a list of turns, or a mapping of model name to "
            "turns), for editors to complete and check script files."
        ),
    )
    parser.set_defaults(handler=_run_schema)


def _run_schema(args: argparse.Namespace) -> int:
    from .files import script_json_schema

    print(json.dumps(script_json_schema(), indent=2))
    return 0


# ------------------------------------------------------------------------------------------- check


def _check(commands: _Commands) -> None:
    parser = commands.add_parser(
        "check",
        help="validate JSON/YAML script files",
        description="Load and validate script files as ScriptTransport would; print one line per file.",
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help="a .json, .yaml or .yml script file")
    parser.set_defaults(handler=_run_check)


def _run_check(args: argparse.Namespace) -> int:
    from .errors import ScriptError
    from .files import load_script

    failed = 0
    for name in args.files:
        try:
            script = load_script(name)
        except ScriptError as exc:
            failed += 1
            print(exc)
            continue
        if isinstance(script, dict):
            queues = [q for q in script.values() if isinstance(q, list)]
            turns = sum(len(q) for q in queues)
            side = " and a side script" if len(queues) < len(script) else ""
            print(f"{name}: ok, {turns} turn(s) in {len(queues)} queue(s){side}")
        else:
            print(f"{name}: ok, {len(script)} turn(s)")
    return 1 if failed else 0


# ------------------------------------------------------------------------------------------- audit


def _audit(commands: _Commands) -> None:
    parser = commands.add_parser(
        "audit",
        help="find real keys, key reads and unscripted clients in a test tree",
        description=(
            "Scan files and directories for real-looking provider keys (WS101), reads of key environment "
            "variables (WS102), SDK clients without a scripted HTTP client (WS103), httpx clients without a "
            "scripted transport (WS104) and httpx request functions (WS105). Silence a deliberate line with "
            "the comment '# wirescript: allow' or '# wirescript: allow[WS102]'. Exits 1 when anything is found."
        ),
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="a file or a directory (walked recursively)")
    parser.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="GLOB",
        help="leave out files and directories whose name or path matches (repeatable)",
    )
    parser.set_defaults(handler=_run_audit)


def _run_audit(args: argparse.Namespace) -> int:
    from .audit import audit_paths

    try:
        report = audit_paths(args.paths, exclude=args.exclude)
    except FileNotFoundError as exc:
        print(f"wirescript audit: {exc}", file=sys.stderr)
        return 2
    for finding in report.findings:
        print(finding)
    files = f"{report.files} file(s) scanned"
    if report.findings:
        paths = len({f.path for f in report.findings})
        print(f"wirescript audit: {len(report.findings)} finding(s) in {paths} file(s); {files}", file=sys.stderr)
    else:
        print(f"wirescript audit: no findings; {files}", file=sys.stderr)
    if report.unseen:
        print(
            f"wirescript audit: {len(report.unseen)} file(s) seen in part only "
            "(their printable bytes were searched for keys):",
            file=sys.stderr,
        )
        for line in report.unseen:
            print(f"  {line}", file=sys.stderr)
    return 1 if report.findings else 0


# ------------------------------------------------------------------------------------------- serve


def _serve(commands: _Commands) -> None:
    parser = commands.add_parser(
        "serve",
        help="serve a script over loopback HTTP until stopped",
        description=(
            "Serve a JSON/YAML script file on a loopback port, for an app under test in another process. "
            "Prints the base URL alone on the first line of stdout (ANTHROPIC_BASE_URL; OPENAI_BASE_URL is it "
            "plus /v1) and the control API's token alone on the second, and serves until SIGINT or SIGTERM, then "
            "exits 0 with a summary on stderr. A control API under /_wirescript/ (send the token as the "
            "X-Wirescript-Token header) lists the recorded requests (GET requests?wait=N&timeout=S), reports "
            "status and check, and holds and releases responses (POST hold, POST release). Needs wirescript[server]."
        ),
    )
    parser.add_argument("script", metavar="FILE", help="a .json, .yaml or .yml script file")
    parser.add_argument("--host", default="127.0.0.1", help="a loopback address (default: 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="the TCP port (default: 0, a free port)")
    parser.add_argument(
        "--hold-timeout",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="how long a held request waits for release before it is answered with an error (default: 30)",
    )
    parser.add_argument(
        "--max-records",
        type=_records,
        default=_MAX_RECORDS,
        metavar="N",
        help=(
            "keep the records of the last N requests, or 'all' (the counts, the problems and their requests are "
            f"kept whatever N); default: {_MAX_RECORDS}"
        ),
    )
    parser.add_argument(
        "--no-strict",
        action="store_true",
        help="answer requests the real API would refuse, instead of refusing them with its own error",
    )
    parser.add_argument(
        "--strict-skip",
        action="append",
        default=[],
        metavar="RULE",
        help=(
            "a strict rule id not to check (repeatable; the request rules: docs/strict-requests.md, the answer "
            "rules: docs/answers.md)"
        ),
    )
    parser.add_argument(
        "--check-tool-input",
        action="store_true",
        help="hold every scripted tool call's input to its tool's schema, strict or not",
    )
    parser.set_defaults(handler=_run_serve)


_MAX_RECORDS = 10_000
"""`wirescript.server.MAX_RECORDS` (a test pins them equal), not imported: the server module brings the whole stub."""


def _records(text: str) -> int | None:
    """`--max-records`: a number of records (checked by the stub), or `all`."""
    if text == "all":
        return None
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer or 'all', got {text!r}") from None


def _run_serve(args: argparse.Namespace) -> int:
    return serve_command(
        args.script,
        host=args.host,
        port=args.port,
        hold_timeout=args.hold_timeout,
        max_records=args.max_records,
        strict=not args.no_strict,
        strict_skip=args.strict_skip,
        check_tool_input=args.check_tool_input,
    )


def _record(commands: _Commands) -> None:
    parser = commands.add_parser(
        "record",
        help="record real traffic through a loopback server into a script",
        description=(
            "Serve a loopback port that forwards each request to its provider (the first host its wire declares) "
            "and records each answer as a turn. Prints the base URL alone on the first line of stdout "
            "(ANTHROPIC_BASE_URL; OPENAI_BASE_URL is it plus /v1) and the control API's token alone on the second; "
            "SIGINT or SIGTERM writes the script and exits 0. The app sends its own API key; the script holds none, "
            "not even one an answer echoed back. Needs wirescript[server]."
        ),
    )
    parser.add_argument("--out", required=True, metavar="FILE", help="the script to write: .yaml, .yml or .json")
    parser.add_argument("--host", default="127.0.0.1", help="a loopback address (default: 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="the TCP port (default: 0, a free port)")
    parser.add_argument(
        "--upstream", metavar="URL", default=None, help="forward to this base URL instead of the providers"
    )
    parser.set_defaults(handler=_run_record)


def _run_record(args: argparse.Namespace) -> int:
    return record_command(args.out, host=args.host, port=args.port, upstream=args.upstream)


_COMMANDS: tuple[Callable[[Any], None], ...] = (_schema, _check, _audit, _serve, _record)
"""The commands, in the order `--help` lists them."""


# ----------------------------------------------------------------------------- the two servers


@contextlib.contextmanager
def _until_stopped() -> Iterator[threading.Event]:
    """An event set by SIGINT or SIGTERM while the block runs; the previous handlers are put back after it."""
    stop = threading.Event()
    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield stop
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _serve_until_stopped(server: Any, stop: threading.Event, banner: str, out: IO[str], err: IO[str]) -> None:
    """Announce a started server, serve until `stop` is set, then stop it.

    `out` gets the base URL alone on its first line and the control API's token alone on its
    second, flushed; `err` gets `banner`.
    """
    try:
        print(server.base_url, file=out)
        print(server.token, file=out, flush=True)
        print(banner, file=err, flush=True)
        while not stop.wait(0.2):
            pass
    finally:
        server.stop()


def serve_command(
    script: str | os.PathLike[str],
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    hold_timeout: float = 30.0,
    max_records: int | None = _MAX_RECORDS,
    out: IO[str] | None = None,
    err: IO[str] | None = None,
    strict: bool = True,
    strict_skip: Iterable[str] = (),
    check_tool_input: bool = False,
) -> int:
    """`wirescript serve SCRIPT`: serve a script file until SIGINT or SIGTERM; return the exit status.

    Once the server accepts connections, `out` (stdout) gets the base URL alone on its first line
    and the control API's token (the `X-Wirescript-Token` header) alone on its second, flushed;
    everything else goes to `err` (stderr). Stopping is clean: exit status 0, with a summary of the
    requests and any problems on stderr. A script that does not load is reported on stderr with
    exit status 2, before anything is printed on stdout. `max_records` bounds the records kept, so
    that a long session does not grow without end: the last 10,000 by default
    (`wirescript.server.MAX_RECORDS`), None for all; the request count, the problems and their
    requests are kept whatever it is (see `ScriptTransport`). `strict`, `strict_skip` and
    `check_tool_input` are `ScriptTransport`'s (`--no-strict`, `--strict-skip RULE`, `--check-tool-input`).
    """
    from .errors import ScriptError, UsageError
    from .files import load_script
    from .server import CONTROL_PREFIX, ScriptServer
    from .transport import ScriptTransport

    out = out or sys.stdout
    err = err or sys.stderr
    with _until_stopped() as stop:
        try:
            stub = ScriptTransport(
                load_script(script),
                hold_timeout=hold_timeout,
                max_records=max_records,
                strict=strict,
                strict_skip=strict_skip,
                check_tool_input=check_tool_input,
            )
            server = ScriptServer(stub, host=host, port=port)
            server.start()
        except (ScriptError, UsageError) as exc:
            print(f"wirescript serve: {exc}", file=err, flush=True)
            return 2
        banner = (
            f"wirescript serve: {os.fspath(script)} ({len(stub.pending)} turn(s)) at {server.base_url}; "
            f"control API at {server.base_url}{CONTROL_PREFIX}/ (requests, status, check, hold, release; "
            "send the token printed on stdout as X-Wirescript-Token); stop with Ctrl-C"
        )
        _serve_until_stopped(server, stop, banner, out, err)
    print(f"wirescript serve: stopped after {stub.request_count} request(s), overflow {stub.overflow}", file=err)
    try:
        stub.check()
    except AssertionError as exc:
        print(str(exc), file=err)
    err.flush()
    return 0


def record_command(
    out_path: str | os.PathLike[str],
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    upstream: str | None = None,
    out: IO[str] | None = None,
    err: IO[str] | None = None,
) -> int:
    """`wirescript record --out FILE`: a loopback server recording what it forwards, until SIGINT or SIGTERM.

    Once the server accepts connections, `out` (stdout) gets the base URL alone on its first line
    (point the app's SDK at it: `ANTHROPIC_BASE_URL`; `OPENAI_BASE_URL` is it plus `/v1`) and the
    control API's token alone on its second. Each request goes on to its provider (`upstream`: a
    base URL standing in for every provider), and stopping writes the script. Bad arguments are
    reported on stderr with exit status 2.
    """
    from .errors import UsageError
    from .recording import RecordingTransport, Rehost
    from .server import ScriptServer

    out = out or sys.stdout
    err = err or sys.stderr
    with _until_stopped() as stop:
        try:
            rec = RecordingTransport(out_path, upstream=Rehost(base_url=upstream))
            server = ScriptServer(rec, host=host, port=port)
            server.start()
        except UsageError as exc:
            print(f"wirescript record: {exc}", file=err, flush=True)
            return 2
        banner = (
            f"wirescript record: recording to {os.fspath(out_path)} at {server.base_url}, forwarding to "
            f"{upstream or 'the providers'}; stop with Ctrl-C to write the script"
        )
        _serve_until_stopped(server, stop, banner, out, err)
    rec.save()  # the network connections belonged to the server's event loop, which has ended with it
    print(
        f"wirescript record: wrote {len(rec.turns)} turn(s) of {len(rec.requests)} request(s) to {rec.path}", file=err
    )
    for note in rec.notes:
        print(f"  - {note}", file=err)
    err.flush()
    return 0
