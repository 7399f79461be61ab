"""The verl agent loop ``compo_agent`` driven with the real verl 0.9.1 classes and the REAL orchestrator.

Only the LLM is mocked: a scripted server manager returns the token ids of fixed completions
(Hermes ``<tool_call>``s per turn, then an answer). Tokenisation, tool-call parsing and response
masks are verl's own, on a real Qwen vocabulary built locally. The orchestrator is the real
embedded app (``compoworld.cli.build_embedded_app``: hand-made services from
tests/orchestrator_fixture.py, its group board included), reached over httpx ASGITransport.
What reached which episode is read back from the orchestrator itself: the trajectory
(``GET /episodes/{id}``) and the services' write logs (``/services/<svc>/admin/...``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip(
    "verl.experimental.agent_loop.tool_agent_loop",
    reason="verl is not installed: pip install -e '.[verl]' (verl==0.9.1 on the CPU torch wheel)",
)

import hydra
from omegaconf import OmegaConf
from starlette.responses import JSONResponse
from verl.experimental.agent_loop.agent_loop import (
    DictConfigWrap,
    ToolListWrap,
    _agent_loop_registry,
)
from verl.utils.dataset.rl_dataset import RLHFDataset
from verl.workers.rollout.replica import TokenOutput

from compoworld.cli import build_embedded_app
from compoworld.runtime import create_library_app
from compoworld.settings import Settings
from orchestrator.api import ENVIRONMENT_ERROR_CODES as ORCHESTRATOR_CODES
from orchestrator.api import StepResponse
from orchestrator.lifecycle import OrchestratorConfig
from orchestrator.models import GoldCall, Task
from orchestrator.reward import completion_focused_rewards
from orchestrator.server import attach_orchestrator, create_orchestrator_app
from orchestrator.tasksource import write_tasks
from tests.orchestrator_fixture import free_port, runtimes, task_create, task_update, write_library
from trainer.env_errors import ENVIRONMENT_ERROR_CODES, step_environment_error
from trainer.export_verl import task_row
from trainer.rollout_log import read_rollouts, summarize
from trainer.tokenizer import build_qwen_tokenizer
from trainer.verl_loop import CompoAgentLoop, PromptTooLongError

pytestmark = pytest.mark.verl

BASE_URL = "http://127.0.0.1:8000"
REPO = Path(__file__).resolve().parents[1]
SERVICES = ("crm", "desk", "mail")
# one admin token for the services and the orchestrator they are reached from (none is built in)
SETTINGS = Settings(admin_token="verl-loop-token")


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    return build_qwen_tokenizer()


def _trainer_config(n: int = 4, max_parallel_calls: int = 1) -> Any:
    import verl.trainer.config as cfg_pkg

    cfg = OmegaConf.load(Path(cfg_pkg.__file__).parent / "_generated_ppo_trainer.yaml")
    rollout = cfg.actor_rollout_ref.rollout
    rollout.n = n
    rollout.prompt_length = 4096
    rollout.response_length = 2048
    rollout.multi_turn.enable = True
    rollout.multi_turn.max_assistant_turns = 6
    rollout.multi_turn.max_tool_response_length = 4096
    rollout.multi_turn.format = "hermes"
    rollout.multi_turn.max_parallel_calls = max_parallel_calls  # 1, as in grpo.sh
    return cfg


class ScriptedLLM:
    """MOCK LLM (the only mock here): returns fixed completions, one per turn, per request id."""

    def __init__(self, tokenizer: Any, scripts: dict[str, list[str]]) -> None:
        self.tokenizer = tokenizer
        self.scripts = scripts  # script name -> completions
        self.by_request: dict[str, str] = {}
        self.turn: dict[str, int] = {}
        self.generated: dict[str, list[list[int]]] = {}
        self.prompts: dict[str, list[list[int]]] = {}
        self._queue: list[str] = []

    def expect(self, script: str) -> None:
        self._queue.append(script)

    def playing(self, script: str) -> ScriptedLLM:
        """A view that plays ``script`` for every request and records into this one's dicts."""
        view = ScriptedLLM(self.tokenizer, self.scripts)
        view.by_request, view.turn, view.generated, view.prompts = (
            self.by_request,
            self.turn,
            self.generated,
            self.prompts,
        )
        view._queue = _Always(script)
        return view

    async def generate(
        self, request_id: str, *, prompt_ids: list[int], sampling_params: dict, **_: Any
    ) -> Any:
        if request_id not in self.by_request:
            self.by_request[request_id] = self._queue.pop(0)
        name = self.by_request[request_id]
        turn = self.turn.get(request_id, 0)
        self.turn[request_id] = turn + 1
        text = self.scripts[name][min(turn, len(self.scripts[name]) - 1)]
        ids = [
            *self.tokenizer.encode(text, add_special_tokens=False),
            self.tokenizer.convert_tokens_to_ids("<|im_end|>"),
        ]
        self.generated.setdefault(name, []).append(ids)
        self.prompts.setdefault(name, []).append(list(prompt_ids))
        await asyncio.sleep(0)
        return TokenOutput(token_ids=ids, log_probs=None)


