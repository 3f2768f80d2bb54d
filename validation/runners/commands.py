"""The command lines the checks run, built in one place so the real runners and the simulated one
agree on them. Every value that comes from the inventory (host and device names) is shell-quoted:
a device name is user input and must never become shell syntax on a node.

Also the node-inventory probes: one small command per version, each with a reader for its output
(these are one-line outputs of our own choosing, not tool reports, so they live here and not
among the parsers).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from validation.parsers.base import ParseError

PERFTEST_BASE_PORT = 18515  # perftest's default; rail r listens on base + r

# A port's commands depend on its device or interface name only, and a cluster repeats the same few names on
# every node (mlx5_0..mlx5_9, eth0..eth7): remembered, a 1,024-node run quotes ten names, not 30,000 lines.
_per_name = lru_cache(maxsize=4096)


@_per_name
def mlxlink_command(rdma_device: str) -> str:
    """Module info (-m) and physical counters / BER (-c) of one port."""
    return shlex.join(["mlxlink", "-d", rdma_device, "-m", "-c"])


@_per_name
def ethtool_stats_command(netdev: str) -> str:
    """An Ethernet port's NIC counters (errors, discards, pause frames per priority)."""
    return shlex.join(["ethtool", "-S", netdev])


@_per_name
def ethtool_module_command(netdev: str) -> str:
    """An Ethernet port's module EEPROM and DOM readings: what link health reads when mlxlink shows none."""
    return shlex.join(["ethtool", "-m", netdev])


@_per_name
def mlnx_qos_command(netdev: str) -> str:
    """A host port's QoS: trust state, dscp2prio, receive buffers, PFC per priority, traffic classes."""
    return shlex.join(["mlnx_qos", "-i", netdev])


# ECN (DCQCN) on a RoCE port is two sysfs switches per priority (mlx5): the notification point answers
# congestion marks with CNPs, the reaction point slows down on them. Not a tool's report but a probe of our
# own, so its reader lives here with the command (like the version probes below).
_ECN_LINE = re.compile(r"^/sys/class/net/[^/\s]+/ecn/roce_(?P<point>np|rp)/enable/[0-7]:(?P<value>[01])$")


def ecn_command(netdev: str, priority: int) -> str:
    """grep -H prints each file's path before its value, so each switch is named on its line."""
    paths = [f"/sys/class/net/{netdev}/ecn/roce_{point}/enable/{int(priority)}" for point in ("np", "rp")]
    return shlex.join(["grep", "-H", ".", *paths])


def read_ecn(text: str) -> dict[str, int]:
    """{"np": 1, "rp": 1} from the probe's lines; ParseError for a line that is not one of them."""
    found: dict[str, int] = {}
    for number, line in enumerate(_lines(text), start=1):
        match = _ECN_LINE.match(line)
        if not match:
            raise ParseError(number, f"unexpected line {line[:60]!r}",
                             "'/sys/class/net/<if>/ecn/roce_np/enable/<prio>:1' lines")
        found[match["point"]] = int(match["value"])
    return found


def iblinkinfo_command(ibdev: str, port: int = 1) -> str:
    """Every switch and HCA of the fabric the host's HCA port reaches, a row per port (down ones too),
    in iblinkinfo's default layout (the one whose headers name each node)."""
    return shlex.join(["iblinkinfo", "-C", ibdev, "-P", str(port)])


def lldpcli_command() -> str:
    """A switch's LLDP neighbours as JSON (validation.parsers.lldp reads its object-or-list quirk)."""
    return shlex.join(["lldpcli", "-f", "json", "show", "neighbors", "details"])


@dataclass(frozen=True)
class PerftestPair:
    server_command: str
    client_command: str


def ib_write_bw_commands(
    *, rdma_device: str, server_host: str, rail: int, gpu_index: int | None, qps: int = 4,
    gid_index: int | None = None, traffic_class: int | None = None, rdma_cm: bool = False,
) -> PerftestPair:
    """ib_write_bw between the same rail of two nodes, 64 KiB messages (perftest's default size, the one
    DOMAIN.md's 787.7 Gb/s at 1.50 Mpps was measured with), bandwidth in Gb/s. With `gpu_index` the
    buffers live in that GPU's memory (GPUDirect RDMA, --use_cuda). With `gid_index` the port is RoCE: the
    test uses that GID (-x: RoCE v2 over IPv4 is usually 3) and marks its packets with `traffic_class` (the
    lossless DSCP). The QPs are exchanged over TCP to the server's name, and the traffic runs on the device
    -d names; with `rdma_cm` they connect through RDMA-CM instead (-R, the class as --tos), which picks the
    device by the route to the server's name: only right where that name resolves to the rail's address."""
    argv = [
        "ib_write_bw",
        "-d",
        rdma_device,
        "-F",
        "--report_gbits",
        "-q",
        str(qps),
        "-p",
        str(PERFTEST_BASE_PORT + rail),
    ]
    if gid_index is not None:
        argv += ["-x", str(gid_index)]
        if rdma_cm:
            argv += ["-R", *(["--tos", str(traffic_class)] if traffic_class is not None else [])]
        elif traffic_class is not None:
            argv += ["--tclass", str(traffic_class)]
    if gpu_index is not None:
        argv.append(f"--use_cuda={gpu_index}")
    return PerftestPair(server_command=shlex.join(argv), client_command=shlex.join([*argv, server_host]))


