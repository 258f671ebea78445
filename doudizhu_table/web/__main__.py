"""``python -m doudizhu_table.web``: serve the web table and print its address.

Usage::

    python -m doudizhu_table.web                                  # http://127.0.0.1:8000
    python -m doudizhu_table.web --port 8080 --opponents rule random dmc:runs/default/checkpoint.pt
    python -m doudizhu_table.web --host 0.0.0.0                   # reachable from other machines

``--opponents`` are the agent specs the page offers (the page cannot name any other, nor a path).
"""

from __future__ import annotations

import argparse
import socket
import sys


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m doudizhu_table.web", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine "
                   "only; 0.0.0.0 for every interface)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000; 0: any free port)")
    p.add_argument("--opponents", nargs="+", default=None, metavar="SPEC",
                   help="agent specs the page may choose from (default: pretrained rule random)")
    p.add_argument("--rules", default="standard", help="rules preset: standard or douzero")
    return p


def _free_port(host: str, port: int) -> int:
    """``port`` (or a free one for 0) after checking that it can be bound; OSError says why not."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((host, port))
        return s.getsockname()[1]


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        import uvicorn

        from agents.registry import SharedModels, check_specs
        from doudizhu_env.rules import Rules

        from .server import create_app, http_protocol

        rules = Rules.preset(args.rules)
        opponents = args.opponents
        models = SharedModels()  # loaded once here, for every game
        if opponents is not None:
            check_specs(opponents, rules, models)
        if not 0 <= args.port < 65536:
            raise ValueError(f"--port must be in 0..65535, got {args.port}")
        port = _free_port(args.host, args.port)
        hosts = ["*"] if args.host in ("0.0.0.0", "::") else ["127.0.0.1", "localhost", "[::1]", args.host]
        app = create_app(rules, opponents, hosts=hosts, models=models)
    except ImportError as err:
        parser.exit(2, f"{parser.prog}: error: the web table needs the web extra: pip install -e \".[web]\" "
                       f"({err})\n")
    except (ValueError, OSError) as err:
        parser.exit(2, f"{parser.prog}: error: {' '.join(str(err).split())}\n")
    shown = f"[{args.host}]" if ":" in args.host else args.host
    print(f"the web table is at http://{shown}:{port}/  (opponents: "
          f"{', '.join(app.state.table.opponents)}; Ctrl-C stops it)", flush=True)
    try:
        uvicorn.run(app, host=args.host, port=port, log_level="warning", http=http_protocol())
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
