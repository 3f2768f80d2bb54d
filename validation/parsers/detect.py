"""Which tool printed this text? Checked most specific first; each test is a line-anchored pattern
only that tool's output produces. An output holding several tools (an nccl log that also has
`nvidia-smi topo -m` in it) goes to the first in this order, which is the one worth judging."""

from __future__ import annotations

import re

from .base import ParseError, split_lines

_SIGNATURES: list[tuple[str, re.Pattern]] = [
    (
        "nccl",
        re.compile(
            r"^[ \t]*#[ \t]*(?:nThread\s+[0-9]+\s+nGpus|nccl-tests version|Collective test starting:"
            r"|Out of bounds values\s*:)|^[ \t]*#(?=[^\n]*\balgbw\b)(?=[^\n]*\bbusbw\b)",
            re.MULTILINE,
        ),
    ),
    (
        "perftest",
        re.compile(
            r"^[ \t]*(?:Send|RDMA_Write|RDMA_Read|Atomic)\b(?=[^\n]*\b(?:BW|Latency)\b)[^\n]*\bTest[ \t]*$"
            r"|^[ \t]*#bytes\s+#iterations",
            re.MULTILINE,
        ),
    ),
    (
        "ibdiagnet",
        re.compile(
            r"Stages Status Report|^[ \t]*(?:-I-\s+)?Stage\s+Warnings\s+Errors", re.MULTILINE | re.IGNORECASE
        ),
    ),
    (
        "mlxlink",
        re.compile(
            r"^[ \t]*(?:Operational Info|Module Info|Physical Counters and BER Info)"
            r"[ \t]*\n[ \t]*-{3,}[ \t]*$"
            # grep keeps the title without its dashes, or only mlxlink's padded BER lines
            r"|^[ \t]*Physical Counters and BER Info[ \t]*$"
            r"|^[ \t]*(?:(?:Raw|Effective) Physical BER|Recommendation)[ \t]{2,}:",
            re.MULTILINE,
        ),
    ),
    (
        "nvue_qos",
        re.compile(
            r"^[ \t]*RoCE (?:PCP/DSCP->SP|SP->TC) mapping|^[ \t]*(?:\S+[ \t]+)*nv show (?:interface \S+ )?qos roce\b",
            re.MULTILINE,
        ),
    ),
    (
        "mlnx_qos",
        re.compile(
            r"^[ \t]*Priority trust (?:state|mode)\s*:|^[ \t]*DCBX mode\s*:|^[ \t]*PFC configuration:[ \t]*$",
            re.MULTILINE,
        ),
    ),
    (
        "ethtool_stats",
        re.compile(
            r"^[ \t]*NIC statistics:[ \t]*$"
            # grep keeps only counter lines: mlx5's physical-port or per-priority counters say which tool
            r"|^[ \t]*(?:rx|tx)_(?:[a-z0-9]+_)*(?:phy|prio[0-7]_(?:pause|discards))[ \t]*:[ \t]*[0-9]+[ \t]*$",
            re.MULTILINE,
        ),
    ),
    ("ibstatus", re.compile(r"^[ \t]*Infiniband device\s+'[^']+'\s+port\s+\S+\s+status:", re.MULTILINE)),
    ("ibstat", re.compile(r"^[ \t]*CA\s+'[^']+'\s*$", re.MULTILINE)),
    (
        "perfquery",
        re.compile(r"^[ \t]*#\s*Port\s+(?:extended\s+)?counters:|^[ \t]*[A-Za-z0-9]+:\.{3,}\S", re.MULTILINE),
    ),
    ("ethtool", re.compile(r"^[ \t]*Identifier\s*:\s*0x[0-9a-fA-F]{2}\b", re.MULTILINE)),
    (
        "nvsmi_topo",
        re.compile(r"^[ \t]*GPU0[ \t]+(?:GPU1|NIC0|mlx|CPU Affinity)|^[ \t]*X\s+=\s+Self\s*$", re.MULTILINE),
    ),
    (
        "iblinkinfo",
        re.compile(r"^[ \t]*(?:0x[0-9a-fA-F]+[ \t]+)?[0-9]+[ \t]+[0-9]+\[[^\]\n]*\][ \t]*==\(", re.MULTILINE),
    ),
    (
        "ibnetdiscover",
        re.compile(
            r"^[ \t]*(?:Switch|Ca|Rt)\s+[0-9]+\s+\"[SHR]-|^[ \t]*(?:switchguid|caguid)=", re.MULTILINE
        ),
    ),
    (
        "nvue_lldp",
        re.compile(
            r"^[ \t]*Interface\s+Speed\s+Type\s+Remote Host\s+Remote Port[ \t]*$"
            r"|^[ \t]*Neighbor\s+Remote IP\s+Model\s+SW Version\s+Remote Port[ \t]*$",
            re.MULTILINE,
        ),
    ),
    (
        "lldp",
        re.compile(
            r"^[ \t]*LLDP neighbors:|^[ \t]*Interface:\s+\S+,\s*via:|^lldp\.[^=\n]+\.(?:via|chassis|port)\b"
            r"|\A\s*\{\s*\"(?:lldp|lldp_loc_chassis)\"\s*:",
            re.MULTILINE,
        ),
    ),
    # Node tools (issue 22), after the fabric tools above: none of their outputs holds these lines.
    ("redfish", re.compile(r"^[ \t]*\"@odata\.(?:type|id|context)\"[ \t]*:", re.MULTILINE)),
    (
        "dcgmi_diag",
        re.compile(
            r"^[ \t]*\|[ \t]*Diagnostic[ \t]*\|[ \t]*Result[ \t]*\|"
            r"|^[ \t]*[|+]-{2,}[ \t]+(?:Metadata|Deployment|Integration|Hardware|Stress|Custom|Performance)"
            r"[ \t]+-{2,}\+"
            # a table pasted without its head: a 3.x result with its GPUs, or a 4.x per-GPU row
            r"|^[ \t]*\|[^|\n]{1,40}\|[ \t]*(?:Pass|Fail|Warn|Skip)[ \t]+-[ \t]+(?:All|GPUs?:)"
            r"|^[ \t]*\|[ \t]*\|[ \t]*GPU[0-9]{1,4}:[ \t]*(?:Pass|Fail|Warn|Skip)[ \t]*\|"
            r"|^[ \t]*\"DCGM (?:GPU )?Diagnostic\"[ \t]*:|^[ \t]*\"test_summary\"[ \t]*:",
            re.MULTILINE,
        ),
    ),
    (
        "nvidia_smi_q",
        re.compile(
            r"^[ \t]*=+[ \t]*NVSMI LOG[ \t]*=+[ \t]*$|^[ \t]*<nvidia_smi_log>|<!DOCTYPE nvidia_smi_log\b"
            r"|^GPU [0-9A-Fa-f]{8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7][ \t]*$"
            # a section pasted on its own
            r"|^[ \t]*ECC Errors[ \t]*\n[ \t]*(?:Volatile|Aggregate)[ \t]*$"
            r"|^[ \t]*Retired Pages[ \t]*\n[ \t]*Single Bit ECC[ \t]+:"
            r"|^[ \t]*Remapped Rows[ \t]*\n[ \t]*Correctable Error[ \t]+:",
            re.MULTILINE,
        ),
    ),
    (
        "nvlink",
        re.compile(
            r"^[ \t]*\|[ \t]*GPU ID:[ \t]*[0-9]{1,4}[ \t]*\|[ \t]*NVLINK Error Counts"
            r"|^[ \t]*Link [0-9]{1,3}: (?:[0-9.]{1,12} GB/s|<inactive>|(?:Replay|Recovery|CRC)[A-Za-z ]{0,20}Errors?:)",
            re.MULTILINE,
        ),
    ),
    (
        "p2p_bandwidth_latency",
        re.compile(
            r"^[ \t]*\[P2P \(Peer-to-Peer\) GPU Bandwidth Latency Test\]"
            r"|^[ \t]*(?:Unidirectional|Bidirectional) P2P=(?:Enabled|Disabled) Bandwidth",
            re.MULTILINE,
        ),
    ),
    (
        "cuda_bandwidth_test",
        re.compile(
            r"^[ \t]*\[CUDA Bandwidth Test\] - Starting"
            r"|^[ \t]*(?:Host to Device|Device to Host|Device to Device) Bandwidth, [0-9]{1,3} Device\(s\)",
            re.MULTILINE,
        ),
    ),
    (
        "nvbandwidth",
        re.compile(
            r"^[ \t]*nvbandwidth Version:|^[ \t]*Running [a-z0-9_]{1,120}_(?:ce|sm)\.[ \t]*$"
            r"|^[ \t]*memcpy (?:CE|SM) (?:CPU|GPU)\(row\)|^[ \t]*\"nvbandwidth\"[ \t]*:",
            re.MULTILINE,
        ),
    ),
    (
        "fio",
        re.compile(
            r"^[ \t]*\"fio version\"[ \t]*:|^[^\n:]{1,200}: \(groupid=[0-9]{1,6}, jobs=[0-9]{1,6}\): err="
            r"|^[ \t]*Run status group [0-9]{1,6} \(all jobs\):",
            re.MULTILINE,
        ),
    ),
    (
        "ior",
        re.compile(
            r"^[ \t]*access[ \t]+bw\(MiB/s\)|^[ \t]*Summary of all tests:|^IOR-[0-9]"
            r"|^[ \t]*Max (?:Write|Read):[ \t]+[0-9.]{1,20} MiB/sec",
            re.MULTILINE,
        ),
    ),
    (
        "xid",
        re.compile(
            r"^[^\n]{0,400}?\bS?Xid \((?:PCI:)?[0-9A-Fa-f]{1,8}:[0-9A-Fa-f]{1,2}:[0-9A-Fa-f]{1,2}(?:\.[0-7])?\):"
            r" ?[0-9]",
            re.MULTILINE,
        ),
    ),
    (
        "training_log",
        re.compile(
            r"\bn[Rr]anks [0-9]{1,7}\b[^\n]{0,200}- Init COMPLETE[ \t]*$|\bstore_based_barrier_key\b"
            r"|^\[rank[0-9]{1,7}\]:|^[^\n]{0,200}?\bstep[=:][ \t]*[0-9]{1,9}\b[^\n]{0,200}?\bloss[=:]",
            re.MULTILINE,
        ),
    ),
    (
        "ipmitool",
        re.compile(
            r"^[ \t]*[0-9a-fA-F]{1,8} \| (?:[0-9]{2}/[0-9]{2}/[0-9]{4}|Pre-Init) +\|"
            r"|^[ \t]*Instantaneous power reading:|^[ \t]*SEL has no entries"
            r"|^[^|\n]{1,40}\|[ \t]*[0-9a-fA-F]{1,4}h[ \t]*\|[ \t]*[a-z]{2,3}[ \t]*\|"
            r"|^[^|\n]{1,40}\|[^|\n]{1,40}\|[ \t]*(?:ok|ns|nc|cr|nr|na)[ \t]*$",
            re.MULTILINE,
        ),
    ),
]

TOOLS = tuple(name for name, _ in _SIGNATURES)


_JSON_LLDP = re.compile(r"\A\s*\{\s*\"(?:lldp|lldp_loc_chassis)\"\s*:")


# A tool shows what it is in its first lines (a title, a header, a table's head): detection reads this much
# of a file, so a 60 MB table costs the same to recognise as a small one, and a file of junk is refused fast.
DETECT_CHARS = 256 * 1024


def detect_tool(text: str) -> str:
    """The tool name (a key of validation.parsers.PARSERS), or ParseError when none matches in the first
    DETECT_CHARS characters."""
    if _JSON_LLDP.match(text):  # JSON no other tool prints; spares scanning a large table line by line
        return "lldp"
    head = text[:DETECT_CHARS]
    if len(text) > DETECT_CHARS and "\n" in head:  # whole lines only: a cut line could half-match
        head = head[: head.rindex("\n")]
    normalised = "\n".join(line.text for line in split_lines(head))
    for name, pattern in _SIGNATURES:
        if pattern.search(normalised):
            return name
    raise ParseError(
        1,
        "could not tell which tool produced this output",
        f"the output of one of: {', '.join(TOOLS)} (or name the tool explicitly)",
    )
