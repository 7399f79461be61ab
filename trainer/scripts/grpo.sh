#!/usr/bin/env bash
# GRPO with verl 0.9.1 on CompoWorld tasks: verl's own trainer, our agent loop and reward.
#
# Needs a GPU node with verl's vLLM stack (see docs/training.md):
#   pip install -e . 'verl[vllm]==0.9.1' cachetools 'TransferQueue>=0.1.10'
# and a running orchestrator that serves the tasks of the dataset:
#   compoworld export verl tasks.jsonl --out out/verl/train.parquet
#   compoworld up --tasks tasks.jsonl --port 8000 &
#   MODEL_PATH=/models/Qwen3-4B bash trainer/scripts/grpo.sh
#
# Extra arguments are passed to verl as Hydra overrides, e.g. trainer.total_training_steps=2;
# `bash trainer/scripts/grpo.sh [overrides...] --cfg job` prints the composed config without training.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
: "${MODEL_PATH:?set MODEL_PATH to a local Hugging Face checkpoint folder (no hub downloads)}"
TRAIN_FILE="${TRAIN_FILE:-$REPO/out/verl/train.parquet}"
VAL_FILE="${VAL_FILE:-$TRAIN_FILE}"
if command -v nvidia-smi >/dev/null 2>&1; then
  N_GPUS="${N_GPUS:-$(nvidia-smi -L | wc -l)}"
else
  N_GPUS="${N_GPUS:-1}"
fi
NNODES="${NNODES:-1}"
ROLLOUT_N="${ROLLOUT_N:-8}"            # rollouts per task: the GRPO group the reward is relative to
TRAIN_BATCH_SIZE="${TRAIN_BATCH_SIZE:-32}"  # tasks per step
MINI_BATCH_SIZE="${MINI_BATCH_SIZE:-8}"
MAX_PROMPT_LENGTH="${MAX_PROMPT_LENGTH:-8192}"
MAX_RESPONSE_LENGTH="${MAX_RESPONSE_LENGTH:-8192}"
MAX_TURNS="${MAX_TURNS:-16}"
GPU_MEM="${GPU_MEM:-0.5}"
EXPERIMENT="${EXPERIMENT:-grpo-$(date +%Y%m%d-%H%M%S)}"

# read by trainer/config/agent_loops.yaml in the Ray workers that run the agent loop
export COMPOWORLD_ORCHESTRATOR_URL="${COMPOWORLD_ORCHESTRATOR_URL:-http://127.0.0.1:8000}"
export PYTHONPATH="$REPO${PYTHONPATH:+:$PYTHONPATH}"
cd "$REPO"

exec python -m verl.trainer.main_ppo \
  algorithm.adv_estimator=grpo \
  algorithm.norm_adv_by_std_in_grpo=True \
  algorithm.use_kl_in_reward=False \
  data.train_files="$TRAIN_FILE" \
  data.val_files="$VAL_FILE" \
  data.train_batch_size="$TRAIN_BATCH_SIZE" \
  data.max_prompt_length="$MAX_PROMPT_LENGTH" \
  data.max_response_length="$MAX_RESPONSE_LENGTH" \
  data.return_raw_chat=True \
  data.filter_overlong_prompts=True \
  actor_rollout_ref.model.path="$MODEL_PATH" \
  actor_rollout_ref.model.use_remove_padding=True \
  actor_rollout_ref.model.enable_gradient_checkpointing=True \
  actor_rollout_ref.actor.optim.lr=1e-6 \
  actor_rollout_ref.actor.ppo_mini_batch_size="$MINI_BATCH_SIZE" \
  actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 \
  actor_rollout_ref.actor.use_kl_loss=False \
  actor_rollout_ref.actor.loss_agg_mode=token-mean \
  actor_rollout_ref.rollout.name=vllm \
  actor_rollout_ref.rollout.mode=async \
  actor_rollout_ref.rollout.n="$ROLLOUT_N" \
  actor_rollout_ref.rollout.gpu_memory_utilization="$GPU_MEM" \
  actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=2 \
  actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=2 \
  actor_rollout_ref.rollout.multi_turn.enable=True \
  actor_rollout_ref.rollout.multi_turn.format=hermes \
  actor_rollout_ref.rollout.multi_turn.max_assistant_turns="$MAX_TURNS" \
  actor_rollout_ref.rollout.multi_turn.max_parallel_calls=1 \
  actor_rollout_ref.rollout.multi_turn.max_tool_response_length=4096 \
  actor_rollout_ref.rollout.agent.agent_loop_config_path="$REPO/trainer/config/agent_loops.yaml" \
  actor_rollout_ref.rollout.agent.default_agent_loop=compo_agent \
  trainer.n_gpus_per_node="$N_GPUS" \
  trainer.nnodes="$NNODES" \
  trainer.val_before_train=False \
  trainer.test_freq=-1 \
  trainer.save_freq=-1 \
  trainer.logger='[console]' \
  trainer.project_name=compoworld \
  trainer.experiment_name="$EXPERIMENT" \
  "$@"
