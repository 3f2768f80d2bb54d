"""Writes of the validation engine, one module per concept; this package re-exports what callers use.

    profiles    the acceptance profile a project's results are judged by
    options     the options every run takes, and its kind's (validation.kinds)
    targets     a run's targets, built by its kind from the GPU nodes (validation.cluster)
    runs        starting, cancelling and re-running runs
    rounds      handing targets out in rounds and chunks, and closing the run when all are finished
    leases      a claimed chunk is its worker's for a lease; attempts and giving up
    execution   what a chunk's targets need, executing each as its kind says, recording the outcomes
    progress    a run's progress counter and log, one statement each
    sweeper     runs that stopped moving

A run's targets are CheckResult rows created when it starts. Executing a target claims its row, runs
the command through the run's runner outside any transaction, parses the output with the shared parsers,
judges it with criteria.py and records everything on the same row. Targets travel in chunks (one task
claims, runs and records several at once, in a fixed number of queries); the run's progress is a counter
moved by each chunk in one statement. Bandwidth tests are scheduled in rounds (no node in two tests at
once); `check_run_chunks` hands out one round at a time and finalises the run once every target is
finished.

Messages get lost and workers die, so nothing here trusts a message to arrive once: a claimed target is
its worker's only for a lease (every command at its timeout, plus a margin), after which it may be
claimed again, up to `max_attempts()`; only the claim that holds a target records its outcome; and
`check_runs_to_sweep` (a beat task) finds runs that stopped moving and dispatches them again. Services
enqueue tasks by name (core.jobs), never by importing validation.tasks.
"""

from ..cluster import Node, Rail, gpu_nodes, sim_cluster_for
from ..kinds import Measurement, Target, TargetInputs
from .execution import (
    check_chunk_inputs,
    check_chunk_record,
    check_target_execute,
    check_target_give_up,
    check_target_inputs,
    check_target_record,
    failed_measurement,
    runner_for,
    target_inputs,
)
from .leases import (
    check_chunk_claim,
    check_target_claim,
    check_target_release,
    check_targets_release,
    chunk_lease_seconds,
    lease_expired,
    max_attempts,
    target_lease_seconds,
)
from .options import MAX_COMMAND_TIMEOUT_S, clean_run_options, command_timeout, run_options
from .profiles import acceptance_profile_for, acceptance_profile_update
from .progress import check_run_log, check_run_log_lines, check_run_summary_store, finished_count, run_summary_figures
from .rounds import check_run_advance, check_run_chunks, chunk_size, next_round_due
from .runs import check_run_cancel, check_run_rerun_failed, check_run_start
from .sweeper import check_runs_to_sweep
from .targets import build_targets, not_startable_message

__all__ = [
    "MAX_COMMAND_TIMEOUT_S",
    "Measurement",
    "Node",
    "Rail",
    "Target",
    "TargetInputs",
    "acceptance_profile_for",
    "acceptance_profile_update",
    "build_targets",
    "check_chunk_claim",
    "check_chunk_inputs",
    "check_chunk_record",
    "check_run_advance",
    "check_run_cancel",
    "check_run_chunks",
    "check_run_log",
    "check_run_log_lines",
    "check_run_rerun_failed",
    "check_run_start",
    "check_run_summary_store",
    "check_runs_to_sweep",
    "check_target_claim",
    "check_target_execute",
    "check_target_give_up",
    "check_target_inputs",
    "check_target_record",
    "check_target_release",
    "check_targets_release",
    "chunk_lease_seconds",
    "chunk_size",
    "clean_run_options",
    "command_timeout",
    "failed_measurement",
    "finished_count",
    "gpu_nodes",
    "lease_expired",
    "max_attempts",
    "next_round_due",
    "not_startable_message",
    "run_options",
    "run_summary_figures",
    "runner_for",
    "sim_cluster_for",
    "target_inputs",
    "target_lease_seconds",
]
