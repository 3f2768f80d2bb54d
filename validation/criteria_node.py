"""Acceptance criteria for a whole node (issue 22): GPUs, DCGM diagnostics, kernel XIDs, NVLink, copy
bandwidth, storage, a training smoke test and the BMC's view, judged from the node parsers' results.

Pure Python like validation.criteria, whose Verdict/Reason/Outcome it returns: pass, warn or fail, and ERROR
for "not measured" (an output cut short, a fragment where a count was needed, a run that stopped). Every
function takes the parsers' dataclasses or the dicts of their `to_dict()` (the same shape), and every reason
names what it is about: the GPU (its index, PCI bus id and serial as far as the output tells), the link,
the test, the PSU, the node.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .criteria import Outcome, Reason, Verdict, as_dict, fmt_num
from .parsers.node_common import pci_key

PASS, WARN, FAIL, ERROR = Outcome.PASS, Outcome.WARN, Outcome.FAIL, Outcome.ERROR
MAX_LISTED = 40  # reasons listed one by one before the rest are summed up in one


def _number(value: Any) -> float | None:
    if value is None or isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return None if math.isnan(value) else float(value)


def _prefix(node: str | None) -> str:
    return f"{node}: " if node else ""


def _capped(reasons: list[Reason], what: str) -> list[Reason]:
    """At most MAX_LISTED reasons of one kind; the rest summed up at the worst level among them."""
    if len(reasons) <= MAX_LISTED:
        return reasons
    rest = reasons[MAX_LISTED:]
    level = Verdict.of(rest).outcome
    return [*reasons[:MAX_LISTED], Reason(level, f"and {len(rest)} more {what}")]


# ---------------------------------------------------------------------------------------------------
# GPUs (nvidia-smi -q)


@dataclass(frozen=True)
class GpuHealthProfile:
    """How nvidia-smi -q readings are judged. Current PCIe generation below the maximum is a warning by
    default: an idle GPU trains its link down to save power (check it under load); a narrower link is not."""

    pcie_gen_below_max: Outcome = WARN
    pcie_width_below_max: Outcome = FAIL
    aggregate_uncorrectable: Outcome = WARN  # uncorrectable errors in the GPU's past (lifetime counter)
    failing_clock_reasons: frozenset[str] = frozenset(
        {"hw_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown", "sw_thermal_slowdown"}
    )
    warning_clock_reasons: frozenset[str] = frozenset({"sw_power_cap"})
    max_temperature_c: float | None = None  # the project's own ceiling, if any
    temperature_margin_c: float = 5.0  # warn this close to the GPU's own slowdown point
    power_tolerance: float = 0.05  # draw above the limit: warn; above limit x (1 + this): fail


def gpu_label(gpu: Any) -> str:
    """Names a GPU as far as the output tells: GPU 3 (00000000:9B:00.0, serial 1650124014249)."""
    data = as_dict(gpu)
    index = data.get("index")
    head = f"GPU {index}" if index is not None else "GPU"
    details = [data["pci_bus_id"]] if data.get("pci_bus_id") else []
    if data.get("serial"):
        details.append(f"serial {data['serial']}")
    elif data.get("uuid"):
        details.append(data["uuid"])
    if not details and data.get("fragment"):
        details.append(f"section pasted alone, line {data.get('line_no', 1)}")
    return f"{head} ({', '.join(details)})" if details else head


def judge_gpu_health(
    gpus: Sequence[Any],
    *,
    expected_count: int | None = None,
    profile: GpuHealthProfile | None = None,
    node: str | None = None,
) -> Verdict:
    """Count against the plan, then each GPU: uncorrectable ECC, pending page retirement or row remap, remap
    failure, reset required, PCIe link below its maximum, thermal/power slowdown active, temperature and
    power past their limits."""
    profile = profile or GpuHealthProfile()
    items = [as_dict(gpu) for gpu in gpus]
    where = _prefix(node)
    if not items:
        return Verdict.of([Reason(ERROR, f"{where}no GPU in the nvidia-smi output: not measured")])
    reasons = _gpu_count_reasons(items, expected_count, where)
    for gpu in items:
        label = where + gpu_label(gpu)
        reasons += _ecc_reasons(gpu, label, profile)
        reasons += _memory_repair_reasons(gpu, label)
        reasons += _pcie_reasons(gpu, label, profile)
        reasons += _clock_reasons(gpu, label, profile)
        reasons += _temperature_reasons(gpu, label, profile)
        reasons += _power_reasons(gpu, label, profile)
    return Verdict.of(reasons)


def _gpu_count_reasons(items: list[dict], expected: int | None, where: str) -> list[Reason]:
    listed = [gpu for gpu in items if not gpu.get("fragment")]
    attached = {gpu.get("attached_gpus") for gpu in listed if gpu.get("attached_gpus") is not None}
    reasons = []
    if len(attached) == 1 and (count := attached.pop()) != len(listed):
        missing = count - len(listed)
        what = f"{missing} not measured" if missing > 0 else "more listed than attached"
        reasons.append(Reason(ERROR, f"{where}the output lists {len(listed)} of the {count} attached GPUs: {what}"))
    if expected is None:
        return reasons
    if not listed:
        return [*reasons, Reason(ERROR, f"{where}only a section of nvidia-smi -q: GPU count not measured")]
    found = max(len(listed), *(gpu.get("attached_gpus") or 0 for gpu in listed))
    if found != expected:
        reasons.append(Reason(FAIL, f"{where}{found} GPUs found, {expected} expected"))
    return reasons


def _ecc_reasons(gpu: dict, label: str, profile: GpuHealthProfile) -> list[Reason]:
    reasons = []
    if gpu.get("ecc_mode") and gpu["ecc_mode"].lower() == "disabled":
        reasons.append(Reason(WARN, f"{label}: ECC is disabled"))
    volatile = (gpu.get("ecc_volatile") or {}).get("uncorrectable")
    aggregate = (gpu.get("ecc_aggregate") or {}).get("uncorrectable")
    if volatile:
        kinds = _nonzero_uncorrectable(gpu.get("ecc_volatile"))
        reasons.append(Reason(FAIL, f"{label}: {volatile} uncorrectable ECC errors since the driver loaded ({kinds})"))
    if aggregate and (not volatile or aggregate > volatile):
        kinds = _nonzero_uncorrectable(gpu.get("ecc_aggregate"))
        reasons.append(
            Reason(
                profile.aggregate_uncorrectable,
                f"{label}: {aggregate} uncorrectable ECC errors in its lifetime ({kinds})",
            )
        )
    for scope in ("ecc_volatile", "ecc_aggregate"):
        if ((gpu.get(scope) or {}).get("flags") or {}).get("sram_threshold_exceeded"):
            reasons.append(Reason(FAIL, f"{label}: SRAM error threshold exceeded ({scope.removeprefix('ecc_')})"))
    return reasons


def _nonzero_uncorrectable(scope: Mapping[str, Any] | None) -> str:
    counters = (scope or {}).get("counters") or {}
    named = [f"{name} {value}" for name, value in counters.items() if "uncorrectable" in name and value]
    named += [f"{name} {value}" for name, value in counters.items() if name.startswith("double_bit") and value]
    return ", ".join(named) or "counters not itemised"


def _memory_repair_reasons(gpu: dict, label: str) -> list[Reason]:
    reasons = []
    if gpu.get("retired_pages_pending"):
        reasons.append(Reason(FAIL, f"{label}: page retirement pending (reset the GPU or reboot to apply it)"))
    if gpu.get("retired_pages_double_bit"):
        reasons.append(Reason(WARN, f"{label}: {gpu['retired_pages_double_bit']} pages retired for double-bit errors"))
    if gpu.get("remapped_rows_pending"):
        reasons.append(Reason(FAIL, f"{label}: row remapping pending (reset the GPU to apply it)"))
    if gpu.get("remapped_rows_failure"):
        reasons.append(Reason(FAIL, f"{label}: row remapping failure occurred (no spare rows left: replace the GPU)"))
    if gpu.get("remapped_rows_uncorrectable"):
        reasons.append(
            Reason(WARN, f"{label}: {gpu['remapped_rows_uncorrectable']} rows remapped for uncorrectable errors")
        )
    if gpu.get("reset_required"):
        reasons.append(Reason(FAIL, f"{label}: the driver says the GPU needs a reset"))
    return reasons


def _pcie_reasons(gpu: dict, label: str, profile: GpuHealthProfile) -> list[Reason]:
    reasons = []
    current, maximum = gpu.get("pcie_width_current"), gpu.get("pcie_width_max")
    if current is not None and maximum is not None and current < maximum:
        reasons.append(
            Reason(profile.pcie_width_below_max, f"{label}: PCIe link x{current}, its maximum is x{maximum}")
        )
    current, maximum = gpu.get("pcie_gen_current"), gpu.get("pcie_gen_max")
    if current is not None and maximum is not None and current < maximum:
        reasons.append(
            Reason(
                profile.pcie_gen_below_max,
                f"{label}: PCIe Gen{current}, its maximum is Gen{maximum} (an idle GPU trains down: check under load)",
            )
        )
    return reasons


def _clock_reasons(gpu: dict, label: str, profile: GpuHealthProfile) -> list[Reason]:
    reasons = []
    for name in gpu.get("active_clock_event_reasons") or ():
        if name in profile.failing_clock_reasons:
            reasons.append(Reason(FAIL, f"{label}: clocks slowed down: {name.replace('_', ' ')} active"))
        elif name in profile.warning_clock_reasons:
            reasons.append(Reason(WARN, f"{label}: clocks held back: {name.replace('_', ' ')} active"))
    return reasons


def _temperature_reasons(gpu: dict, label: str, profile: GpuHealthProfile) -> list[Reason]:
    reasons = []
    temp = _number(gpu.get("temperature_c"))
    slowdown = _number(gpu.get("slowdown_temperature_c"))
    margin = profile.temperature_margin_c
    if temp is not None and slowdown is not None:
        if temp >= slowdown:
            reasons.append(
                Reason(FAIL, f"{label}: {fmt_num(temp)} C, at or past its slowdown point {fmt_num(slowdown)} C")
            )
        elif temp >= slowdown - margin:
            reasons.append(
                Reason(
                    WARN, f"{label}: {fmt_num(temp)} C, within {fmt_num(margin)} C of slowdown at {fmt_num(slowdown)} C"
                )
            )
    operating = _number(gpu.get("max_operating_temperature_c"))
    if temp is not None and operating is not None and temp > operating and not (slowdown and temp >= slowdown):
        reasons.append(Reason(WARN, f"{label}: {fmt_num(temp)} C, above its max operating {fmt_num(operating)} C"))
    tlimit = _number(gpu.get("tlimit_c"))  # degrees below the thermal limit (R545+)
    slowdown_t = _number(gpu.get("slowdown_tlimit_c"))
    if tlimit is not None:
        if slowdown_t is not None and tlimit <= slowdown_t:
            reasons.append(
                Reason(
                    FAIL, f"{label}: {fmt_num(tlimit)} C from its thermal limit, slowdown at {fmt_num(slowdown_t)} C"
                )
            )
        elif tlimit <= margin:
            reasons.append(Reason(WARN, f"{label}: only {fmt_num(tlimit)} C below its thermal limit"))
    if temp is not None and profile.max_temperature_c is not None and temp > profile.max_temperature_c:
        reasons.append(
            Reason(FAIL, f"{label}: {fmt_num(temp)} C > the profile's {fmt_num(profile.max_temperature_c)} C")
        )
    return reasons


def _power_reasons(gpu: dict, label: str, profile: GpuHealthProfile) -> list[Reason]:
    reasons = []
    for draw_key, limit_key, what in (
        ("power_draw_w", "power_limit_w", "power draw"),
        ("module_power_draw_w", "module_power_limit_w", "module power draw"),
    ):
        draw, limit = _number(gpu.get(draw_key)), _number(gpu.get(limit_key))
        if draw is None or limit is None or limit <= 0:
            continue
        if draw > limit * (1 + profile.power_tolerance):
            reasons.append(Reason(FAIL, f"{label}: {what} {fmt_num(draw, 2)} W over its limit {fmt_num(limit, 2)} W"))
        elif draw > limit:
            reasons.append(Reason(WARN, f"{label}: {what} {fmt_num(draw, 2)} W above its limit {fmt_num(limit, 2)} W"))
    return reasons


def gpu_names(gpus: Iterable[Any]) -> dict[str, str]:
    """pci_key -> gpu_label, to name the GPU an XID or a DCGM result is about."""
    names = {}
    for gpu in gpus:
        data = as_dict(gpu)
        key = data.get("pci") or pci_key(data.get("pci_bus_id"))
        if key:
            names[key] = gpu_label(data)
    return names


# ---------------------------------------------------------------------------------------------------
# DCGM diagnostics


def judge_dcgm_diag(result: Any, *, required_level: int | None = None, node: str | None = None) -> Verdict:
    """Any Fail (test or GPU) fails, Warn warns, DCGM's Error messages fail; an output that is cut, aborted
    or a fragment is "not measured" (ERROR) - unless it already shows a failure, which stands."""
    data = as_dict(result)
    where = _prefix(node)
    reasons: list[Reason] = []
    if not data.get("complete"):
        reasons.append(
            Reason(ERROR, f"{where}dcgmi diag not measured: {data.get('incomplete_reason') or 'incomplete'}")
        )
    level = data.get("run_level")
    if required_level is not None:
        if level is None:
            reasons.append(
                Reason(PASS, f"{where}the output does not show the run level (-r {required_level} required)")
            )
        elif level < required_level:
            reasons.append(Reason(ERROR, f"{where}dcgmi diag ran at level {level}, level {required_level} required"))
    tests = data.get("tests") or []
    if not tests and data.get("complete"):
        reasons.append(Reason(ERROR, f"{where}dcgmi diag printed no test result"))
    for test in tests:
        reasons += _dcgm_test_reasons(test, where)
    for message in data.get("messages") or []:
        level_ = {"Error": FAIL, "Warning": WARN}.get(message.get("level"))
        if level_:
            section = f" ({message['section']})" if message.get("section") else ""
            reasons.append(Reason(level_, f"{where}DCGM {message['level']}{section}: {message['text']}"))
    return Verdict.of(reasons)


def _dcgm_test_reasons(test: Mapping[str, Any], where: str) -> list[Reason]:
    name = test.get("name")
    failed = [r["id"] for r in test.get("results") or [] if r.get("status") == "Fail"]
    warned = [r["id"] for r in test.get("results") or [] if r.get("status") == "Warn"]
    messages = test.get("messages") or []
    said = "; ".join(m["text"] for m in messages if m.get("level") in ("Warning", "Error"))[:600]
    said = f": {said}" if said else ""
    worst = test.get("worst")
    if worst == "Fail":
        gpus = f" on GPU {', '.join(map(str, failed))}" if failed else ""
        return [Reason(FAIL, f"{where}DCGM test {name} failed{gpus}{said}")]
    if worst == "Warn" or (said and worst not in ("Skip",)):
        gpus = f" on GPU {', '.join(map(str, warned))}" if warned else ""
        return [Reason(WARN, f"{where}DCGM test {name} warned{gpus}{said}")]
    if worst == "Skip":
        return [Reason(PASS, f"{where}DCGM test {name} skipped")]
    if worst == "Not Run":
        return [Reason(WARN, f"{where}DCGM test {name} did not run")]
    return []


# ---------------------------------------------------------------------------------------------------
# XIDs

XID_MEANINGS = {
    13: "graphics engine exception",
    31: "GPU memory page fault",
    43: "GPU stopped processing",
    45: "preemptive cleanup",
    48: "double-bit ECC error",
    61: "internal micro-controller breakpoint/warning",
    62: "internal micro-controller halt",
    63: "ECC page retirement or row remapping event",
    64: "ECC page retirement or row remapping failure",
    74: "NVLink error",
    79: "GPU has fallen off the bus",
    92: "high single-bit ECC error rate",
    94: "contained ECC error",
    95: "uncontained ECC error",
    119: "GSP RPC timeout",
    120: "GSP error",
}


@dataclass(frozen=True)
class XidProfile:
    """Which XID codes fail a node and which only warn; codes in neither get `unknown`. The defaults follow
    NVIDIA's XID catalogue: hardware faults fail; the codes an application's own bug also raises warn."""

    fail_codes: frozenset[int] = frozenset({48, 62, 64, 74, 79, 95, 119, 120})
    warn_codes: frozenset[int] = frozenset({13, 31, 43, 45, 61, 63, 92, 94})
    ignore_codes: frozenset[int] = frozenset()
    unknown: Outcome = WARN
    sxid: Outcome = WARN  # NVSwitch SXids


def judge_xids(
    events: Sequence[Any], *, profile: XidProfile | None = None, gpus: Iterable[Any] = (), node: str | None = None
) -> Verdict:
    """One reason per (GPU, code): how many, when first, the first message, the level from the profile."""
    profile = profile or XidProfile()
    where = _prefix(node)
    names = gpu_names(gpus)
    groups: dict[tuple[str, str, int], list[dict]] = defaultdict(list)
    for event in events:
        data = as_dict(event)
        groups[(data.get("kind", "Xid"), data.get("pci") or data.get("pci_address") or "?", data["code"])].append(data)
    if not groups:
        return Verdict.of([Reason(PASS, f"{where}no XID in the kernel log")])
    reasons = []
    for (kind, pci, code), items in sorted(groups.items(), key=lambda item: (item[0][1], item[0][2])):
        if code in profile.ignore_codes:
            continue
        if kind == "SXid":
            level = profile.sxid
        elif code in profile.fail_codes:
            level = FAIL
        elif code in profile.warn_codes:
            level = WARN
        else:
            level = profile.unknown
        first = items[0]
        gpu = names.get(pci) or _xid_gpu(first, pci)
        meaning = f" ({XID_MEANINGS[code]})" if kind == "Xid" and code in XID_MEANINGS else ""
        when = first.get("timestamp") or first.get("timestamp_text")
        when = f", first at {when}" if when else ""
        times = f" x{len(items)}" if len(items) > 1 else ""
        reasons.append(
            Reason(
                level,
                f"{where}{kind} {code}{meaning}{times} on {gpu}{when} (line {first.get('line_no')}): "
                f"{(first.get('message') or '')[:160]}",
            )
        )
    return Verdict.of(reasons)


def _xid_gpu(event: Mapping[str, Any], pci: str) -> str:
    if event.get("gpu_serial"):
        return f"GPU {pci} (serial {event['gpu_serial']})"
    if event.get("gpu_uuid"):
        return f"GPU {pci} ({event['gpu_uuid']})"
    return f"GPU {pci}"


# ---------------------------------------------------------------------------------------------------
# NVLink


def judge_nvlink(
    gpus: Sequence[Any],
    *,
    expected_links: int | None = None,
    expected_speed_gbs: float | None = None,
    baseline: Sequence[Any] | None = None,
    node: str | None = None,
) -> Verdict:
    """Active links and their speed against the plan; error counters: any non-zero is a warning, growth
    since `baseline` (an earlier reading of the same GPUs) is a failure. An elided output cannot give a
    GPU's link count: not measured."""
    where = _prefix(node)
    items = [as_dict(gpu) for gpu in gpus]
    if not items:
        return Verdict.of([Reason(ERROR, f"{where}no NVLink output: not measured")])
    before = {_nvlink_key(as_dict(gpu)): as_dict(gpu) for gpu in baseline or ()}
    reasons: list[Reason] = []
    for gpu in items:
        label = f"{where}GPU {gpu['gpu']}" + (f" ({gpu['uuid']})" if gpu.get("uuid") else "")
        links = gpu.get("links") or []
        status_known = gpu.get("active_links") is not None
        if expected_links is not None and status_known:
            if gpu.get("elided"):
                reasons.append(Reason(ERROR, f"{label}: links elided in this output, link count not measured"))
            elif gpu["active_links"] < expected_links:
                down = [str(link["link"]) for link in links if link.get("active") is False]
                which = f" (inactive: {', '.join(down)})" if down else ""
                reasons.append(
                    Reason(FAIL, f"{label}: {gpu['active_links']} active NVLinks, {expected_links} expected{which}")
                )
        if expected_speed_gbs is not None:
            for link in links:
                speed = _number(link.get("speed_gbs"))
                if speed is not None and speed < expected_speed_gbs:
                    reasons.append(
                        Reason(
                            FAIL,
                            f"{label} link {link['link']}: {fmt_num(speed, 3)} GB/s, "
                            f"{fmt_num(expected_speed_gbs, 3)} GB/s expected",
                        )
                    )
        reasons += _nvlink_counter_reasons(gpu, label, before.get(_nvlink_key(gpu)))
    return Verdict.of(_capped(reasons, "NVLink findings"))


