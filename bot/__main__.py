"""`python -m bot`: dispatches to the command line in `bot.cli`, except `healthcheck`, which stays stdlib-only.

The container runs the health check every 30 seconds on a small VPS, from source (the image ships no bytecode),
so it must not import pydantic, discord.py or the engine: it reads DATA_DIR and HEALTHCHECK_MAX_AGE_SECONDS with
`bot.ops.health` alone and never loads `bot.cli`.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["healthcheck"] and len(args) == 1:
        from bot.ops.health import healthcheck_main

        return healthcheck_main()
    from bot.cli import main as cli_main

    return cli_main(args)


if __name__ == "__main__":
    sys.exit(main())
