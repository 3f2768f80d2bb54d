"""Uploads of the RoCE tools, judged as the checks judge them: `ethtool -S` (a port's NIC counters, as link
health reads them beside mlxlink), `mlnx_qos -i <if>` (a host port's lossless configuration, as the lossless
check reads it) and NVUE's `nv show [interface <if>] qos roce` (a switch's side, judged by
criteria.evaluate_switch_lossless). Each is filed against the port its output names: the interface of its
command line or banner (`ethtool -S eth3`, `===== mlx5_3 eth3 =====`, `nv show interface swp16 ...`); an
output that names none is filed against the node, with a warning saying how to name it."""

from __future__ import annotations

from django.core.exceptions import ValidationError

from inventory.choices import DeviceRole, HardwareKind

from .. import criteria
from ..choices import CheckKind
from ..cluster import roce_settings
from ..kinds.link_health import previous_link_counters
from .filing import Filed, PortFinder, UploadRejected
from .judge import split_text

SWITCH_ROLES = (DeviceRole.LEAF, DeviceRole.SPINE, DeviceRole.SUPER_SPINE, DeviceRole.MGMT_SWITCH)
SWITCH_KINDS = (HardwareKind.IB_SWITCH, HardwareKind.ETH_SWITCH, HardwareKind.MGMT_SWITCH)
NO_JUDGED_COUNTERS = ("none of the counters link health judges (rx_discards_phy, rx_prioN_discards, "
                      "rx_crc_errors_phy, ...) is in the output")


def _settings(upload) -> criteria.RoceSettings:
    try:
        return roce_settings(upload.project)
    except ValidationError as exc:  # a profile stored wrong past its service: say so, as a run would
        raise UploadRejected(1, " ".join(exc.messages)) from exc


def _with_notes(verdict: criteria.Verdict, notes: list[criteria.Reason]) -> criteria.Verdict:
    return criteria.Verdict.of([*verdict.reasons, *notes]) if notes else verdict


def _pieces(text: str, parsed: list) -> list:
    return list(zip(parsed, split_text(text, [r.line_no for r in parsed]), strict=True))


# ---------------------------------------------------------------------------------------------------
# ethtool -S


def ethtool_stats_results(upload, parsed, text, finder: PortFinder, profile: criteria.Profile):
    """Each interface's counters against the lossless priority, the profile's BER and the port's previous
    reading (a run's or an upload's): what link health judges of `ethtool -S` on a RoCE port."""
    settings = _settings(upload)
    filed = []
    for index, (result, raw) in enumerate(_pieces(text, parsed)):
        place = finder.find(result.interface)
        notes = [] if place else [finder.unmatched(result.interface, how="its interface (an `ethtool -S <if>` "
                                                                           "line above the counters)")]
        kept = criteria.kept_port_counters(result.counters)
        if not kept:
            notes.append(criteria.Reason(criteria.Outcome.WARN, NO_JUDGED_COUNTERS))
        previous = previous_link_counters(project_id=upload.project_id, port_id=place.port.pk) if place else None
        reasons = criteria.port_counter_reasons(result.counters, settings=settings, profile=profile,
                                                baseline=(previous or {}).get("port_counters"))
        metrics = {"interface": result.interface, "port_counters": kept, "counters_read": len(result.counters)}
        verdict = _with_notes(criteria.Verdict.of(reasons), notes)
        filed.append(Filed(finder.key(place, result.interface, index), verdict, metrics, raw, place))
    return CheckKind.LINK_HEALTH, filed


# ---------------------------------------------------------------------------------------------------
# mlnx_qos


def mlnx_qos_results(upload, parsed, text, finder: PortFinder, profile: criteria.Profile):
    """Each interface's configuration as the lossless check judges it. A setup log prints the whole
    configuration after every change: the last output of an interface is the one it runs with. ECN is not in
    mlnx_qos's output (the lossless check reads it from /sys), so it is reported as not read."""
    settings = _settings(upload)
    last: dict[str | None, tuple] = {}
    for index, (result, raw) in enumerate(_pieces(text, parsed)):
        last[result.interface] = (index, result, raw)
    filed = []
    for index, result, raw in last.values():
        place = finder.find(result.interface)
        notes = [] if place else [finder.unmatched(result.interface, how="its interface (the `mlnx_qos -i <if>` "
                                                                           "command line)")]
        if place is not None and place.rail is not None and not place.rail.ethernet:
            notes.append(criteria.Reason(criteria.Outcome.WARN, f"{place.port.name} is an InfiniBand port: "
                                                                "PFC and DSCP do not apply to it"))
        metrics = {**result.to_dict(), "ecn": None}
        verdict = _with_notes(criteria.evaluate_lossless(result, settings=settings, ecn=None), notes)
        filed.append(Filed(finder.key(place, result.interface, index), verdict, metrics, raw, place))
    return CheckKind.LOSSLESS, filed


# ---------------------------------------------------------------------------------------------------
# NVUE qos roce


def is_switch(device) -> bool:
    kind = getattr(device.hardware_model, "kind", None) if device.hardware_model_id else None
    return device.role in SWITCH_ROLES or kind in SWITCH_KINDS


def nvue_qos_results(upload, parsed, text, finder: PortFinder, profile: criteria.Profile):
    """The switch's RoCE profile (`nv show qos roce`: filed against the switch) or a port's (`nv show interface
    swp16 qos roce status`: filed against that port), judged by criteria.evaluate_switch_lossless."""
    if not is_switch(upload.device):
        raise UploadRejected(parsed[0].line_no, f"NVUE prints a switch's configuration, and {upload.device.name} "
                                               f"is not a switch: upload it with the switch's name as the host")
    settings = _settings(upload)
    filed = []
    for index, (result, raw) in enumerate(_pieces(text, parsed)):
        if result.interface is None:
            place, notes, key = None, [], f"{finder.name}:qos roce"
        else:
            place = finder.find(result.interface)
            notes = [] if place else [finder.unmatched(result.interface)]
            key = finder.key(place, result.interface, index)
        metrics = result.to_dict()
        metrics.pop("settings", None)  # the tree as printed is in the raw output; its meaning is in the fields
        verdict = _with_notes(criteria.evaluate_switch_lossless(result, settings=settings), notes)
        filed.append(Filed(key, verdict, metrics, raw, place))
    return CheckKind.LOSSLESS, filed
