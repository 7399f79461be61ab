"""grpo.sh composes a verl config that verl itself accepts, for both profiles; preflight refuses bad launches.

The compose runs grpo.sh for real with Hydra's ``--cfg job`` (verl 0.9.1's own config tree,
every override checked to exist) and then verl's ``validate_config`` on the result, the check
``main_ppo`` runs before training. No GPU is needed for either. The preflight checks run against
real parquet exports and a real orchestrator served on 127.0.0.1.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("verl.utils.config", reason="verl is not installed: pip install -e '.[verl]'")

from omegaconf import OmegaConf
from verl.trainer.ppo.utils import need_critic, need_reference_policy
from verl.utils.config import validate_config

from compoworld.runtime import create_library_app
from compoworld.settings import Settings
from orchestrator.server import attach_orchestrator
from orchestrator.tasksource import write_tasks
from tests.orchestrator_fixture import runtimes, task_create, task_update
from trainer.export_verl import write_verl_parquet
from trainer.preflight import PreflightError, check_orchestrator, check_splits
from trainer.smoke_env import serving

pytestmark = pytest.mark.verl
REPO = Path(__file__).resolve().parents[1]
GRPO = REPO / "trainer" / "scripts" / "grpo.sh"


def _grpo(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    full = {
        **os.environ,
        "MODEL_PATH": str(tmp_path / "model"),
        "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",
        **env,
    }
    return subprocess.run(["bash", str(GRPO), *args], capture_output=True, text=True, env=full, timeout=300)


@pytest.mark.parametrize(("profile", "gpus", "tp"), [("1gpu", 1, 1), ("8gpu", 8, 2)])
def test_grpo_profile_composes_and_passes_verls_validate_config(
    tmp_path: Path, profile: str, gpus: int, tp: int
) -> None:
    proc = _grpo(
        tmp_path,
        "trainer.total_training_steps=2",
        "--cfg",
        "job",
        PROFILE=profile,
        VAL_N="3",
        CLIP_HIGH="0.28",
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    cfg: Any = OmegaConf.create(proc.stdout)
    validate_config(cfg, use_reference_policy=need_reference_policy(cfg), use_critic=need_critic(cfg))
    rollout, trainer = cfg.actor_rollout_ref.rollout, cfg.trainer
    assert trainer.n_gpus_per_node == gpus and rollout.tensor_model_parallel_size == tp
    world = trainer.n_gpus_per_node * trainer.nnodes
    per_replica = (
        rollout.tensor_model_parallel_size * rollout.data_parallel_size * rollout.pipeline_model_parallel_size
    )
    assert world % per_replica == 0 and world // per_replica >= 1  # whole vLLM replicas (1 // 2 = 0 before)
    assert trainer.save_freq > 0 and trainer.max_actor_ckpt_to_keep >= 1 and trainer.resume_mode == "auto"
    assert trainer.val_before_train is True and trainer.test_freq > 0
    assert cfg.data.val_files != cfg.data.train_files and cfg.data.val_files.endswith("val.parquet")
    assert rollout.val_kwargs.n == 3 and rollout.val_kwargs.do_sample is True
    assert rollout.multi_turn.max_parallel_calls > 1  # the published trajectories make parallel calls
    assert rollout.agent.default_agent_loop == "compo_agent" and rollout.multi_turn.format == "hermes"
    assert rollout.agent.agent_loop_config_path == str(REPO / "trainer" / "config" / "agent_loops.yaml")
    assert cfg.algorithm.adv_estimator == "grpo" and trainer.total_training_steps == 2
    actor = cfg.actor_rollout_ref.actor
    assert (actor.clip_ratio_low, actor.clip_ratio_high) == (0.2, 0.28)  # CLIP_LOW default, CLIP_HIGH given


def test_grpo_refuses_a_tensor_parallel_size_that_leaves_no_replica(tmp_path: Path) -> None:
    proc = _grpo(tmp_path, "--cfg", "job", PROFILE="1gpu", TP="2")
    assert proc.returncode == 2 and "no whole vLLM replica" in proc.stderr
    proc = _grpo(tmp_path, "--cfg", "job", PROFILE="4gpu")
    assert proc.returncode == 2 and "PROFILE must be 1gpu or 8gpu" in proc.stderr


def _splits(tmp_path: Path) -> tuple[Path, Path]:
    train, val = tmp_path / "train.parquet", tmp_path / "val.parquet"
    write_verl_parquet([task_create()], train)
    write_verl_parquet([task_update()], val, validation=True)
    return train, val


def test_preflight_refuses_splits_that_are_not_held_out(tmp_path: Path) -> None:
    train, val = _splits(tmp_path)
    assert check_splits(train, val) == (["t-create"], ["t-update"])
    with pytest.raises(PreflightError, match="the validation file is the training file"):
        check_splits(train, train)
    plain_val = tmp_path / "plain.parquet"
    write_verl_parquet([task_update()], plain_val)
    with pytest.raises(PreflightError, match=r"must name agent 'compo_agent_val'.*--validation"):
        check_splits(train, plain_val)
    shared = tmp_path / "shared.parquet"
    write_verl_parquet([task_create()], shared, validation=True)
    with pytest.raises(PreflightError, match="1 tasks are in both splits"):
        check_splits(train, shared)
    with pytest.raises(PreflightError, match="does not exist"):
        check_splits(train, tmp_path / "missing.parquet")


async def test_preflight_checks_the_orchestrator_serves_every_task(tmp_path: Path) -> None:
    services = runtimes(tmp_path / "lib")
    write_tasks(tmp_path / "tasks.jsonl", [task_create()])
    app = create_library_app(services, Settings())
    attach_orchestrator(app, services, Settings(), tmp_path / "tasks.jsonl")
    async with serving(app) as url:
        import asyncio

        await asyncio.to_thread(check_orchestrator, url, ["t-create"])
        with pytest.raises(PreflightError, match="does not serve 1 tasks"):
            await asyncio.to_thread(check_orchestrator, url, ["t-create", "t-update"])
    with pytest.raises(PreflightError, match="does not answer GET /tasks"):
        await asyncio.to_thread(check_orchestrator, url, ["t-create"], 2)