def _nvlink_key(gpu: Mapping[str, Any]) -> tuple:
    return (gpu.get("uuid") or "", gpu.get("gpu"))


def _nvlink_counter_reasons(gpu: Mapping[str, Any], label: str, before: Mapping[str, Any] | None) -> list[Reason]:
    reasons = []
    earlier = {link["link"]: link.get("counters") or {} for link in (before or {}).get("links") or []}
    for link in gpu.get("links") or []:
        for name, value in (link.get("counters") or {}).items():
            if not value:
                continue
            if before is not None and link["link"] in earlier:
                old = earlier[link["link"]].get(name)
                if old is not None and value > old:
                    reasons.append(
                        Reason(FAIL, f"{label} link {link['link']}: {name} errors grew from {old} to {value}")
                    )
            else:
                reasons.append(Reason(WARN, f"{label} link {link['link']}: {value} {name} errors"))
    return reasons


# ---------------------------------------------------------------------------------------------------
# GPU copy bandwidth


@dataclass(frozen=True)
class BandwidthTolerance:
    warn_fraction: float = 0.95  # of the expected figure
    fail_fraction: float = 0.90


def _against(
    value: float, expected: float, tolerance: BandwidthTolerance, what: str, unit: str = "GB/s"
) -> Reason | None:
    if value < expected * tolerance.fail_fraction:
        level = FAIL
    elif value < expected * tolerance.warn_fraction:
        level = WARN
    else:
        return None
    share = f"{fmt_num(100 * value / expected)}%" if expected else "n/a"
    return Reason(level, f"{what}: {fmt_num(value, 2)} {unit}, {share} of the expected {fmt_num(expected, 2)} {unit}")


