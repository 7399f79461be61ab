"""How long a group's waiters hang when siblings never opened, with the open deadline and without.

    .venv/bin/python bench/bench_group_open_deadline.py [--groups 200] [--n 8] [--opened 6]
        [--timeout 10] [--deadline 2]

``--groups`` groups of ``--n`` rollouts each, of which only ``--opened`` ever open (the rest: an
open refused at capacity, a worker that died), all reporting at once with ``timeout_s``
``--timeout``; on the in-process board and on the Redis board (a ``redis-server`` on 127.0.0.1,
Debian's package; the episode store's own client, as a replica's board has). Printed side by side: the slowest waiter's wait with ``group_open_deadline_s``
off (every waiter holds its full timeout: the behaviour before) and on.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rich.console import Console
from rich.table import Table

from orchestrator.groups import GroupBoard
from orchestrator.groups_redis import RedisGroupBoard
from orchestrator.store import RedisEpisodeStore
from tests.redis_fixture import running_redis


async def slowest_wait(board: GroupBoard | RedisGroupBoard, args: argparse.Namespace) -> tuple[float, str]:
    """Seconds until every waiter of every group was answered, and the reasons given."""
    for g in range(args.groups):
        for i in range(args.opened):
            await board.record_open(f"g{g}", f"g{g}-e{i}")
    start = time.monotonic()
    answers = await asyncio.gather(
        *(
            board.reward(f"g{g}", f"g{g}-e{i}", [i % 2 == 0, True], args.n, args.timeout)
            for g in range(args.groups)
            for i in range(args.opened)
        )
    )
    took = time.monotonic() - start
    await board.aclose()
    return took, ",".join(sorted({a.reason for a in answers}))


async def main(args: argparse.Namespace) -> None:
    table = Table(title=f"{args.groups} groups, {args.opened} of {args.n} opened, timeout_s {args.timeout}")
    for col in ("board", "deadline off (s)", "deadline on (s)", "on / off", "reasons (off | on)"):
        table.add_column(col)
    with tempfile.TemporaryDirectory() as tmp, running_redis(Path(tmp)) as url:
        client = RedisEpisodeStore.from_url(url).redis  # the client a replica's board uses
        for name, make in (
            ("in-process", lambda d: GroupBoard(open_deadline_s=d)),
            ("redis", lambda d: RedisGroupBoard(client, prefix=uuid.uuid4().hex, open_deadline_s=d)),
        ):
            off, why_off = await slowest_wait(make(0.0), args)
            on, why_on = await slowest_wait(make(args.deadline), args)
            table.add_row(name, f"{off:.2f}", f"{on:.2f}", f"{on / off:.2f}x", f"{why_off} | {why_on}")
        await client.aclose()
    Console(width=140).print(table)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--groups", type=int, default=200)
    parser.add_argument("--n", type=int, default=8)
    parser.add_argument("--opened", type=int, default=6)
    parser.add_argument("--timeout", type=float, default=10.0)
    parser.add_argument("--deadline", type=float, default=2.0)
    logging.disable(logging.WARNING)  # one "scored alone" warning per waiter otherwise
    asyncio.run(main(parser.parse_args()))
