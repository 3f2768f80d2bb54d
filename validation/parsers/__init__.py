"""Parsers for the text that cluster-validation tools print. Pure Python: no Django import.

    from validation.parsers import parse, ParseError
    results = parse(text)                 # detects the tool
    results = parse(text, tool="mlxlink")
    [result.to_dict() for result in results]

Every parser returns a list of typed dataclasses (one per test, device, port or neighbour found),
each with `tool` and `to_dict()`, and raises only `ParseError` on malformed input.
"""

from __future__ import annotations

from collections.abc import Callable

from . import (
    dcgmi_diag,
    ethtool,
    ethtool_stats,
    gpu_bandwidth,
    ibdiagnet,
    iblinkinfo,
    ibnetdiscover,
    ibstat,
    ibstatus,
    ipmitool,
    lldp,
    mlnx_qos,
    mlxlink,
    nccl,
    nvidia_smi_q,
    nvlink,
    nvsmi_topo,
    nvue_lldp,
    nvue_qos,
    perfquery,
    perftest,
    redfish,
    storage_bw,
    training_log,
    xid,
)
from .base import ParsedResult, ParseError
from .detect import detect_tool

PARSERS: dict[str, Callable[[str], list[ParsedResult]]] = {
    "nccl": nccl.parse,
    "perftest": perftest.parse,
    "mlxlink": mlxlink.parse,
    "ibstat": ibstat.parse,
    "ibstatus": ibstatus.parse,
    "perfquery": perfquery.parse,
    "ethtool": ethtool.parse,
    "ethtool_stats": ethtool_stats.parse,
    "mlnx_qos": mlnx_qos.parse,
    "nvue_qos": nvue_qos.parse,
    "nvsmi_topo": nvsmi_topo.parse,
    "iblinkinfo": iblinkinfo.parse,
    "ibnetdiscover": ibnetdiscover.parse,
    "lldp": lldp.parse,
    "nvue_lldp": nvue_lldp.parse,
    "ibdiagnet": ibdiagnet.parse,
    # Node tools (issue 22): GPUs, DCGM, kernel XIDs, NVLink, copy bandwidth, storage, training, BMC.
    "nvidia_smi_q": nvidia_smi_q.parse,
    "dcgmi_diag": dcgmi_diag.parse,
    "xid": xid.parse,
    "nvlink": nvlink.parse,
    "nvbandwidth": gpu_bandwidth.parse_nvbandwidth,
    "cuda_bandwidth_test": gpu_bandwidth.parse_bandwidth_test,
    "p2p_bandwidth_latency": gpu_bandwidth.parse_p2p,
    "fio": storage_bw.parse_fio,
    "ior": storage_bw.parse_ior,
    "training_log": training_log.parse,
    "redfish": redfish.parse,
    "ipmitool": ipmitool.parse,
}
TOOL_CHOICES = ("auto", *PARSERS)


def parse(text: str, tool: str = "auto", *, source_name: str | None = None) -> list[ParsedResult]:
    """Parse one tool's output. `source_name` (e.g. the uploaded file's name) only helps name an
    nccl test that old nccl-tests builds never print."""
    if tool == "auto":
        tool = detect_tool(text)
    if tool not in PARSERS:
        raise ValueError(f"unknown tool {tool!r}; choose one of {', '.join(TOOL_CHOICES)}")
    if tool == "nccl":
        return nccl.parse(text, source_name=source_name)
    return PARSERS[tool](text)


__all__ = ["PARSERS", "TOOL_CHOICES", "ParseError", "ParsedResult", "detect_tool", "parse"]