def judge_bandwidth_test(
    result: Any, *, expected: Mapping[str, float], tolerance: BandwidthTolerance | None = None, node: str | None = None
) -> Verdict:
    """CUDA bandwidthTest: `expected` maps "h2d"/"d2h"/"d2d" to GB/s."""
    tolerance = tolerance or BandwidthTolerance()
    data = as_dict(result)
    where = _prefix(node)
    devices = ", ".join(data.get("devices") or ()) or "the GPU"
    reasons = []
    if not data.get("complete"):
        reasons.append(
            Reason(ERROR, f"{where}bandwidthTest on {devices} did not finish (no Result line): not measured")
        )
    elif data.get("result") not in (None, "PASS"):
        reasons.append(Reason(FAIL, f"{where}bandwidthTest on {devices} printed Result = {data.get('result')}"))
    names = {"h2d": "host to device", "d2h": "device to host", "d2d": "device to device"}
    for key, figure in expected.items():
        value = _number(data.get(f"{key}_gbs"))
        if value is None:
            reasons.append(Reason(ERROR, f"{where}{names.get(key, key)} bandwidth on {devices} not measured"))
        elif reason := _against(value, figure, tolerance, f"{where}{names.get(key, key)} bandwidth on {devices}"):
            reasons.append(reason)
    return Verdict.of(reasons)


