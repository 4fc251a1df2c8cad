"""``kwdocs serve``: build the HTML site, serve it on loopback, rebuild and reload on every save."""
from __future__ import annotations

import argparse
import signal

from kwdocs.commands import overrides
from kwdocs.config import Config, load_config

HELP = "serve the HTML site on 127.0.0.1, rebuilding it and reloading open pages when sources change"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=int, default=8000, metavar="N",
                        help="the port to listen on (default: 8000; 0 picks a free one)")
    parser.add_argument("--bind", default="127.0.0.1", metavar="ADDRESS",
                        help="the address to listen on (default: 127.0.0.1, this machine only)")
    parser.add_argument("--log-requests", action="store_true", help="print one line per HTTP request")


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


def run(config: Config, args: argparse.Namespace) -> int:
    # on use: `kwdocs --help` imports every command module, and the server loads the engine and the site
    from kwdocs.webserver import serve

    signal.signal(signal.SIGTERM, _interrupt)   # stop as cleanly as Ctrl-C does
    return serve(config, host=args.bind, port=args.port, log_requests=args.log_requests,
                 reload=lambda: load_config(args.src, args.config, overrides(args)))
