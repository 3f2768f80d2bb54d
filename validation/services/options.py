"""A run's options: those every run takes, and those of its kind (validation.kinds)."""

from __future__ import annotations

from ..kinds import Option, kind_of
from ..kinds.base import clean_options, host_counts, host_list, positive_seconds, whole_number
from ..models import CheckRun

# The longest a run's options may let one command take. The broker's visibility timeout
# (CELERY_BROKER_TRANSPORT_OPTIONS in settings) is set above it.
MAX_COMMAND_TIMEOUT_S = 4 * 3600


def _timeout(value):
    value = positive_seconds(value)
    if value > MAX_COMMAND_TIMEOUT_S:
        # Past this, Redis would hand the task to a second worker while the first still runs it.
        raise ValueError(f"expected at most {MAX_COMMAND_TIMEOUT_S} seconds")
    return value


COMMON_OPTIONS: dict[str, Option] = {
    "seed": Option(whole_number(0)),  # the simulated runner's fault placement and noise
    "down_hosts": Option(host_list),  # simulated: these refuse every connection
    "flaky_hosts": Option(host_counts),  # simulated: refuse the first N attempts
    "timeout_s": Option(_timeout),
}


def run_options(kind: str) -> dict[str, Option]:
    """Every option a run of this kind takes."""
    return {**COMMON_OPTIONS, **kind_of(kind).options}


def clean_run_options(kind: str, options: dict | None, *, runner: str) -> dict:
    """Check a run's options; a bad one is a ValidationError naming it, never a crash later in a task."""
    return clean_options(options, run_options(kind), runner=runner, refusal=f"not an option of a {kind} run")


def command_timeout(run: CheckRun) -> float:
    """Seconds one command of the run may take."""
    return run.options.get("timeout_s") or kind_of(run.kind).timeout_s
