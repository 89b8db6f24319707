"""The command line: python -m core devices | train | compare | history | export | import | delete | salvage | sweep
| cluster-head.

COMMANDS is the one list of subcommands; each module names its own (help, flags, handler) and none
registers itself. The shared parts (exit codes, --db, the save-and-report tail) are in core.cli.common.
"""

from __future__ import annotations

import os
import sys

from core.cli import cluster, compare, devices, history, sweep, train
from core.cli.common import EXIT_USAGE, Command, OneLineParser, fail
from core.cluster.auth import ALLOW_ENV, ALLOW_FLAG
from core.cluster.connect import ADDRESS_ENV, ClusterError, parse

COMMANDS: dict[str, Command] = {
    "devices": devices.COMMAND,
    "train": train.COMMAND,
    "compare": compare.COMMAND,
    "history": history.HISTORY,
    "export": history.EXPORT,
    "import": history.IMPORT,
    "delete": history.DELETE,
    "salvage": history.SALVAGE,
    "sweep": sweep.COMMAND,
    "cluster-head": cluster.COMMAND,
}


def build_parser() -> OneLineParser:
    """The parser with every subcommand in COMMANDS."""
    parser = OneLineParser(prog="python -m core", description="Train TensorFlow models and compare devices.")
    subs = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    for name, command in COMMANDS.items():
        sub = subs.add_parser(name, help=command.help, description=command.help)
        command.add_flags(sub)
        sub.add_argument("--ray", metavar="ADDRESS", help=f"a Ray cluster whose nodes to use (default ${ADDRESS_ENV})")
        sub.add_argument(
            ALLOW_FLAG, action="store_true", help=f"use a Ray cluster without token authentication ({ALLOW_ENV}=1)"
        )
        sub.set_defaults(handler=command.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    args = build_parser().parse_args(argv)
    if args.ray_allow_unauthenticated:
        os.environ[ALLOW_ENV] = "1"
    if args.ray is not None:  # --ray names the cluster for this command as TFDASH_RAY_ADDRESS would
        try:
            parse(args.ray)  # a malformed address is a bad flag, never a run on this machine without a word
        except ClusterError as err:
            return fail(str(err), EXIT_USAGE)
        os.environ[ADDRESS_ENV] = args.ray
        named = str(getattr(args, "device", None) or getattr(args, "devices", None) or "")
        if named and "/" not in named:
            print(
                f"note: --ray is not used: {named} is this machine's; a node's device is NODE/cpu or NODE/gpu:0.",
                file=sys.stderr,
            )
    return args.handler(args)