def judge_nvbandwidth(
    testcases: Sequence[Any],
    *,
    expected: Mapping[str, float],
    tolerance: BandwidthTolerance | None = None,
    node: str | None = None,
) -> Verdict:
    """nvbandwidth: `expected` maps a testcase name to the GB/s each measured cell (each GPU, each pair) must
    reach. A waived testcase that was expected is not measured; an errored one fails."""
    tolerance = tolerance or BandwidthTolerance()
    where = _prefix(node)
    by_name = {as_dict(case)["name"]: as_dict(case) for case in testcases}
    reasons: list[Reason] = []
    for name, figure in expected.items():
        case = by_name.get(name)
        if case is None:
            reasons.append(Reason(ERROR, f"{where}nvbandwidth {name} not in the output: not measured"))
            continue
        status = case.get("status")
        if status == "Waived":
            reasons.append(Reason(ERROR, f"{where}nvbandwidth {name} waived by the tool: not measured"))
            continue
        if status in ("Error", "Not Found"):
            reasons.append(Reason(FAIL, f"{where}nvbandwidth {name}: {status} {case.get('message') or ''}".rstrip()))
            continue
        matrix = case.get("matrix")
        if not matrix:
            reasons.append(Reason(ERROR, f"{where}nvbandwidth {name} printed no values: not measured"))
            continue
        reasons += _capped(
            _matrix_reasons(
                matrix, figure, tolerance, f"{where}nvbandwidth {name}", skip_diagonal="device_to_device" in name
            ),
            f"cells of {name}",
        )
    return Verdict.of(reasons)


