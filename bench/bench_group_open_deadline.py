"""How long a group's waiters hang when siblings never opened, with the open deadline and without.

    .venv/bin/python bench/bench_group_open_deadline.py [--groups 200] [--n 8] [--opened 6]
        [--timeout 10] [--deadline 2] [--idle 2000] [--held 20000] [--reports 4000]

``--groups`` groups of ``--n`` rollouts each, of which only ``--opened`` ever open (the rest: an
open refused at capacity, a worker that died), all reporting at once with ``timeout_s``
``--timeout``; on the in-process board and on the Redis board (a ``redis-server`` on 127.0.0.1,
Debian's package; the episode store's own client, as a replica's board has). Printed side by side: the slowest waiter's wait with ``group_open_deadline_s``
off (every waiter holds its full timeout: the behaviour before) and on.

A third table: the in-process board taking ``--reports`` lone reports while ``--held`` groups are
held (opened), reaping on every report (as before) against at most once a second (now).

A second table: the replica's CPU seconds while ``--idle`` reports wait ``--timeout`` on the Redis
board for siblings that never come, reading the group every ``poll_s`` (as every waiter did
before) against now (every ``10 * poll_s`` while the subscription holds).
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
from orchestrator.store_redis import RedisEpisodeStore
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


async def idle_cpu(client: object, args: argparse.Namespace, every_poll: bool) -> float:
    """CPU seconds of this process while ``args.idle`` lone reports wait out ``args.timeout``."""
    board = RedisGroupBoard(client, prefix=uuid.uuid4().hex, open_deadline_s=0)
    if every_poll:
        board._idle_poll_s = board._poll_s  # the behaviour before: a read every poll_s per waiter
    await board._listen()
    start = time.process_time()
    await asyncio.gather(
        *(board.reward(f"i{i}", f"i{i}-e0", [True], 2, args.timeout) for i in range(args.idle))
    )
    took = time.process_time() - start
    await board.aclose()
    return took


class _ReapEveryReport(GroupBoard):
    def _reap_soon(self, now: float) -> None:  # the behaviour before: a full pass per report or open
        self.reap()


async def report_cost(board: GroupBoard, args: argparse.Namespace) -> float:
    """Seconds for ``args.reports`` lone reports while ``args.held`` groups are held."""
    for g in range(args.held):
        await board.record_open(f"h{g}", f"h{g}-e0")
    start = time.perf_counter()
    for g in range(args.reports):
        await board.reward(f"h{g}", f"h{g}-e0", [True], 1, 0.0)
    return time.perf_counter() - start


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
        before = await idle_cpu(client, args, every_poll=True)
        now = await idle_cpu(client, args, every_poll=False)
        await client.aclose()
    console = Console(width=140)
    console.print(table)
    cpu = Table(title=f"Redis board: CPU of {args.idle} waiters over timeout_s {args.timeout}")
    for col in ("read every poll_s (s)", "read every 10 poll_s while subscribed (s)", "now / before"):
        cpu.add_column(col)
    cpu.add_row(f"{before:.2f}", f"{now:.2f}", f"{now / before:.2f}x")
    console.print(cpu)
    every, lazy = await report_cost(_ReapEveryReport(), args), await report_cost(GroupBoard(), args)
    reap = Table(title=f"In-process board: {args.reports} reports with {args.held} groups held")
    for col in ("reap every report (s)", "reap at most once a second (s)", "now / before"):
        reap.add_column(col)
    reap.add_row(f"{every:.2f}", f"{lazy:.2f}", f"{lazy / every:.3f}x")
    console.print(reap)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--groups", type=int, default=200)
    parser.add_argument("--n", type=int, default=8)
    parser.add_argument("--opened", type=int, default=6)
    parser.add_argument("--timeout", type=float, default=10.0)
    parser.add_argument("--deadline", type=float, default=2.0)
    parser.add_argument("--idle", type=int, default=2000)
    parser.add_argument("--held", type=int, default=20000)
    parser.add_argument("--reports", type=int, default=4000)
    logging.disable(logging.WARNING)  # one "scored alone" warning per waiter otherwise
    asyncio.run(main(parser.parse_args()))
