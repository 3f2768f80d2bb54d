"""Soak: every compute port's link counters read through the runner at a fixed interval across a long
window (default 72 hours), so a link that degrades under load is caught: any growth of symbol errors,
effective physical errors, link-down or link error recovery counters between two readings is a failure
that names the port and the first reading at which it grew.

A window is a SoakWindow row with a check run of kind "soak" holding one CheckResult per port; failures
are those results' verdicts, so they sit with every other check result (pages, punch items). Readings are
SoakSample rows. Celery beat calls `soak_tick` (tasks.soak_tick) every SOAK_TICK_SECONDS; a window due a
reading starts one sampling ("sweep") with a task per node, so readings across a big cluster run in
parallel on the workers.

    maths       pure: which counters grew, and the reasons a port fails
    runner      reading a port's counters; the simulated cluster's growing counters
    services    starting and stopping a window, the tick, recording and judging readings
    selectors   the pages' and charts' reads

This package re-exports what callers use.
"""

from .maths import GROWTH_COUNTERS, counter_growth, final_verdict, growth_reasons, merged_growth
from .runner import Reading, SoakSimulatedRunner, counters_command, grow_counters, growing_ports, read_counters
from .selectors import soak_failures, soak_series, soak_window_detail, soak_window_list
from .services import (
    SOAK_RUNNERS,
    clean_soak_options,
    default_duration,
    open_window,
    parse_now,
    sample_interval,
    soak_node_sample,
    soak_tick,
    soak_window_start,
    soak_window_stop,
)

__all__ = [
    "GROWTH_COUNTERS",
    "SOAK_RUNNERS",
    "Reading",
    "SoakSimulatedRunner",
    "clean_soak_options",
    "counter_growth",
    "counters_command",
    "default_duration",
    "final_verdict",
    "grow_counters",
    "growing_ports",
    "growth_reasons",
    "merged_growth",
    "open_window",
    "parse_now",
    "read_counters",
    "sample_interval",
    "soak_failures",
    "soak_node_sample",
    "soak_series",
    "soak_tick",
    "soak_window_detail",
    "soak_window_list",
    "soak_window_start",
    "soak_window_stop",
]
