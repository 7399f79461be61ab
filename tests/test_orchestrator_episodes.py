"""Episodes in process: forks, grading, the state machine, limits, reaping, seeds, isolation."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from compoworld.runtime import ServiceRuntime
from compoworld.settings import Settings
from orchestrator.api import OpenRequest, StepRequest, ToolCall
from orchestrator.episodes import Orchestrator
from orchestrator.errors import EpisodeConflict, EpisodeNotFound, InvalidRequest, TaskNotFound
from orchestrator.lifecycle import OrchestratorConfig
from orchestrator.tasksource import TaskRegistry
from tests.orchestrator_fixture import runtimes, task_create, task_update, tool_content


@pytest.fixture
def rts(tmp_path: Path) -> dict[str, ServiceRuntime]:
    return runtimes(tmp_path)


def orch_of(rts: dict[str, ServiceRuntime], **config: float) -> Orchestrator:
    cfg = OrchestratorConfig.model_validate(config) if config else None
    kwargs = {"config": cfg} if cfg else {}
    return Orchestrator.embedded(rts, Settings(), TaskRegistry([task_create(), task_update()]), **kwargs)


def call(name: str, args: object, call_id: str | None = None) -> StepRequest:
    return StepRequest(tool_calls=[ToolCall(id=call_id, name=name, arguments=args)])


async def test_open_forks_task_services_and_distractors_and_delete_releases_them(
    rts: dict[str, ServiceRuntime],
) -> None:
    orch = orch_of(rts)
    opened = await orch.open(OpenRequest(task_id="t-update"))
    assert all(rts[s].has_episode(opened.episode_id) for s in ("crm", "desk", "mail"))
    assert opened.messages[0]["role"] == "system" and "2026-03-04" in opened.messages[0]["content"]
    assert opened.messages[-1] == {"role": "user", "content": task_update().instruction}
    await orch.delete(opened.episode_id)
    assert not any(rts[s].has_episode(opened.episode_id) for s in ("crm", "desk", "mail"))
    with pytest.raises(EpisodeNotFound):
        await orch.trajectory(opened.episode_id)


async def test_gold_calls_pass_every_criterion_and_doing_nothing_fails(
    rts: dict[str, ServiceRuntime],
) -> None:
    orch = orch_of(rts)
    gold = await orch.open(OpenRequest(task_id="t-create"))
    step = await orch.step(
        gold.episode_id,
        call("crm__createContact", {"name": "Ann Lee", "email": "ann@example.com", "company_id": 2}),
    )
    created = tool_content(step.results[0])
    assert (
        created["success"] and created["data"]["created_at"] == "2026-03-04T12:00:00Z"
    )  # the task's frozen day
    graded = await orch.finish(gold.episode_id, "Her id is con_000031.")
    assert (
        graded.complete and graded.score == 1.0 and [v.passed for v in graded.criteria] == [True, True, True]
    )
    noop = await orch.open(OpenRequest(task_id="t-create"))
    idle = await orch.finish(noop.episode_id, "")
    assert not idle.complete
    assert {v.id: v.passed for v in idle.criteria} == {"c0": False, "c1": True, "c2": False}
    assert idle.score == pytest.approx(1 / 3)


async def test_trajectory_is_in_the_published_format(rts: dict[str, ServiceRuntime]) -> None:
    orch = orch_of(rts)
    opened = await orch.open(OpenRequest(task_id="t-create", seed=3, rollout_idx=2, source="compoworld/test"))
    await orch.step(opened.episode_id, call("crm__listContacts", '{"limit": 2}', "c-1"))
    await orch.finish(opened.episode_id, "con_000031")
    traj = (await orch.trajectory(opened.episode_id)).model_dump(mode="json")
    assert set(traj) == {"tools", "messages", "meta", "source"} and traj["source"] == "compoworld/test"
    roles = [m["role"] for m in traj["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "assistant"]
    tool_call = traj["messages"][2]["tool_calls"][0]
    assert tool_call == {
        "id": "c-1",
        "type": "function",
        "function": {"name": "crm__listContacts", "arguments": '{"limit": 2}'},
    }
    assert traj["messages"][3]["tool_call_id"] == "c-1" and traj["messages"][3]["name"] == "crm__listContacts"
    meta = traj["meta"]
    assert meta["task_id"] == "t-create" and meta["rollout_idx"] == 2 and meta["discover_mode"] == "direct"
    assert meta["n_tool_calls"] == 1 and meta["n_real_tool_calls"] == 1 and meta["n_steps"] == 2
    assert (
        meta["finish_reason"] == "answered"
        and meta["walk_length"] == 1
        and meta["capabilities"] == ["create"]
    )
    assert [c["id"] for c in meta["criteria"]] == ["c0", "c1", "c2"] and meta["library_version"]


async def test_the_seed_orders_tools_and_services_reproducibly(rts: dict[str, ServiceRuntime]) -> None:
    orch = orch_of(rts)

    async def listing(seed: int, mode: str) -> list[str]:
        opened = await orch.open(OpenRequest(task_id="t-update", seed=seed, mode=mode))  # type: ignore[arg-type]
        if mode == "direct":
            return [t["function"]["name"] for t in opened.tools]
        step = await orch.step(opened.episode_id, call("list_services", {}))
        return list(tool_content(step.results[0])["services"])

    for mode in ("direct", "gateway"):
        assert await listing(7, mode) == await listing(7, mode)
        orders = {tuple(await listing(seed, mode)) for seed in range(6)}
        assert len(orders) > 1, f"{mode}: the seed does not change the order"


async def test_a_finished_episode_refuses_calls_and_a_second_finish_returns_the_first_result(
    rts: dict[str, ServiceRuntime],
) -> None:
    orch = orch_of(rts)
    opened = await orch.open(OpenRequest(task_id="t-create"))
    first = await orch.finish(opened.episode_id, "nothing")
    with pytest.raises(EpisodeConflict, match="finished"):
        await orch.step(opened.episode_id, call("crm__listContacts", {}))
    again = await orch.finish(opened.episode_id, "con_000031 now")
    assert again.model_dump() == first.model_dump()
    with pytest.raises(EpisodeConflict):
        await orch.abort(opened.episode_id, "late")


async def test_abort_fails_every_criterion_and_blocks_finish(rts: dict[str, ServiceRuntime]) -> None:
    orch = orch_of(rts)
    opened = await orch.open(OpenRequest(task_id="t-create"))
    aborted = await orch.abort(opened.episode_id, "error: model endpoint down")
    assert aborted.state == "aborted" and aborted.score == 0.0
    assert [v.passed for v in aborted.criteria] == [False, False, False]
    with pytest.raises(EpisodeConflict, match="aborted"):
        await orch.finish(opened.episode_id, "x")
    traj = await orch.trajectory(opened.episode_id)
    assert traj.meta.finish_reason == "error: model endpoint down"


async def test_an_agent_that_never_stops_is_terminated_at_max_steps(rts: dict[str, ServiceRuntime]) -> None:
    orch = orch_of(rts)
    opened = await orch.open(OpenRequest(task_id="t-create", max_steps=3))
    for i in range(3):
        step = await orch.step(opened.episode_id, call("crm__listContacts", {"limit": 1}))
        assert step.done == (i == 2) and step.steps_left == 2 - i
    assert step.state == "finished" and step.finish_reason == "max_steps"
    with pytest.raises(EpisodeConflict, match="max_steps"):
        await orch.step(opened.episode_id, call("crm__listContacts", {}))
    traj = await orch.trajectory(opened.episode_id)
    assert traj.meta.finish_reason == "max_steps" and traj.meta.n_steps == 3 and len(traj.meta.criteria) == 3


async def test_past_its_wall_time_an_episode_finishes_with_timeout(rts: dict[str, ServiceRuntime]) -> None:
    orch = orch_of(rts)
    opened = await orch.open(OpenRequest(task_id="t-create", max_wall_s=0.01))
    await asyncio.sleep(0.03)
    step = await orch.step(opened.episode_id, call("crm__listContacts", {}))
    assert step.done and step.finish_reason == "timeout" and step.results == []


async def test_abandoned_episodes_expire_and_their_forks_are_deleted_everywhere(
    rts: dict[str, ServiceRuntime],
) -> None:
    orch = orch_of(rts, idle_ttl_s=60, retain_s=60)
    opened = await orch.open(OpenRequest(task_id="t-update"))
    kept = await orch.open(OpenRequest(task_id="t-update"))
    import time

    orch_rec = await orch.store.get(kept.episode_id)
    assert orch_rec is not None
    orch_rec.last_active = time.time() + 100  # still active "later"
    await orch.store.put(orch_rec)
    assert await orch.reap(now=time.time() + 61) == 1
    assert not any(rts[s].has_episode(opened.episode_id) for s in ("crm", "desk", "mail"))
    assert all(rts[s].has_episode(kept.episode_id) for s in ("crm", "desk", "mail"))
    with pytest.raises(EpisodeConflict, match="expired"):
        await orch.step(opened.episode_id, call("crm__listContacts", {}))
    assert (await orch.trajectory(opened.episode_id)).meta.finish_reason == "idle"
    await orch.reap(now=time.time() + 200)  # terminal records are forgotten after retain_s
    with pytest.raises(EpisodeNotFound):
        await orch.trajectory(opened.episode_id)


async def test_bad_calls_are_observations_and_bad_requests_are_errors(rts: dict[str, ServiceRuntime]) -> None:
    orch = orch_of(rts)
    opened = await orch.open(OpenRequest(task_id="t-create"))
    step = await orch.step(
        opened.episode_id,
        StepRequest(
            tool_calls=[
                ToolCall(name="crm__nope", arguments={}),
                ToolCall(name="crm__createContact", arguments="{not json"),
                ToolCall(name="crm__createContact", arguments="[1, 2]"),
                ToolCall(name="crm__createContact", arguments={"name": 5}),
            ]
        ),
    )
    codes = [tool_content(r)["error"]["code"] for r in step.results]
    assert codes == ["unknown_tool", "invalid_arguments", "invalid_arguments", "invalid_arguments"]
    traj = await orch.trajectory(opened.episode_id)
    assert traj.meta.n_tool_calls == 4 and traj.meta.n_real_tool_calls == 1
    assert (
        traj.messages[2]["tool_calls"][1]["function"]["arguments"] == "{not json"
    )  # kept as the model sent it
    with pytest.raises(EpisodeNotFound, match="unknown episode"):
        await orch.step("no-such-episode", call("crm__listContacts", {}))
    with pytest.raises(TaskNotFound, match="unknown task 'nope'"):
        await orch.open(OpenRequest(task_id="nope"))
    bad = task_create().model_copy(update={"distractors": ["ghost"]})
    with pytest.raises(InvalidRequest, match="unknown service 'ghost'"):
        await orch.open(OpenRequest(task=bad))


async def test_two_concurrent_episodes_of_one_task_never_see_each_other(
    rts: dict[str, ServiceRuntime],
) -> None:
    orch = orch_of(rts)
    a, b = await asyncio.gather(*(orch.open(OpenRequest(task_id="t-create")) for _ in range(2)))

    async def drive(eid: str, name: str) -> None:
        for i in range(5):
            await orch.step(eid, call("crm__createContact", {"name": f"{name}{i}"}))
            await asyncio.sleep(0)
        await orch.step(
            eid,
            call("crm__deleteContact", {"id": "con_000002"})
            if name == "a"
            else call("crm__listContacts", {}),
        )

    await asyncio.gather(drive(a.episode_id, "a"), drive(b.episode_id, "b"))
    await orch.finish(a.episode_id, "")  # finishing one ...
    with pytest.raises(EpisodeConflict):
        await orch.step(a.episode_id, call("crm__listContacts", {}))
    step = await orch.step(
        b.episode_id, call("crm__listContacts", {"limit": 100})
    )  # ... leaves the other running
    names = {c["name"] for c in tool_content(step.results[0])["data"]["items"]}
    assert {"b0", "b4", "Person 2"} <= names and not names & {"a0", "a4"}
    assert rts["crm"].select(a.episode_id, "contact", {"id": "con_000002"}) == []
    assert rts["crm"].select(None, "contact", {"id": "con_000002"}) != []  # the seed is untouched


async def test_nothing_of_the_graders_view_reaches_the_agent(rts: dict[str, ServiceRuntime]) -> None:
    orch = orch_of(rts)
    task = task_update()
    secret = "SECRET-GOLD-VALUE"
    task.gold_calls[1].arguments["note"] = secret
    task.rubric[0].description = secret
    task.answer_keys = [secret]
    task.expected_state_hash = {"desk": secret}
    for mode in ("direct", "gateway", "mcp"):
        opened = await orch.open(OpenRequest(task=task, mode=mode))  # type: ignore[arg-type]
        step = await orch.step(
            opened.episode_id, call("list_services" if mode == "gateway" else "crm__listContacts", {})
        )
        before = await orch.trajectory(opened.episode_id)
        seen = json.dumps(
            [opened.model_dump(mode="json"), step.model_dump(mode="json"), before.model_dump(mode="json")]
        )
        assert secret not in seen
        for key in ("gold_calls", "rubric", "answer_keys", "expected_state_hash", "x-backend", "x-kind"):
            assert f'"{key}"' not in seen
        assert before.meta.criteria == []  # verdicts only once the episode is over
