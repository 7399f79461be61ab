"""A real orchestrator mesh on loopback, for the replica test and its benchmark.

One process serves the test library (``python -m compoworld.deploy.entrypoint serve crm desk mail``),
N orchestrator processes (``... orchestrator``) share one Redis, and a ``Driver`` plays scripted
rollouts of ``task_create`` over HTTP, each request to a replica picked at random. A request that
meets a dead replica (connection refused or cut) or a busy episode (503, or the 409 of a fenced
write) is sent again, unchanged, to another replica: steps carry a ``step_id`` and group reports are
idempotent, so a retry never runs anything twice.

Opening is the one request that is not idempotent (no client-chosen key): an open cut by a dying
replica may leave forks that the reaper frees after the idle TTL. ``Driver.run`` therefore opens
every episode before the kill point is armed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tests.orchestrator_fixture import task_create, write_library

__all__ = ["SERVICES", "Driver", "Mesh", "Outcome", "mesh", "rollout_script"]

ROOT = Path(__file__).resolve().parent.parent
SERVICES = ("crm", "desk", "mail")
TOKEN = "replica-token"
ADMIN = {"Authorization": f"Bearer {TOKEN}"}
Turn = list[tuple[str, dict[str, Any]]]


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Mesh:
    """The live processes: the service pack, the orchestrator replicas (aligned with ``procs``) and
    one more orchestrator alone with its in-memory store (``solo``: the reference run)."""

    services: str
    replicas: list[str]
    procs: list[subprocess.Popen[bytes]]
    solo: str
    logs: Path
    others: dict[str, int] = field(default_factory=dict)  # pid of the service pack ("services") and "solo"

    def kill(self, index: int) -> None:
        """SIGKILL one replica: no shutdown, no lock released, in-flight requests cut."""
        self.procs[index].send_signal(signal.SIGKILL)
        self.procs[index].wait(timeout=30)


async def _healthy(http: httpx.AsyncClient, url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    for _ in range(2400):  # 240 s: a loaded machine starts a Python process slowly
        if proc.poll() is not None:
            raise RuntimeError(f"{url} exited {proc.returncode}: {log.read_text()[-2000:]}")
        with contextlib.suppress(httpx.TransportError):
            if (await http.get(f"{url}/health", timeout=5)).status_code == 200:
                return
        await asyncio.sleep(0.1)
    raise RuntimeError(f"{url} did not answer /health within 240 s: {log.read_text()[-2000:]}")


@contextlib.asynccontextmanager
async def mesh(work: Path, redis_url: str, replicas: int = 3, lease_s: float = 2.0) -> AsyncIterator[Mesh]:
    """Start the service pack, ``replicas`` orchestrators behind ``redis_url`` and a solo one."""
    library = write_library(work / "lib", SERVICES)
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "COMPOWORLD_ADMIN_TOKEN": TOKEN,
        "COMPOWORLD_LIBRARY": str(library),
        "COMPOWORLD_LLM_BASE_URL": "",
    }
    service_port = _port()
    services = f"http://127.0.0.1:{service_port}"
    urls = work / "service-urls.json"
    urls.write_text(json.dumps({s: f"{services}/services/{s}" for s in SERVICES}))
    entry = [sys.executable, "-m", "compoworld.deploy.entrypoint"]
    commands = [[*entry, "serve", *SERVICES, "--port", str(service_port)]]
    ports = [_port() for _ in range(replicas + 1)]  # the last one: the solo orchestrator
    commands += [[*entry, "orchestrator", "--service-urls", str(urls), "--port", str(p)] for p in ports]
    shared = env | {
        "COMPOWORLD_STORE_URL": redis_url,
        "COMPOWORLD_STORE_LEASE_S": str(lease_s),
        "COMPOWORLD_STORE_TURN_LIMIT_S": "30",
    }
    envs = [env, *([shared] * replicas), env]
    procs: list[subprocess.Popen[bytes]] = []
    logs = work / "logs"
    logs.mkdir(exist_ok=True)
    try:
        for i, cmd in enumerate(commands):
            out = (logs / f"proc{i}.log").open("wb")
            procs.append(subprocess.Popen(cmd, env=envs[i], stdout=out, stderr=out))
        bases = [services, *(f"http://127.0.0.1:{p}" for p in ports)]
        async with httpx.AsyncClient() as http:
            await asyncio.gather(
                *(
                    _healthy(http, u, p, logs / f"proc{i}.log")
                    for i, (u, p) in enumerate(zip(bases, procs, strict=True))
                )
            )
        others = {"services": procs[0].pid, "solo": procs[-1].pid}
        yield Mesh(services, bases[1:-1], procs[1:-1], bases[-1], logs, others)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=30)


def rollout_script(index: int) -> tuple[list[Turn], bool]:
    """Rollout ``index`` of a group: its turns, and whether it answers with the id it created.

    Four behaviours, so every group's rubric pass rates (and so its CFRR rewards) are non-trivial.
    """
    ann = {"name": "Ann Lee", "email": "ann@example.com", "company_id": 2}
    scripts: list[tuple[list[Turn], bool]] = [
        ([[("crm__listContacts", {})], [("crm__createContact", ann)]], True),  # complete
        ([[("crm__listContacts", {})], [("crm__getContact", {"id": "con_000003"})]], False),  # no-op
        (
            [[("crm__createContact", ann)], [("crm__updateContact", {"id": "con_000001", "name": "X"})]],
            True,
        ),  # breaks the guard
        ([[("crm__createContact", {"name": "Bob Roe", "email": "bob@example.com"})]], False),  # wrong row
    ]
    return scripts[index % len(scripts)]


@dataclass
class Outcome:
    """What one rollout left: everything the solo replay must reproduce."""

    key: tuple[str, int]
    episode_id: str
    results: list[str]
    verdicts: list[bool]
    score: float
    hashes: dict[str, str]
    writes: dict[str, int]
    reward: dict[str, Any]


@dataclass
class Driver:
    """Plays rollouts against ``bases`` (one base: a solo run), each request to a random one."""

    http: httpx.AsyncClient
    bases: list[str]
    services: str
    rng: random.Random
    reward_timeout_s: float = 120.0
    on_step: Callable[[int], None] | None = None
    retries: int = 0
    steps: int = 0
    served_by: dict[str, int] = field(default_factory=dict)

    async def send(self, method: str, path: str, body: Any = None, ok: tuple[int, ...] = (200,)) -> Any:
        """One request to a random replica; a dead or busy one gets the same request sent elsewhere."""
        last = ""
        for attempt in range(200):
            base = self.rng.choice(self.bases)
            try:
                resp = await self.http.request(method, f"{base}{path}", json=body, timeout=180)
            except httpx.TransportError as exc:
                last = f"{base}: {type(exc).__name__}"
            else:
                busy = resp.status_code == 503 or (resp.status_code == 409 and "another replica" in resp.text)
                if resp.status_code in ok or (resp.status_code == 404 and attempt and method == "DELETE"):
                    self.served_by[base] = self.served_by.get(base, 0) + 1
                    return resp.json()
                if not busy:
                    raise AssertionError(f"{method} {path} -> {resp.status_code}: {resp.text[:500]}")
                last = f"{base}: {resp.status_code} {resp.text[:200]}"
            self.retries += 1
            await asyncio.sleep(min(0.05 * (attempt + 1), 1.0))
        raise AssertionError(f"{method} {path} failed on every replica: {last}")

    async def open(self, group: str, index: int, n: int) -> str:
        body = {"task": task_create().model_dump(mode="json"), "group_id": group, "rollout_idx": index}
        return str((await self.send("POST", "/episodes", body, ok=(201,)))["episode_id"])

    async def play(self, group: str, index: int, n: int, eid: str) -> Outcome:
        """Run rollout ``index`` of ``group`` in the open episode ``eid``, report it, release it."""
        turns, answers_id = rollout_script(index)
        results: list[str] = []
        created = ""
        for t, calls in enumerate(turns):
            tool_calls = [
                {"id": f"c{j}", "name": name, "arguments": args} for j, (name, args) in enumerate(calls)
            ]
            body = {"tool_calls": tool_calls, "step_id": f"{group}-{index}-{t}"}
            out = await self.send("POST", f"/episodes/{eid}/step", body)
            for msg in out["results"]:
                results.append(msg["content"])
                data = json.loads(msg["content"])
                if msg["name"] == "crm__createContact" and data.get("success"):
                    created = created or str(data["data"]["id"])
            self.steps += 1
            if self.on_step is not None:
                self.on_step(self.steps)
        graded = await self.send("POST", f"/episodes/{eid}/finish", {"answer": created if answers_id else ""})
        verdicts = [bool(c["passed"]) for c in graded["criteria"]]
        report = {
            "episode_id": eid,
            "verdicts": verdicts,
            "expected_n": n,
            "timeout_s": self.reward_timeout_s,
        }
        reward = await self.send("POST", f"/groups/{group}/reward", report)
        hashes, writes = await self._service_state(eid)
        await self.send("DELETE", f"/episodes/{eid}")
        return Outcome((group, index), eid, results, verdicts, graded["score"], hashes, writes, reward)

    async def _service_state(self, eid: str) -> tuple[dict[str, str], dict[str, int]]:
        hashes, writes = {}, {}
        for svc in SERVICES:
            admin = f"{self.services}/services/{svc}/admin/episodes/{eid}"
            got = await self.http.get(f"{admin}/hash", headers=ADMIN)
            if got.status_code == 404:
                continue  # not forked for this task
            hashes[svc] = got.json()["hash"]
            writes[svc] = len((await self.http.get(f"{admin}/log", headers=ADMIN)).json()["log"])
        return hashes, writes

    async def run(self, groups: list[str], n: int, arm: Callable[[], None] | None = None) -> list[Outcome]:
        """Open every rollout of every group, ``arm`` the kill point, then play them all concurrently."""
        keys = [(g, i) for g in groups for i in range(n)]
        eids = await asyncio.gather(*(self.open(g, i, n) for g, i in keys))
        if arm is not None:
            arm()
        return list(
            await asyncio.gather(*(self.play(g, i, n, e) for (g, i), e in zip(keys, eids, strict=True)))
        )
