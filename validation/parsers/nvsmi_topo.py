"""`nvidia-smi topo -m` output: the GPU/NIC connection matrix, CPU/NUMA affinity and the NIC legend.

Cells are tab-separated as printed (a copy that turned tabs into spaces is read by whitespace);
empty cells, such as the double tab before "N/A" in the GPU NUMA ID column, are skipped. For each
GPU the NICs with the closest connection are listed, which is how a rail (GPU i <-> NIC i) is read
off the matrix.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .base import Line, ParsedResult, ParseError, last_line_no, optional_text, shown, split_lines

TOOL = "nvsmi_topo"

_CONNECTION = re.compile(r"^(X|SYS|NODE|PHB|PXB|PIX|SOC|NV[0-9]+|N/A)$")
_AFFINITY_COLUMNS = {
    "CPU Affinity": "cpu_affinity",
    "NUMA Affinity": "numa_affinity",
    "GPU NUMA ID": "gpu_numa_id",
}
_LEGEND = re.compile(r"^(?P<nic>NIC[0-9]+):\s*(?P<name>\S+)$")
# Closer first. NV# (NVLink) is between GPUs; PIX/PXB mean a NIC on the GPU's own PCIe switch.
_CLOSENESS = ["X", "NV", "PIX", "PXB", "PHB", "NODE", "SYS", "SOC"]


@dataclass(kw_only=True)
class TopologyResult(ParsedResult):
    tool: str = TOOL
    gpus: list[str] = field(default_factory=list)
    nics: list[str] = field(default_factory=list)  # column names, e.g. NIC0 (or mlx5_0 on old drivers)
    nic_names: dict[str, str] = field(default_factory=dict)  # NIC0 -> mlx5_0, from the NIC legend
    matrix: dict[str, dict[str, str]] = field(default_factory=dict)
    affinity: dict[str, dict[str, str | None]] = field(default_factory=dict)
    closest_nics: dict[str, list[str]] = field(default_factory=dict)  # GPU0 -> ["mlx5_0"]
    line_no: int = 1


def parse(text: str) -> list[TopologyResult]:
    lines = split_lines(text)
    header_index = next((i for i, line in enumerate(lines) if _is_header(line)), None)
    if header_index is None:
        raise ParseError(
            last_line_no(lines),
            "no topology matrix header found",
            "a header line listing GPU0 GPU1 ... (NIC0 ...) CPU Affinity",
        )
    header = lines[header_index]
    tabbed = "\t" in header.text
    names = _cells(header.text, tabbed, header=True)
    devices = [name for name in names if name not in _AFFINITY_COLUMNS]
    extras = [_AFFINITY_COLUMNS[name] for name in names if name in _AFFINITY_COLUMNS]
    result = TopologyResult(
        gpus=[name for name in devices if name.startswith("GPU")],
        nics=[name for name in devices if not name.startswith("GPU")],
        line_no=header.no,
    )
    for line in lines[header_index + 1 :]:
        cells = _cells(line.text, tabbed)
        if cells and cells[0] in devices:
            _read_row(result, line, cells, devices, extras)
        elif match := _LEGEND.match(line.stripped):
            result.nic_names[match["nic"]] = match["name"]
    missing = [gpu for gpu in result.gpus if gpu not in result.matrix]
    if missing:
        raise ParseError(last_line_no(lines), f"no matrix row for {', '.join(missing)}", "one row per GPU")
    result.closest_nics = _closest_nics(result)
    return [result]


def _is_header(line: Line) -> bool:
    cells = line.text.split()
    return bool(cells) and cells[0] == "GPU0" and len(cells) > 1 and cells[1] != "X"


def _cells(text: str, tabbed: bool, *, header: bool = False) -> list[str]:
    if tabbed:
        parts = text.split("\t")
    else:
        # Without tabs, header names contain single spaces ("CPU Affinity"); values never do.
        parts = re.split(r"\s{2,}" if header else r"\s+", text)
    return [part.strip() for part in parts if part.strip()]


def _read_row(result: TopologyResult, line: Line, cells: list[str], devices: list[str], extras: list[str]):
    label, values = cells[0], cells[1:]
    if len(values) < len(devices):
        raise ParseError(
            line.no, f"row {label} has {len(values)} cells", f"{len(devices)} cells, one per device column"
        )
    row = {}
    for device, value in zip(devices, values, strict=False):
        if not _CONNECTION.match(value):
            raise ParseError(
                line.no, f"{label}/{device} is {shown(value)}", "X, NV#, PIX, PXB, PHB, NODE, SYS or SOC"
            )
        row[device] = value
    result.matrix[label] = row
    if label.startswith("GPU"):
        affinity = dict(zip(extras, values[len(devices) :], strict=False))
        result.affinity[label] = {name: optional_text(affinity.get(name)) for name in extras}


def _closest_nics(result: TopologyResult) -> dict[str, list[str]]:
    closest = {}
    for gpu in result.gpus:
        ranked = [(_rank(result.matrix[gpu].get(nic, "SYS")), nic) for nic in result.nics]
        if not ranked:
            continue
        best = min(rank for rank, _ in ranked)
        closest[gpu] = [result.nic_names.get(nic, nic) for rank, nic in ranked if rank == best]
    return closest


def _rank(connection: str) -> int:
    kind = "NV" if connection.startswith("NV") else connection
    return _CLOSENESS.index(kind) if kind in _CLOSENESS else len(_CLOSENESS)