class _Always(list[str]):
    """A script queue that never runs out: every new request plays the same script."""

    def __init__(self, script: str) -> None:
        super().__init__([script])

    def pop(self, index: Any = -1) -> str:
        return self[0]


def _call_text(name: str, args: dict[str, Any]) -> str:
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": args}) + "\n</tool_call>"


def rollout_task() -> Task:
    """The fixture's create task, then a read of the new row, with a heavier first criterion (s_c = 2)."""
    task = task_create("t-trainer")
    task.gold_calls.append(GoldCall(service="crm", tool="getContact", arguments={"id": "con_000031"}))
    task.rubric[0].importance = 2.0
    return task


def scripts_for(task: Task) -> dict[str, list[str]]:
    """Behaviours derived from the task: replay the gold calls and answer, or cut corners."""
    gold = [_call_text(f"{c.service}__{c.tool}", c.arguments) for c in task.gold_calls]
    answer = "Done: " + ", ".join(task.answer_keys) + "."
    return {
        "solver": [*gold, answer],
        "one_turn": ["I will do both at once.\n" + "\n".join(gold), answer],
        "first_call_only": [gold[0], "I could not finish."],
        "no_tools": ["I will not use any tools."],
    }


def gold_calls(task: Task) -> list[tuple[str, dict[str, Any]]]:
    return [(f"{c.service}__{c.tool}", c.arguments) for c in task.gold_calls]


@dataclass
class Harness:
    """The real orchestrator app, the task the rollouts play, and read-backs from the app."""

    app: Any
    task: Task

    def transport(self) -> httpx.ASGITransport:
        return httpx.ASGITransport(app=self.app)

    async def get(self, path: str, *, admin: bool = False) -> httpx.Response:
        headers = {"Authorization": f"Bearer {SETTINGS.admin_token}"} if admin else {}
        async with httpx.AsyncClient(transport=self.transport(), base_url=BASE_URL) as http:
            return await http.get(path, headers=headers)

    async def trajectory(self, episode_id: str) -> dict[str, Any]:
        resp = await self.get(f"/episodes/{episode_id}")
        assert resp.status_code == 200, resp.text
        data: dict[str, Any] = resp.json()
        return data

    async def calls_of(self, episode_id: str) -> list[tuple[str, dict[str, Any]]]:
        """Tool calls the episode received, from its trajectory (arguments recorded as JSON strings)."""
        calls = []
        for msg in (await self.trajectory(episode_id))["messages"]:
            for call in msg.get("tool_calls") or []:
                assert isinstance(call["function"]["arguments"], str)
                calls.append((call["function"]["name"], json.loads(call["function"]["arguments"])))
        return calls

    async def writes_of(self, service: str, episode_id: str) -> list[dict[str, Any]]:
        """The service's own write log for the episode's fork."""
        resp = await self.get(f"/services/{service}/admin/episodes/{episode_id}/log", admin=True)
        assert resp.status_code == 200, resp.text
        log: list[dict[str, Any]] = resp.json()["log"]
        return log

    async def live_forks(self) -> dict[str, list[str]]:
        out = {}
        for svc in SERVICES:
            resp = await self.get(f"/services/{svc}/admin/episodes", admin=True)
            out[svc] = resp.json()["episodes"]
        return out