def _matrix_reasons(
    matrix: Mapping[str, Any], expected: float, tolerance: BandwidthTolerance, what: str, *, skip_diagonal: bool
) -> list[Reason]:
    reasons = []
    rows, columns = matrix.get("row_labels") or [], matrix.get("column_labels") or []
    unit = matrix.get("unit") or "GB/s"
    for row, cells in zip(rows, matrix.get("values") or [], strict=False):
        for column, value in zip(columns, cells, strict=False):
            if value is None or (skip_diagonal and row == column):
                continue
            if reason := _against(value, expected, tolerance, f"{what} row {row}, column {column}", unit):
                reasons.append(reason)
    return reasons


def judge_p2p(
    result: Any,
    *,
    expected_unidirectional_gbs: float | None = None,
    expected_bidirectional_gbs: float | None = None,
    tolerance: BandwidthTolerance | None = None,
    node: str | None = None,
) -> Verdict:
    """p2pBandwidthLatencyTest: every GPU pair's P2P-enabled bandwidth against the figure expected for the
    fabric (NVLink/NVSwitch). A pair that cannot reach its peer fails."""
    tolerance = tolerance or BandwidthTolerance()
    data = as_dict(result)
    where = _prefix(node)
    devices = {
        str(device["index"]): f"GPU {device['index']} ({device['pci_bus_id']})" for device in data.get("devices") or []
    }
    reasons: list[Reason] = []
    if not data.get("complete"):
        reasons.append(Reason(ERROR, f"{where}p2pBandwidthLatencyTest did not finish: not measured"))
    for device, peer, can in data.get("peer_access") or []:
        if not can:
            reasons.append(
                Reason(
                    FAIL,
                    f"{where}{devices.get(str(device), device)} cannot access {devices.get(str(peer), peer)} as a peer",
                )
            )
    for name, figure in (
        ("unidirectional_p2p_enabled_bandwidth", expected_unidirectional_gbs),
        ("bidirectional_p2p_enabled_bandwidth", expected_bidirectional_gbs),
    ):
        if figure is None:
            continue
        matrix = next((m for m in data.get("matrices") or [] if m.get("name") == name), None)
        if matrix is None:
            reasons.append(Reason(ERROR, f"{where}{name.replace('_', ' ')} matrix missing: not measured"))
            continue
        bidirectional = name.startswith("bidirectional")
        cells: dict[tuple[str, str], float] = {}
        for row, values in zip(matrix["row_labels"], matrix["values"], strict=False):
            for column, value in zip(matrix["column_labels"], values, strict=False):
                if value is None or row == column:
                    continue
                # Both directions of a bidirectional pair measure the same pair: its slower reading counts.
                key = tuple(sorted((row, column), key=_label_order)) if bidirectional else (row, column)
                cells[key] = min(value, cells.get(key, value))
        found = []
        for (row, column), value in cells.items():
            first, second = devices.get(row, f"GPU {row}"), devices.get(column, f"GPU {column}")
            arrow = "<->" if bidirectional else "->"
            pair = f"{where}{'bidirectional' if bidirectional else 'unidirectional'} P2P {first} {arrow} {second}"
            if reason := _against(value, figure, tolerance, pair):
                found.append(reason)
        reasons += _capped(found, "GPU pairs")
    return Verdict.of(reasons)