def nccl_command(
    *,
    launcher: str,
    hosts: Sequence[str],
    gpus_per_node: int,
    hcas: Sequence[str],
    test: str = "all_reduce_perf",
    min_bytes: str = "8",
    max_bytes: str = "16G",
    roce: tuple[int, int] | None = None,
) -> str:
    """nccl-tests across `hosts`, one rank per GPU, launched by mpirun (Open MPI) or srun (Slurm). `roce`
    (GID index, traffic class) is given for a RoCE fabric: NCCL then uses that GID and marks its traffic
    with that class, so it lands on the lossless priority (NCCL_IB_GID_INDEX, NCCL_IB_TC)."""
    bench = [test, "-b", min_bytes, "-e", max_bytes, "-f", "2", "-g", "1"]
    hca_list = ",".join(hcas)
    env = [f"NCCL_IB_HCA={hca_list}"]
    if roce is not None:
        env += [f"NCCL_IB_GID_INDEX={int(roce[0])}", f"NCCL_IB_TC={int(roce[1])}"]
    if launcher == "srun":
        argv = [
            "srun",
            f"--nodes={len(hosts)}",
            f"--ntasks-per-node={gpus_per_node}",
            "--gpus-per-task=1",
            f"--nodelist={','.join(hosts)}",
            f"--export=ALL,{','.join(env)}",
            *bench,
        ]
    elif launcher == "mpirun":
        argv = [
            "mpirun",
            "--allow-run-as-root",
            "-np",
            str(len(hosts) * gpus_per_node),
            "-H",
            ",".join(f"{h}:{gpus_per_node}" for h in hosts),
            "--bind-to",
            "none",
            *(arg for variable in env for arg in ("-x", variable)),
            "-x",
            "NCCL_DEBUG=WARN",
            *bench,
        ]
    else:
        raise ValueError(f"unknown NCCL launcher {launcher!r}: use mpirun or srun")
    return shlex.join(argv)


def hosts_of_nccl_command(command: str) -> list[str]:
    """The host list a launch command names (mpirun -H a:8,b:8 or srun --nodelist=a,b)."""
    argv = shlex.split(command)
    for index, arg in enumerate(argv):
        if arg == "-H" and index + 1 < len(argv):
            return [h.split(":")[0] for h in argv[index + 1].split(",") if h]
        if arg.startswith("--nodelist="):
            return [h for h in arg.removeprefix("--nodelist=").split(",") if h]
    return []


# ---------------------------------------------------------------------------------------------------
# Node inventory probes


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def read_first_line(text: str) -> str:
    lines = _lines(text)
    if not lines:
        raise ParseError(1, "empty output", "one line with a version")
    return lines[0]


def read_distinct_lines(text: str) -> str:
    """One line per GPU or NIC; a node whose devices disagree reports every value, comma-separated, so
    it cannot match a pinned single version."""
    lines = _lines(text)
    if not lines:
        raise ParseError(1, "empty output", "one version per line")
    return ",".join(sorted(set(lines)))


_GPU_LINE = re.compile(r"^GPU \d+: ")


def read_gpu_count(text: str) -> str:
    lines = _lines(text)
    for number, line in enumerate(lines, start=1):
        if not _GPU_LINE.match(line):
            raise ParseError(number, f"unexpected line {line[:60]!r}", "'GPU <n>: <name> (UUID: ...)' lines")
    return str(len(lines))


def read_ofed(text: str) -> str:
    """`ofed_info -s` prints e.g. "MLNX_OFED_LINUX-24.10-1.1.4.0:"; keep the name without the colon."""
    return read_first_line(text).rstrip(":")


@dataclass(frozen=True)
class VersionProbe:
    key: str
    command: str
    read: Callable[[str], str]


VERSION_PROBES: tuple[VersionProbe, ...] = (
    VersionProbe("kernel", "uname -r", read_first_line),
    VersionProbe(
        "gpu_driver", "nvidia-smi --query-gpu=driver_version --format=csv,noheader", read_distinct_lines
    ),
    VersionProbe("gpu_count", "nvidia-smi -L", read_gpu_count),
    VersionProbe("ofed", "ofed_info -s", read_ofed),
    VersionProbe("nic_firmware", "cat /sys/class/infiniband/*/fw_ver", read_distinct_lines),
    VersionProbe("nccl", "dpkg-query -W -f='${Version}\\n' libnccl2", read_first_line),
)