def _real_app(tmp_path: Path) -> Any:
    write_library(tmp_path / "lib", SERVICES)
    write_tasks(tmp_path / "tasks.jsonl", [rollout_task(), task_update()])
    app, _ = build_embedded_app(tmp_path / "lib", SETTINGS, tmp_path / "tasks.jsonl")
    return app


@pytest.fixture
def harness(tmp_path: Path) -> Harness:
    return Harness(app=_real_app(tmp_path), task=rollout_task())


def failing_steps(app: Any) -> Any:
    """Wrapper of the real app answering 503 to every ``/step``: the real orchestrator never fails a
    step by itself (a dead or slow service comes back as a ``service_unavailable`` tool result), so
    an orchestrator dying mid-rollout is played by this middleware. Every other route is the app's."""

    async def wrapped(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"].endswith("/step"):
            await JSONResponse({"detail": "injected: orchestrator unavailable"}, 503)(scope, receive, send)
            return
        await app(scope, receive, send)

    return wrapped


def make_loop(
    tokenizer: Any, llm: ScriptedLLM, app: Any | None, n: int = 4, max_parallel_calls: int = 1, **kw: Any
) -> CompoAgentLoop:
    cfg = _trainer_config(n, max_parallel_calls)
    kw.setdefault("orchestrator_url", BASE_URL)
    kw.setdefault("release_episodes", False)  # keep episodes so tests can read their trajectories
    if app is not None:
        kw.setdefault("transport", httpx.ASGITransport(app=app))
    return CompoAgentLoop(
        trainer_config=DictConfigWrap(cfg),
        server_manager=llm,
        tokenizer=tokenizer,
        processor=None,
        dataset_cls=RLHFDataset,
        data_config=DictConfigWrap(cfg.data),
        hf_model_type="qwen3",
        tools=ToolListWrap([]),
        **kw,
    )


def row_kwargs(task: Task, uid: str, session_id: int, mode: str = "direct") -> dict[str, Any]:
    """What verl passes to ``run``: the exported dataset row's fields plus uid/session_id."""
    row = task_row(task, 0, mode)  # type: ignore[arg-type]
    return {
        "raw_prompt": row["prompt"],
        "extra_info": row["extra_info"],
        "reward_model": row["reward_model"],
        "data_source": row["data_source"],
        "uid": uid,
        "session_id": session_id,
        "index": 0,
    }


TRAIN_SAMPLING = {"temperature": 1.0, "top_p": 1.0, "top_k": -1, "repetition_penalty": 1.0, "logprobs": False}


async def _run_group(
    tokenizer: Any, app: Any, task: Task, plan: list[str], uid: str, **kw: Any
) -> tuple[ScriptedLLM, list[Any]]:
    """verl runs the n sessions of one prompt concurrently; each loop instance is one trajectory.

    Each session's loop gets its own view of the scripted LLM (playing ``plan[i]``), so which
    behaviour a rollout plays never depends on timing."""
    llm = ScriptedLLM(tokenizer, scripts_for(task))
    loops = [make_loop(tokenizer, llm.playing(name), app, n=len(plan), **kw) for name in plan]
    runs = [
        asyncio.create_task(loop.run(dict(TRAIN_SAMPLING), **row_kwargs(task, uid, i)))
        for i, loop in enumerate(loops)
    ]
    return llm, list(await asyncio.gather(*runs))


async def test_group_of_rollouts_routes_tool_calls_and_gets_group_reward(
    tokenizer: Any, harness: Harness
) -> None:
    task = harness.task
    plan = ["solver", "first_call_only", "no_tools", "solver"]
    _, outputs = await _run_group(tokenizer, harness.app, task, plan, "uid-1")

    gold = gold_calls(task)
    expected_calls = {"solver": gold, "first_call_only": gold[:1], "no_tools": []}
    verdicts = []
    for i, (name, out) in enumerate(zip(plan, outputs, strict=True)):
        episode_id = out.extra_fields["compo_episode_id"]
        traj = await harness.trajectory(episode_id)
        assert traj["meta"]["task_id"] == task.id and traj["meta"]["group_id"] == "uid-1"
        assert traj["meta"]["rollout_idx"] == i and traj["meta"]["finish_reason"] == "answered"
        assert await harness.calls_of(episode_id) == expected_calls[name]
        # the write reached this episode's fork of crm, and only this one's
        writes = [w["tool"] for w in await harness.writes_of("crm", episode_id)]
        assert writes == (["createContact"] if name != "no_tools" else [])
        assert out.extra_fields["compo_abort_reason"] == ""
        verdicts.append(out.extra_fields["compo_verdicts"])
    assert verdicts == [[True, True, True], [True, True, False], [False, True, False], [True, True, True]]
    solver = await harness.trajectory(outputs[0].extra_fields["compo_episode_id"])
    assert solver["messages"][-1] == {"role": "assistant", "content": "Done: con_000031."}

    importance = [c.importance for c in task.rubric]
    assert importance == [2.0, 1.0, 1.0]  # reaches the reward via the row's extra_info.importance
    expected = completion_focused_rewards(verdicts, importance)
    assert [o.reward_score for o in outputs] == pytest.approx(expected)
    assert outputs[1].reward_score != pytest.approx(completion_focused_rewards(verdicts, None)[1])
    assert outputs[0].reward_score == max(o.reward_score for o in outputs) == 1.0
    info = outputs[1].extra_fields["reward_extra_info"]
    assert info["group_fallback"] == 0 and info["n_criteria"] == 3 and info["aborted"] == 0
    completions = [o.extra_fields["reward_extra_info"]["completion"] for o in outputs]
    assert sum(completions) / len(completions) == 0.5  # the group's all-pass rate


@pytest.mark.parametrize("parallel", [1, 2])
async def test_calls_of_one_turn_go_to_the_orchestrator_as_one_step(
    tokenizer: Any, harness: Harness, parallel: int
) -> None:
    """Both calls of the turn in one step, or only the first when verl runs one call per turn."""
    _, (out,) = await _run_group(
        tokenizer, harness.app, harness.task, ["one_turn"], "one", max_parallel_calls=parallel
    )
    episode_id = out.extra_fields["compo_episode_id"]
    traj = await harness.trajectory(episode_id)
    turns = [m for m in traj["messages"] if m["role"] == "assistant" and m.get("tool_calls")]
    assert len(turns) == 1 and len(turns[0]["tool_calls"]) == parallel
    assert turns[0]["content"] == "I will do both at once."  # the turn's text, no special tokens
    assert await harness.calls_of(episode_id) == gold_calls(harness.task)[:parallel]
    assert traj["meta"]["n_tool_calls"] == parallel and traj["meta"]["n_steps"] == 2  # one step + answer
    assert out.extra_fields["compo_verdicts"] == [True, True, True]


async def test_response_mask_marks_generated_tokens_one_and_tool_tokens_zero(
    tokenizer: Any, harness: Harness
) -> None:
    llm = ScriptedLLM(tokenizer, scripts_for(harness.task))
    llm.expect("first_call_only")
    out = await make_loop(tokenizer, llm, harness.app, n=1).run(
        dict(TRAIN_SAMPLING), **row_kwargs(harness.task, "u", 0)
    )
    gen1, gen2 = llm.generated["first_call_only"]
    mask = out.response_mask
    assert len(mask) == len(out.response_ids)
    assert mask[: len(gen1)] == [1] * len(gen1) and out.response_ids[: len(gen1)] == gen1
    assert mask[-len(gen2) :] == [1] * len(gen2) and out.response_ids[-len(gen2) :] == gen2
    middle = out.response_ids[len(gen1) : -len(gen2)]
    assert mask[len(gen1) : -len(gen2)] == [0] * len(middle)
    observed = tokenizer.decode(middle)
    assert "<tool_response>" in observed and '"name": "Ann Lee"' in observed
    assert '"id": "con_000031"' in observed  # the row the real crm service created in this episode
    # the second generation saw the tool result in its prompt, produced by verl's Continuous Token path
    assert llm.prompts["first_call_only"][1][-len(middle) - len(gen1) :][len(gen1) :] == middle
    # n = 1: a group of one scores with static weights and is complete at once
    assert out.extra_fields["reward_extra_info"]["group_fallback"] == 0


async def test_graded_episodes_are_released_on_the_orchestrator(tokenizer: Any, harness: Harness) -> None:
    _, outputs = await _run_group(
        tokenizer, harness.app, harness.task, ["solver", "no_tools"], "rel", release_episodes=True
    )
    assert [o.extra_fields["compo_verdicts"][0] for o in outputs] == [True, False]
    for out in outputs:
        assert (await harness.get(f"/episodes/{out.extra_fields['compo_episode_id']}")).status_code == 404
    assert await harness.live_forks() == {svc: [] for svc in SERVICES}


async def test_row_mode_gateway_opens_a_gateway_episode(tokenizer: Any, harness: Harness) -> None:
    llm = ScriptedLLM(tokenizer, scripts_for(harness.task))
    llm.expect("no_tools")
    out = await make_loop(tokenizer, llm, harness.app, n=1).run(
        dict(TRAIN_SAMPLING), **row_kwargs(harness.task, "gw", 0, mode="gateway")
    )
    traj = await harness.trajectory(out.extra_fields["compo_episode_id"])
    assert traj["meta"]["discover_mode"] == "gateway"
    assert sorted(t["function"]["name"] for t in traj["tools"]) == [
        "call_tool",
        "describe_tool",
        "list_services",
        "list_tools",
    ]


async def test_unreachable_orchestrator_masks_the_rollout_without_hanging(
    tokenizer: Any, caplog: Any
) -> None:
    task = rollout_task()
    llm = ScriptedLLM(tokenizer, scripts_for(task))
    loop = make_loop(
        tokenizer, llm, None, n=4, orchestrator_url=f"http://127.0.0.1:{free_port()}", http_timeout_s=5
    )
    start = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="trainer.verl_loop"):
        out = await loop.run(dict(TRAIN_SAMPLING), **row_kwargs(task, "uid-dead", 0))
    assert time.monotonic() - start < 10
    assert out.reward_score == 0.0
    assert out.response_mask == [0]
    assert "open failed" in out.extra_fields["compo_abort_reason"]
    assert "aborted by the environment, masked out of the loss" in caplog.text
    assert out.extra_fields["reward_extra_info"]["aborted"] == 1
    assert llm.generated == {}


