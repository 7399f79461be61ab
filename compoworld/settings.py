"""Settings, read from the environment (prefix ``COMPOWORLD_``) when asked for, never at import time.

An entry point (a CLI command, a container entrypoint, a generated ``app.py``) builds ``Settings()``
once and passes it down; nothing below it reads the environment (``tests/test_layers.py`` pins
it). Work whose result must not depend on where it runs (verifying a service) uses
:meth:`Settings.defaults`, which never reads the environment.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

from pydantic import Field
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from compoworld.sanitize import DEFAULT_MAX_BYTES, DEFAULT_MAX_DEPTH

__all__ = [
    "DEFAULT_MAX_MESSAGES",
    "DEFAULT_MAX_TRAJECTORY_BYTES",
    "ORCHESTRATOR_LIMITS",
    "Settings",
    "bundled_library",
    "new_admin_token",
]

DEFAULT_MAX_MESSAGES = 20_000  # recorded per episode (orchestrator.budget)
DEFAULT_MAX_TRAJECTORY_BYTES = 32 * 1024 * 1024

# The settings that bound an orchestrator process: each is an environment variable
# (COMPOWORLD_<NAME>), a key of the chart's ``orchestrator.limits`` (its camelCase) and, where the
# embedded deployment uses it, a ``compoworld up --<name>`` flag; tests/test_deploy_helm.py and
# tests/test_limits.py hold every one of them to that. The store's lease is the chart's
# ``store.leaseSeconds``.
ORCHESTRATOR_LIMITS = (
    "max_live",
    "max_steps",
    "max_wall_s",
    "idle_ttl_s",
    "retain_s",
    "lock_wait_s",
    "reap_interval_s",
    "max_request_bytes",
    "max_payload_bytes",
    "max_json_depth",
    "max_result_bytes",
    "max_trajectory_messages",
    "max_trajectory_bytes",
    "group_timeout_max_s",
    "group_open_deadline_s",
    "service_timeout_s",
    "store_turn_limit_s",
)


def new_admin_token() -> str:
    """A fresh random admin token (256 bits): what a process gets when none is configured."""
    return secrets.token_urlsafe(32)


def bundled_library() -> Path:
    """The starter library committed in the repository (``generated_services/``)."""
    return Path(__file__).resolve().parent.parent / "generated_services"


class Settings(BaseSettings):
    """Runtime and orchestrator settings. Construct explicitly and pass down (STYLE #4)."""

    model_config = SettingsConfigDict(env_prefix="COMPOWORLD_", extra="ignore")

    admin_token: str = Field(
        default_factory=new_admin_token,
        description="Bearer token for /admin routes. Unset: a random one per process (compoworld up prints "
        "where it is); the commands that run in their own process (serve, orchestrator, the containers) "
        "refuse to start without one.",
    )
    library: Path = Field(default_factory=bundled_library, description="Folder of generated services.")
    episode_ttl_s: float = Field(
        default=1800.0, description="Idle episodes are reaped after this many seconds."
    )
    max_episodes: int = Field(
        default=20000,
        ge=1,
        description="Forks one service holds at most (expired ones are reaped first); a new fork beyond "
        "it is refused (503), a live one is never evicted.",
    )
    max_payload_bytes: int = Field(
        default=DEFAULT_MAX_BYTES,
        gt=0,
        description="Largest accepted tool-call body (uniform and REST routes, step arguments, MCP calls).",
    )
    max_json_depth: int = Field(
        default=DEFAULT_MAX_DEPTH,
        ge=2,
        le=512,
        description="Deepest nesting of objects and arrays accepted at any edge.",
    )
    max_request_bytes: int = Field(
        default=4 * 1024 * 1024,
        gt=0,
        description="Largest accepted body of an orchestrator route (a step carries several tool calls).",
    )
    max_result_bytes: int = Field(
        default=4 * 1024 * 1024, gt=0, description="Largest tool result accepted from a remote service."
    )
    max_trajectory_messages: int = Field(
        default=DEFAULT_MAX_MESSAGES,
        gt=0,
        description="Messages one episode may record (prompt, assistant turns, tool results); a turn "
        "beyond it is 413 and the episode ends graded (finish_reason trajectory_limit).",
    )
    max_trajectory_bytes: int = Field(
        default=DEFAULT_MAX_TRAJECTORY_BYTES,
        gt=0,
        description="Total JSON bytes of one episode's recorded messages; a turn beyond it is 413 (or, "
        "when its results cross it, answered) and the episode ends graded (trajectory_limit).",
    )
    max_live: int = Field(
        default=20000,
        ge=1,
        description="Episodes an orchestrator holds at most: live ones and ended ones not yet deleted or "
        "reaped (a new open beyond it is 503).",
    )
    max_steps: int = Field(
        default=30,
        ge=1,
        le=1000,
        description="Default tool-calling turns per episode (a request may ask less).",
    )
    max_wall_s: float = Field(
        default=1800.0,
        gt=0,
        le=86400.0,
        description="Default wall-clock limit of an episode (at most a day).",
    )
    idle_ttl_s: float = Field(
        default=900.0,
        gt=0,
        description="A live episode idle this long is expired by the orchestrator's reaper (its forks "
        "released); at most episode_ttl_s.",
    )
    retain_s: float = Field(
        default=900.0, ge=0, description="Ended episodes are forgotten (forks released) after this long."
    )
    lock_wait_s: float = Field(
        default=60.0, gt=0, description="How long a request waits for an episode's turn held by another."
    )
    reap_interval_s: float = Field(
        default=30.0, gt=0, description="How often the orchestrator's reaper runs."
    )
    default_today: str = Field(default="2026-01-15", description="Frozen date of episodes that name none.")
    llm_base_url: str | None = Field(
        default=None, description="OpenAI-compatible endpoint for the world model."
    )
    llm_model: str = Field(default="gpt-4o-mini", description="Model name at that endpoint.")
    llm_api_key: str = Field(default="EMPTY", description="API key for that endpoint.")
    llm_timeout_s: float = Field(default=30.0, description="Per-request timeout for LLM calls.")
    llm_retries: int = Field(
        default=2, description="Retries for an LLM call that fails or returns invalid output."
    )
    service_urls_file: Path | None = Field(
        default=None, description="JSON map service -> base URL (orchestrator)."
    )
    service_url_template: str | None = Field(
        default=None, description="e.g. http://{service}.{namespace}.svc:8000 (orchestrator discovery)."
    )
    namespace: str = Field(default="default", description="Kubernetes namespace used by the URL template.")
    resolve_replicas: bool = Field(
        default=False,
        description="Resolve each service host to all its addresses (a headless Service's pods) and pin "
        "every episode to one of them.",
    )
    service_timeout_s: float = Field(default=10.0, description="Per tool call timeout to a remote service.")
    group_timeout_max_s: float = Field(
        default=900.0,
        gt=0,
        le=3600.0,
        description="Longest a group reward report may wait for its siblings (a longer timeout_s is 422).",
    )
    group_open_deadline_s: float = Field(
        default=60.0,
        ge=0,
        le=3600.0,
        description="A group that fewer than expected_n rollouts opened (with its group_id), none for this "
        "long, is given up on: its waiting reports are scored alone at once (reason siblings_not_opened) "
        "instead of waiting out their timeout_s. 0: off.",
    )
    store_url: str | None = Field(
        default=None,
        description="Episode store shared by orchestrator replicas (redis://host:6379/0); unset = in memory.",
    )
    store_lease_s: float = Field(
        default=30.0,
        gt=0,
        description="Lease of an episode's turn lock in the shared store (renewed while held).",
    )
    store_turn_limit_s: float = Field(
        default=300.0,
        gt=0,
        description="A turn holding an episode's lock in the shared store longer than this is cut (503).",
    )

    @property
    def admin_token_configured(self) -> bool:
        """The admin token was given (environment or constructor), not generated for this process."""
        return "admin_token" in self.model_fields_set

    @classmethod
    def defaults(cls, **overrides: Any) -> Settings:
        """The built-in defaults with ``overrides``, never the environment (for reproducible work)."""
        return _BuiltIn(**overrides)


class _BuiltIn(Settings):
    """Settings whose only source is the constructor's arguments."""

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings,)