def _label_order(label: str) -> tuple[int, str]:
    return (int(label), label) if label.isdigit() else (1 << 30, label)


# ---------------------------------------------------------------------------------------------------
# Storage


@dataclass(frozen=True)
class StorageFloors:
    """Minimums per node, in MiB/s and IOPS; a p99 completion-latency ceiling in microseconds."""

    read_mib_s: float | None = None
    write_mib_s: float | None = None
    read_iops: float | None = None
    write_iops: float | None = None
    p99_clat_us: float | None = None


def judge_storage(results: Sequence[Any], *, floors: StorageFloors, node: str | None = None) -> Verdict:
    """fio jobs (or, without jobs, their Run status group lines) and IOR operations against the floors.
    A floor with nothing measured for it is "not measured"."""
    where = _prefix(node)
    items = [as_dict(result) for result in results]
    reasons: list[Reason] = []
    measured: dict[str, list[tuple[str, float]]] = defaultdict(list)
    jobs = [item for item in items if item.get("tool") == "fio" and item.get("kind") == "job"]
    for job in jobs:
        name = f"fio job {job['name']}"
        if job.get("error"):
            reasons.append(Reason(FAIL, f"{where}{name} ended with error {job['error']}"))
        for direction in ("read", "write"):
            figures = job.get(direction)
            if not figures:
                continue
            if figures.get("bw_mib_s") is not None:
                measured[f"{direction}_mib_s"].append((name, figures["bw_mib_s"]))
            if figures.get("iops") is not None:
                measured[f"{direction}_iops"].append((name, figures["iops"]))
            p99 = (figures.get("clat_percentiles_us") or {}).get("99.00")
            if p99 is not None:
                measured["p99_clat_us"].append((f"{name} {direction}", p99))
    if not jobs:
        for group in (item for item in items if item.get("tool") == "fio" and item.get("kind") == "group"):
            measured[f"{group['direction']}_mib_s"].append((f"fio group {group['group_id']}", group.get("bw_mib_s")))
    for ior in (item for item in items if item.get("tool") == "ior"):
        for operation in ior.get("operations") or []:
            if operation["operation"] in ("read", "write") and operation.get("mean_mib_s") is not None:
                measured[f"{operation['operation']}_mib_s"].append(
                    (f"IOR {operation['operation']}", operation["mean_mib_s"])
                )
    for key, unit, label in (
        ("read_mib_s", "MiB/s", "read bandwidth"),
        ("write_mib_s", "MiB/s", "write bandwidth"),
        ("read_iops", "IOPS", "read IOPS"),
        ("write_iops", "IOPS", "write IOPS"),
    ):
        floor = getattr(floors, key)
        if floor is None:
            continue
        values = [(name, value) for name, value in measured.get(key, []) if value is not None]
        if not values:
            reasons.append(Reason(ERROR, f"{where}{label} not measured (floor {fmt_num(floor)} {unit})"))
        for name, value in values:
            if value < floor:
                reasons.append(
                    Reason(FAIL, f"{where}{name} {label} {fmt_num(value, 2)} {unit} < floor {fmt_num(floor)} {unit}")
                )
    if floors.p99_clat_us is not None:
        values = measured.get("p99_clat_us", [])
        if not values:
            reasons.append(Reason(ERROR, f"{where}p99 completion latency not measured"))
        for name, value in values:
            if value > floors.p99_clat_us:
                reasons.append(
                    Reason(
                        FAIL,
                        f"{where}{name} p99 completion latency {fmt_num(value)} us > {fmt_num(floors.p99_clat_us)} us",
                    )
                )
    return Verdict.of(reasons)


def judge_hash_agreement(hashes: Mapping[str, str | None], *, what: str = "the test file") -> Verdict:
    """Every node read back the same bytes: the majority's hash is taken as right, every node with another (or
    none) is named. Agreement needs two nodes at least."""
    known = {node: value.strip().lower() for node, value in hashes.items() if value and value.strip()}
    reasons = [
        Reason(ERROR, f"{node}: no hash of {what}: not measured")
        for node, value in hashes.items()
        if not (value and value.strip())
    ]
    if len(known) < 2:
        return Verdict.of([*reasons, Reason(ERROR, f"hash agreement of {what} needs two nodes, {len(known)} reported")])
    counts = Counter(known.values())
    (majority, votes), *others = counts.most_common()
    if others and others[0][1] == votes:
        groups = ", ".join(
            f"{value[:12]} on {', '.join(sorted(n for n, v in known.items() if v == value))}" for value in counts
        )
        return Verdict.of([*reasons, Reason(FAIL, f"nodes disagree on {what} with no majority: {groups}")])
    for node, value in sorted(known.items()):
        if value != majority:
            reasons.append(
                Reason(FAIL, f"{node}: {what} hash {value[:16]} differs from {votes} other nodes' {majority[:16]}")
            )
    return Verdict.of(reasons)