async def test_dead_service_fails_the_open_and_masks_the_rollout(tokenizer: Any, tmp_path: Path) -> None:
    """The real orchestrator alone, its services at a closed port on 127.0.0.1: forking fails (503)."""
    write_tasks(tmp_path / "tasks.jsonl", [rollout_task()])
    dead = f"http://127.0.0.1:{free_port()}"
    app = create_orchestrator_app(SETTINGS, tmp_path / "tasks.jsonl", urls={svc: [dead] for svc in SERVICES})
    llm = ScriptedLLM(tokenizer, scripts_for(rollout_task()))
    start = time.monotonic()
    out = await make_loop(tokenizer, llm, app, n=2).run(
        dict(TRAIN_SAMPLING), **row_kwargs(rollout_task(), "dead-svc", 0)
    )
    assert time.monotonic() - start < 10
    assert out.reward_score == 0.0 and out.response_mask == [0]
    reason = out.extra_fields["compo_abort_reason"]
    assert reason.startswith("open failed") and "HTTP 503" in reason
    assert llm.generated == {}


async def test_a_503_mid_rollout_masks_the_rollout_counts_it_and_the_group_treats_it_as_aborted(
    tokenizer: Any, harness: Harness, tmp_path: Path
) -> None:
    app = failing_steps(harness.app)  # see failing_steps: /step answers 503, the rest is the real app
    start = time.monotonic()
    llm, (failed, sibling) = await _run_group(
        tokenizer,
        app,
        harness.task,
        ["solver", "no_tools"],
        "g",
        group_timeout_s=60,
        rollout_log_dir=str(tmp_path / "rollouts"),
    )
    reason = failed.extra_fields["compo_abort_reason"]
    assert reason.startswith("step failed") and "HTTP 503" in reason
    # generated tokens exist, but none of them is trained on: not punished for a dead service
    assert len(failed.response_ids) > 0 and set(failed.response_mask) == {0}
    assert failed.extra_fields["reward_extra_info"]["aborted"] == 1
    assert len(llm.generated["solver"]) == 1  # stopped after the failed step, no more generation
    traj = await harness.trajectory(failed.extra_fields["compo_episode_id"])
    assert traj["meta"]["state"] == "aborted" and traj["meta"]["n_tool_calls"] == 0  # never finished
    assert await harness.writes_of("crm", failed.extra_fields["compo_episode_id"]) == []
    # the sibling is not left waiting: the aborted rollout reported all-False to the group at once
    assert time.monotonic() - start < 30
    info = sibling.extra_fields["reward_extra_info"]
    assert info["group_fallback"] == 0 and info["aborted"] == 0 and 1 in sibling.response_mask
    importance = [c.importance for c in harness.task.rubric]
    rows = [sibling.extra_fields["compo_verdicts"], [False, False, False]]  # aborted: kept in p_c and n
    assert sibling.reward_score == pytest.approx(completion_focused_rewards(rows, importance)[0])
    # counted: the rollout log's per-step view
    (summary,) = summarize(read_rollouts(tmp_path / "rollouts"))
    assert (summary.rollouts, summary.env_aborted) == (2, 1)
    assert {r.abort_reason for r in read_rollouts(tmp_path / "rollouts") if r.aborted} == {reason}


