"""Cross-service task generation: random walks over the graph, executed on forks, verified rubrics."""

from orchestrator.tasks.check import CheckReport, check_tasks
from orchestrator.tasks.generate import GenerateOptions, GenerationReport, TaskGenerator, generate_tasks
from orchestrator.tasks.stats import TaskStats, task_stats
from orchestrator.tasks.verify import TaskCheck, check_task

__all__ = [
    "CheckReport",
    "GenerateOptions",
    "GenerationReport",
    "TaskCheck",
    "TaskGenerator",
    "TaskStats",
    "check_task",
    "check_tasks",
    "generate_tasks",
    "task_stats",
]
