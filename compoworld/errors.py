"""The one exception tree. Tool failures are observations, not exceptions (STYLE #7).

Every error CompoWorld raises for a person or a caller to act on sits under
``CompoWorldError``; a class that also behaves as a builtin exception says so in
parentheses. The drawing is checked against the real classes (tests/test_errors_tree.py):
a class added, moved or re-parented without redrawing it fails the suite. Where a class is
defined is given after it; the HTTP status is the orchestrator's mapping.

CompoWorldError                          compoworld.errors
├── SpecError (ValueError)               compoworld.specs.errors        a spec cannot be ingested (file + JSON pointer)
├── LibraryError                         compoworld.errors              a library folder or a service cannot be loaded
│   └── BuildError                       compoworld.synth.build         a document read, but no service that loads came of it
├── RegistryError (LookupError)          compoworld.registry            an unknown name, a name taken twice, a bad target
├── EpisodeError                         compoworld.errors              an episode id is unknown, finished, or over limits
│   ├── EpisodeStateLost                 compoworld.errors              a service holds no state for the episode (restart, expiry)
│   ├── EpisodeNotFound                  orchestrator.errors            404 unknown (or released) episode id
│   ├── EpisodeConflict                  orchestrator.errors            409 the episode's state forbids the request
│   ├── EpisodeBusy                      orchestrator.errors            503 too many live episodes, or its turn is held
│   └── TrajectoryFull                   orchestrator.errors            413 a turn past the episode's trajectory budget
├── TaskNotFound                         orchestrator.errors            404 no loaded task file holds the id
├── TaskConflict                         orchestrator.errors            409 a task added under an id another task holds
├── InvalidRequest                       orchestrator.errors            422 names something that cannot be served
├── ServiceUnavailable                   compoworld.errors              503 a service did not answer (dead, slow)
├── StateLookupError (LookupError)       orchestrator.discovery         a grader read that cannot be made as written
├── CriterionError (ValueError)          orchestrator.rubric.base       a rubric criterion that cannot be built or read
├── GroupConflictError (ValueError)      orchestrator.errors            409 a reward report contradicts its group
├── BoardClosing                         orchestrator.errors            503 the orchestrator stopped while a report waited
├── OrchestratorError                    orchestrator.client            the orchestrator was unreachable or refused
├── SmokeSetupError (ValueError)         trainer.smoke_env              the smoke run's library or tasks are unusable
├── PromptTooLongError (ValueError)      trainer.env_errors             an episode prompt over the model's prompt budget
├── PreflightError (ValueError)          trainer.preflight              a GRPO launch that cannot work as configured
├── LLMError                             compoworld.errors              the model endpoint failed after retries
└── DeployError                          compoworld.deploy.errors       deployment files or a cluster operation failed
    ├── EntrypointError                  compoworld.deploy.entrypoint   a container command cannot start (exit 2)
    └── K8sError                         compoworld.deploy.errors       talking to a cluster failed
        ├── K8sConfigError               compoworld.deploy.errors       no kubeconfig / in-cluster configuration
        ├── K8sApiError                  compoworld.deploy.errors       the API refused a request or was unreachable
        └── K8sTimeoutError              compoworld.deploy.errors       ``wait`` gave up (``.report``: last status)

Signals: raised and caught inside one component, never seen by its callers.

ToolFailure                              compoworld.runtime.ops         a typed-state or world-model failure -> ToolResult.fail
CheckFailure                             compoworld.synth.verify_world  a conformance check failed -> ToolCheck.failure
ArgumentError (ValueError)               compoworld.runtime.validate    arguments refused -> ToolResult.fail
Rejected                                 compoworld.runtime.rest        a REST request refused before any tool ran
InputRefused (ValueError)                compoworld.sanitize            an input over a limit or not clean JSON -> 400/413
TwinFailure                              compoworld.synth.twin          a checked call's two routes disagree -> a failed check
DraftRejected                            orchestrator.tasks.rejected    a scenario draft that cannot be a task (a reason)
SpreadExhausted                          orchestrator.tasks.scenario.spread  a DraftRejected: every candidate of a strict draw is past the spread cap
Unbound                                  compoworld.synth.unbound       an action tool binds no typed state change -> simulated, with the reason
HopError                                 orchestrator.hop               a request to a service got no answer -> ServiceUnavailable
HopTimeout                               orchestrator.hop               no answer within the hop's timeout -> ServiceUnavailable
HopTooLarge                              orchestrator.hop               an answer over the caller's size limit -> ServiceUnavailable
UnusableRecord (ValueError)              trainer.sft_format             an SFT input line dropped -> a counted reason
"""

from __future__ import annotations

__all__ = [
    "CompoWorldError",
    "EpisodeError",
    "EpisodeStateLost",
    "LLMError",
    "LibraryError",
    "ServiceUnavailable",
]


class CompoWorldError(Exception):
    """Base of every infrastructure error raised by CompoWorld."""


class LibraryError(CompoWorldError):
    """A library or one of its services cannot be loaded."""


class EpisodeError(CompoWorldError):
    """An episode is unknown, already finished, or over its limits."""


class EpisodeStateLost(EpisodeError):
    """A service holds no state for an episode: never forked there, or lost to a restart or expiry.

    Never answered by re-forking from the seed: a grade read from a fresh seed would be silently
    wrong. The orchestrator aborts the episode with this as its environment error.
    """


class ServiceUnavailable(CompoWorldError):
    """A service did not answer in time or refused the connection."""

    def __init__(self, service: str, reason: str) -> None:
        super().__init__(f"service '{service}' unavailable: {reason}")
        self.service = service
        self.reason = reason


class LLMError(CompoWorldError):
    """The model endpoint failed after retries."""