class LosingState(ScriptedLLM):
    """The scripted LLM, and between its first and second generation the crm service loses every
    episode fork (as a restarted service does): the real orchestrator then answers the next call
    with an ``episode_gone`` result and reports ``environment_error``."""

    def __init__(self, base: ScriptedLLM, app: Any, script: str) -> None:
        super().__init__(base.tokenizer, base.scripts)
        view = base.playing(script)
        self.__dict__.update({k: v for k, v in view.__dict__.items() if k != "generate"})
        self.app = app

    async def generate(self, request_id: str, **kw: Any) -> Any:
        if self.turn.get(request_id) == 1:
            headers = {"Authorization": f"Bearer {SETTINGS.admin_token}"}
            transport = httpx.ASGITransport(app=self.app)
            async with httpx.AsyncClient(transport=transport, base_url=BASE_URL, headers=headers) as http:
                for eid in (await http.get("/services/crm/admin/episodes")).json()["episodes"]:
                    assert (await http.delete(f"/services/crm/admin/episodes/{eid}")).status_code < 300
        return await super().generate(request_id, **kw)


async def test_a_service_losing_the_episode_state_masks_the_rollout(tokenizer: Any, harness: Harness) -> None:
    base = ScriptedLLM(tokenizer, scripts_for(harness.task))
    loop = make_loop(tokenizer, LosingState(base, harness.app, "solver"), harness.app, n=1)
    out = await loop.run(dict(TRAIN_SAMPLING), **row_kwargs(harness.task, "lost", 0))
    reason = out.extra_fields["compo_abort_reason"]
    assert reason.startswith("environment failed: crm__getContact: episode_gone"), reason
    assert set(out.response_mask) == {0} and out.extra_fields["reward_extra_info"]["aborted"] == 1
    assert len(base.generated["solver"]) == 2  # the rollout ended at the broken step