# ---------------------------------------------------------------------------------------------------
# Training smoke test


@dataclass(frozen=True)
class TrainingExpectations:
    world_size: int | None = None
    min_steps: int = 1
    loss_rise_tolerance: float = 0.05  # the last loss may be this share above the first before it "rises"
    require_nccl_init: bool = False  # demand NCCL's Init COMPLETE lines (run with NCCL_DEBUG=INFO)


def judge_training_log(log: Any, *, expected: TrainingExpectations | None = None, node: str | None = None) -> Verdict:
    """Every rank joined, the collective came up, N steps were done, the loss is finite and not rising, and
    no error was printed."""
    expected = expected or TrainingExpectations()
    data = as_dict(log)
    where = _prefix(node)
    reasons: list[Reason] = []
    sizes = data.get("world_sizes") or []
    if len(set(sizes)) > 1:
        reasons.append(Reason(FAIL, f"{where}the log states different world sizes: {', '.join(map(str, sizes))}"))
    size = expected.world_size
    if size is not None:
        if data.get("world_size") is not None and data["world_size"] != size:
            reasons.append(Reason(FAIL, f"{where}world size {data['world_size']}, {size} expected"))
        seen = set(data.get("nccl_init_complete_ranks") or ()) or set(data.get("ranks_seen") or ())
        if not seen and data.get("world_size") is None:
            reasons.append(Reason(ERROR, f"{where}the log shows no rank and no world size: ranks not measured"))
        elif seen:
            missing = sorted(set(range(size)) - seen)
            if missing:
                reasons.append(Reason(FAIL, f"{where}ranks {_ranges(missing)} of {size} never appear in the log"))
    reasons += _nccl_init_reasons(data, expected, where)
    reasons += _step_reasons(data, expected, where)
    if data.get("error_count"):
        first = (data.get("errors") or [{}])[0]
        reasons.append(
            Reason(
                FAIL,
                f"{where}{data['error_count']} error lines, first at line {first.get('line_no')}: "
                f"{(first.get('text') or '')[:200]}",
            )
        )
    if data.get("ib_async_events"):
        first = next((w for w in data.get("warnings") or [] if w.get("kind") == "ib_async_event"), {})
        reasons.append(
            Reason(
                WARN,
                f"{where}{data['ib_async_events']} InfiniBand async events, first at line "
                f"{first.get('line_no')}: {(first.get('text') or '')[:160]}",
            )
        )
    nccl_warnings = [w for w in data.get("warnings") or [] if w.get("kind") == "nccl_warn"]
    if nccl_warnings:
        reasons.append(
            Reason(WARN, f"{where}NCCL WARN at line {nccl_warnings[0]['line_no']}: {nccl_warnings[0]['text'][:160]}")
        )
    return Verdict.of(reasons)


def _nccl_init_reasons(data: Mapping[str, Any], expected: TrainingExpectations, where: str) -> list[Reason]:
    ranks = set(data.get("nccl_init_complete_ranks") or ())
    size = expected.world_size or data.get("world_size")
    if ranks:
        missing = sorted(set(range(size)) - ranks) if size else []
        if missing:
            return [Reason(FAIL, f"{where}NCCL Init COMPLETE missing for ranks {_ranges(missing)} of {size}")]
        return []
    if expected.require_nccl_init:
        return [
            Reason(
                ERROR, f"{where}no NCCL 'Init COMPLETE' line (run with NCCL_DEBUG=INFO): collective init not measured"
            )
        ]
    if data.get("steps"):
        return [Reason(PASS, f"{where}NCCL init not logged; the steps done show the collectives ran")]
    return []