def test_an_environment_error_is_read_from_the_step_answer() -> None:
    ok = '{"success": true, "data": {}}'
    down = '{"success": false, "error": {"code": "service_unavailable", "message": "no answer within 5 s"}}'
    mistake = '{"success": false, "error": {"code": "unknown_tool", "message": "no such tool"}}'

    def step(*contents: str, **kw: Any) -> StepResponse:
        results = [{"tool_call_id": f"c{i}", "name": "crm__x", "content": c} for i, c in enumerate(contents)]
        return StepResponse.model_validate(
            {"results": results, "done": False, "state": "running", "steps_left": 1, **kw}
        )

    assert step_environment_error(step(ok, mistake)) is None  # the policy's own mistake is graded
    assert step_environment_error(step(ok, down)) == "crm__x: service_unavailable: no answer within 5 s"
    assert (
        step_environment_error(step(ok, environment_error="x: episode_gone: gone")) == "x: episode_gone: gone"
    )
    assert "aborted the episode (lost)" in (
        step_environment_error(step(state="aborted", finish_reason="lost")) or ""
    )
    assert ENVIRONMENT_ERROR_CODES == ORCHESTRATOR_CODES  # the trainer's copy agrees with the orchestrator


async def test_a_prompt_over_the_prompt_length_is_refused_not_truncated(
    tokenizer: Any, harness: Harness
) -> None:
    loop = make_loop(tokenizer, ScriptedLLM(tokenizer, scripts_for(harness.task)), harness.app, n=1)
    loop.prompt_length = 300  # the direct-mode prompt of three services' tools is ~2,500 tokens
    with pytest.raises(
        PromptTooLongError, match=r"task t-trainer \(direct mode\).*over rollout.prompt_length=300"
    ):
        await loop.run(dict(TRAIN_SAMPLING), **row_kwargs(harness.task, "long", 0))
    (episode,) = (await harness.get("/admin/episodes", admin=True)).json()["episodes"]
    assert episode["state"] == "aborted"  # opened once, then closed: not left live