def _step_reasons(data: Mapping[str, Any], expected: TrainingExpectations, where: str) -> list[Reason]:
    steps = data.get("steps") or []
    if not steps:
        return [Reason(FAIL, f"{where}no training step with a loss in the log")]
    reasons = []
    last = data.get("last_step") or 0
    if last < expected.min_steps:
        reasons.append(Reason(FAIL, f"{where}{last} steps done, {expected.min_steps} required"))
    bad = [step for step in steps if not step.get("finite", True)]
    if bad:
        reasons.append(
            Reason(
                FAIL,
                f"{where}loss not finite ({bad[0]['loss_text']}) at step {bad[0]['step']}, "
                f"line {bad[0]['line_no']} ({len(bad)} steps)",
            )
        )
    losses = [step["loss"] for step in steps if step.get("loss") is not None]
    if len(losses) >= 2:
        first, final = losses[0], losses[-1]
        third = max(1, len(losses) // 3)
        early, late = statistics.fmean(losses[:third]), statistics.fmean(losses[-third:])
        limit = abs(first) * expected.loss_rise_tolerance
        if final > first + limit or late > early + abs(early) * expected.loss_rise_tolerance:
            reasons.append(
                Reason(
                    FAIL, f"{where}loss rising: {fmt_num(first, 4)} at the first step, {fmt_num(final, 4)} at the last"
                )
            )
    return reasons


def _ranges(numbers: Sequence[int]) -> str:
    parts, start = [], None
    for index, number in enumerate(numbers):
        if start is None:
            start = number
        if index + 1 == len(numbers) or numbers[index + 1] != number + 1:
            parts.append(str(start) if start == number else f"{start}-{number}")
            start = None
    return ", ".join(parts)


# ---------------------------------------------------------------------------------------------------
# Redfish (the BMC)

_CRITICAL_KINDS = {"PowerSupply", "Fan", "Temperature", "Sensor", "PowerSubsystem", "ThermalSubsystem"}
_FINE_STATES = {"Enabled", "Absent", "Disabled", "StandbySpare", "InTest", "Quiesced"}


def judge_redfish(
    results: Sequence[Any],
    *,
    expected_serial: str | None = None,
    node: str | None = None,
    expected_macs: Sequence[str] = (),
) -> Verdict:
    """Every PSU, fan and temperature (legacy Thermal/Power or the newer subsystems and Sensors) must be OK:
    anything else fails, naming it; a reading past its critical threshold fails, past its caution threshold
    warns. Other components not OK warn; the system's or chassis's own health Critical fails, Warning warns.
    The serial must be the one the inventory expects; expected MACs must be among the NICs'."""
    where = _prefix(node)
    items = [as_dict(result) for result in results]
    if not items:
        return Verdict.of([Reason(ERROR, f"{where}no Redfish resource read: not measured")])
    reasons: list[Reason] = []
    systems = [item for item in items if item.get("kind") == "ComputerSystem"]
    chassis = [item for item in items if item.get("kind") == "Chassis"]
    for item in systems + chassis:
        label = f"{where}{item['kind']} {item.get('id') or item.get('odata_id') or ''}".rstrip()
        for key in ("health", "health_rollup"):
            value = item.get(key)
            if value == "Critical":
                reasons.append(Reason(FAIL, f"{label}: {key.replace('_', ' ')} Critical"))
            elif value and value != "OK":
                reasons.append(Reason(WARN, f"{label}: {key.replace('_', ' ')} {value}"))
        if item.get("power_state") and item["power_state"] != "On":
            reasons.append(Reason(WARN, f"{label}: power state {item['power_state']}"))
    for item in items:
        if item.get("kind") in ("ComputerSystem", "Chassis", "ServiceRoot"):
            continue
        reasons += _redfish_component_reasons(item, where)
    reasons += _serial_reasons(systems, chassis, expected_serial, where)
    if expected_macs:
        macs = {
            (item.get(key) or "").lower()
            for item in items
            if item.get("kind") == "EthernetInterface"
            for key in ("mac_address", "permanent_mac_address")
        }
        for mac in expected_macs:
            if mac.lower() not in macs:
                reasons.append(Reason(FAIL, f"{where}NIC {mac} not among the BMC's Ethernet interfaces"))
    return Verdict.of(reasons)


def _component_label(item: Mapping[str, Any], where: str) -> str:
    name = item.get("name") or item.get("service_label") or item.get("member_id") or item.get("odata_id") or "?"
    kind = {"PowerSupply": "PSU", "Temperature": "temperature sensor", "Sensor": "sensor"}.get(
        item.get("kind"), item.get("kind")
    )
    return f"{where}{kind} {name!r}"


def _redfish_component_reasons(item: Mapping[str, Any], where: str) -> list[Reason]:
    kind = item.get("kind")
    health, state = item.get("health"), item.get("state")
    label = _component_label(item, where)
    reasons = []
    if health and health != "OK":
        level = FAIL if kind in _CRITICAL_KINDS or health == "Critical" else WARN
        reasons.append(Reason(level, f"{label}: health {health} (state {state or 'not given'})"))
    if state and state not in _FINE_STATES:
        level = FAIL if kind in _CRITICAL_KINDS else WARN
        reasons.append(Reason(level, f"{label}: state {state}"))
    reading = _number(item.get("reading"))
    crossed = _crossed(reading, item.get("thresholds") or {}) if reading is not None and state != "Disabled" else None
    if crossed:
        level, which, limit = crossed
        units = f" {item['units']}" if item.get("units") else ""
        reasons.append(
            Reason(
                level,
                f"{label}: reading {fmt_num(reading, 2)}{units} at or past its {which} threshold {fmt_num(limit, 2)}",
            )
        )
    return reasons


def _crossed(reading: float, thresholds: Mapping[str, float]) -> tuple[Outcome, str, float] | None:
    """The most severe threshold the reading is at or past: (level, "upper critical", limit)."""
    for name, level in (("fatal", FAIL), ("critical", FAIL), ("caution", WARN)):
        upper, lower = _number(thresholds.get(f"upper_{name}")), _number(thresholds.get(f"lower_{name}"))
        if upper is not None and reading >= upper:
            return level, f"upper {name}", upper
        if lower is not None and reading <= lower:
            return level, f"lower {name}", lower
    return None


def _serial_reasons(systems: list[dict], chassis: list[dict], expected: str | None, where: str) -> list[Reason]:
    if expected is None:
        return []
    serials = [item.get("serial_number") for item in systems if item.get("serial_number")]
    serials = serials or [item.get("serial_number") for item in chassis if item.get("serial_number")]
    if not serials:
        return [Reason(ERROR, f"{where}the BMC reports no serial number: serial not measured")]
    if expected.strip().lower() not in {serial.strip().lower() for serial in serials}:
        return [Reason(FAIL, f"{where}serial {', '.join(serials)} reported by the BMC, {expected} expected")]
    return []


__all__ = [
    "BandwidthTolerance",
    "GpuHealthProfile",
    "StorageFloors",
    "TrainingExpectations",
    "XID_MEANINGS",
    "XidProfile",
    "gpu_label",
    "gpu_names",
    "judge_bandwidth_test",
    "judge_dcgm_diag",
    "judge_gpu_health",
    "judge_hash_agreement",
    "judge_nvbandwidth",
    "judge_nvlink",
    "judge_p2p",
    "judge_redfish",
    "judge_storage",
    "judge_training_log",
    "judge_xids",
]