async def test_episode_ending_at_max_steps_terminates_the_rollout_and_is_graded(
    tokenizer: Any, tmp_path: Path
) -> None:
    """The real orchestrator with max_steps=1: the first step finishes the episode (done)."""
    write_tasks(tmp_path / "tasks.jsonl", [rollout_task()])
    services = runtimes(tmp_path / "lib", SERVICES)
    app = create_library_app(services, SETTINGS)
    attach_orchestrator(app, services, SETTINGS, tmp_path / "tasks.jsonl", OrchestratorConfig(max_steps=1))
    llm, (out,) = await _run_group(tokenizer, app, rollout_task(), ["solver"], "short")
    assert len(llm.generated["solver"]) == 1  # no generation after the episode said done
    assert out.extra_fields["compo_abort_reason"] == ""
    assert out.extra_fields["compo_verdicts"] == [True, True, False]  # graded at max_steps, no answer
    traj = await Harness(app=app, task=rollout_task()).trajectory(out.extra_fields["compo_episode_id"])
    assert traj["meta"]["finish_reason"] == "max_steps"


async def test_missing_sibling_times_out_to_static_weights(tokenizer: Any, harness: Harness) -> None:
    llm = ScriptedLLM(tokenizer, scripts_for(harness.task))
    llm.expect("first_call_only")
    loop = make_loop(tokenizer, llm, harness.app, n=3, group_timeout_s=0.2)
    out = await loop.run(dict(TRAIN_SAMPLING), **row_kwargs(harness.task, "lonely", 0))
    verdicts = out.extra_fields["compo_verdicts"]
    assert verdicts == [True, True, False]
    importance = [c.importance for c in harness.task.rubric]
    assert out.reward_score == pytest.approx(completion_focused_rewards([verdicts], importance)[0])
    assert out.extra_fields["reward_extra_info"]["group_fallback"] == 1


def test_group_size_is_configuration_for_training_and_validation(
    tokenizer: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """compo_agent waits for rollout.n siblings, compo_agent_val for val_kwargs.n, whatever the sampling."""
    entries: Any = OmegaConf.load(REPO / "trainer" / "config" / "agent_loops.yaml")
    cfg = _trainer_config(8)
    cfg.actor_rollout_ref.rollout.val_kwargs.n = 3
    cfg.actor_rollout_ref.rollout.val_kwargs.temperature = 1.0  # same sampling as training: no guessing
    sizes = {}
    for entry in entries:
        loop = hydra.utils.instantiate(
            config=entry,
            trainer_config=DictConfigWrap(config=cfg),
            server_manager=ScriptedLLM(tokenizer, {}),
            tokenizer=tokenizer,
            processor=None,
            hf_model_type="qwen3",
            dataset_cls=RLHFDataset,
            data_config=DictConfigWrap(cfg.data),
            tools=ToolListWrap([]),
        )
        sizes[entry.name] = loop.expected_group_size()
    assert sizes == {"compo_agent": 8, "compo_agent_val": 3}
    assert make_loop(tokenizer, ScriptedLLM(tokenizer, {}), None, expected_n=5).expected_group_size() == 5
    assert task_row(rollout_task(), 0, validation=True)["agent_name"] == "compo_agent_val"


def test_agent_loop_yaml_instantiates_like_verl_worker(
    tokenizer: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Load trainer/config/agent_loops.yaml the way AgentLoopWorker does and instantiate it."""
    monkeypatch.setenv("COMPOWORLD_ORCHESTRATOR_URL", "http://127.0.0.1:9911")
    entries: Any = OmegaConf.load(REPO / "trainer" / "config" / "agent_loops.yaml")
    entry = next(e for e in entries if e.name == "compo_agent")
    cfg = _trainer_config(2)
    loop = hydra.utils.instantiate(
        config=entry,
        trainer_config=DictConfigWrap(config=cfg),
        server_manager=ScriptedLLM(tokenizer, {}),
        tokenizer=tokenizer,
        processor=None,
        hf_model_type="qwen3",
        dataset_cls=RLHFDataset,
        data_config=DictConfigWrap(cfg.data),
        tools=ToolListWrap([]),
    )
    assert isinstance(loop, CompoAgentLoop)
    assert loop.orchestrator_url == "http://127.0.0.1:9911"
    assert loop.release_episodes is True and loop.mode == "gateway" and loop.validation is False
    assert _agent_loop_registry["compo_agent"]["_target_"] == "trainer.verl_loop.CompoAgentLoop"


def test_verl_rlhf_dataset_reads_the_export(tokenizer: Any, tmp_path: Path) -> None:
    from trainer.export_verl import write_verl_parquet

    out = tmp_path / "train.parquet"
    tasks = [rollout_task(), task_update()]
    write_verl_parquet(tasks, out)
    cfg = _trainer_config(2)
    data_cfg: Any = OmegaConf.merge(
        cfg.data, {"cache_dir": str(tmp_path / "cache"), "max_prompt_length": 4096}
    )
    ds = RLHFDataset(data_files=str(out), tokenizer=tokenizer, config=data_cfg, processor=None)
    assert len(ds) == len(tasks)
    item = ds[0]
    assert item["agent_name"] == "compo_agent"
    assert item["raw_prompt"][0]["role"] == "system" and "2026-03-04" in item["raw_prompt"][0]["content"]
    assert item["extra_info"]["task_id"] == tasks[0].id
    assert list(item["extra_info"]["importance"]) == [2.0, 1.0, 1.0]


async def test_answer_comes_from_the_last_generation_even_at_the_turn_limit(
    tokenizer: Any, harness: Harness
) -> None:
    llm = ScriptedLLM(tokenizer, scripts_for(harness.task))
    llm.expect("first_call_only")
    loop = make_loop(tokenizer, llm, harness.app, n=1)
    loop.max_assistant_turns = 2  # verl stops before appending the second assistant message
    out = await loop.run(dict(TRAIN_SAMPLING), **row_kwargs(harness.task, "limit", 0))
    traj = await harness.trajectory(out.extra_fields["compo_episode_id"])
    assert traj["meta"]["finish_reason"] == "answered"
    assert traj["messages"][-1] == {"role": "assistant", "content": "I could not finish."}
