"""SimulatedRunner: the demo cluster. Given the project's inventory and a seed it answers the commands
the checks run (mlxlink, ib_write_bw with and without --use_cuda, all_reduce_perf under mpirun/srun,
the version probes; on Ethernet (RoCE) ports mlxlink's Ethernet report, ethtool -S / -m, mlnx_qos and
the ECN switches) with text in the tools' own formats, which then goes through the same parsers
as real output. Numbers follow DOMAIN.md's reference cluster, with a little seeded noise.

The injected faults are planned in one place, `plan_faults`, and nowhere else:
  - a dirty fiber: one optical port whose BER is far above the fail level (counters too);
  - a hot optic: another optical port running hot with Rx power below the module's low limit;
  - a slow GPU RDMA node: every --use_cuda test that involves it runs at 60% (its CPU path is fine);
  - an NCCL corruption node: any NCCL run whose host list includes it reports wrong values.
Everything else is healthy, so a check run should flag exactly these and nothing more.
"""

from __future__ import annotations

import hashlib
import random
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from validation.criteria import link_plan

from .base import Runner, RunOutput, TransientRunnerError
from .commands import hosts_of_nccl_command
from .simfabric import FabricFaults, SimFabric, iblinkinfo_text, lldpcli_json, lldpcli_text, plan_fabric_faults

# Reference figures (DOMAIN.md): GPU RDMA ~787.7 Gb/s per 800G link at ~1.50 Mpps; CPU path 440-470
# Gb/s; NCCL all-reduce bus bandwidth ~820 GB/s at the largest size.
GPU_RDMA_FRACTION_OF_LINE = 787.7 / 800
CPU_PATH_GBPS = (449.0, 462.0)
NCCL_PEAK_BUSBW_GBS = 822.0
SLOW_GPU_RDMA_FACTOR = 0.60

VERSIONS = {
    "kernel": "6.8.0-60-generic",
    "gpu_driver": "580.65.06",
    "ofed": "OFED-internal-25.04-0.6.1:",
    "nic_firmware": "40.45.1200",
    "nccl": "2.27.5-1+cuda12.9",
    "mft": "4.32.0-120",
}
GPU_NAME = "NVIDIA B300 SXM6 AC"


@dataclass(frozen=True)
class SimModule:
    """What sits in the port: an optical transceiver (with DOM) or a passive copper cable (without)."""

    optical: bool = True
    vendor: str = "NVIDIA"
    part_number: str = "980-9I693-00NS00"
    serial: str = ""


@dataclass(frozen=True)
class SimRail:
    index: int
    rdma_device: str
    port_name: str
    speed_gbps: int = 800
    lanes: int = 4
    module: SimModule = field(default_factory=SimModule)
    ethernet: bool = False  # a RoCE port: Ethernet mlxlink report, ethtool and mlnx_qos answer for it
    netdev: str = ""  # the OS's name for the port (ethtool -S eth3)


@dataclass(frozen=True)
class SimNode:
    name: str
    rails: tuple[SimRail, ...]  # compute rails: one per GPU
    storage_rails: tuple[SimRail, ...] = ()  # storage-network ports (their own RDMA devices, no GPU)

    def rail_by_device(self, rdma_device: str) -> SimRail | None:
        return next((r for r in (*self.rails, *self.storage_rails) if r.rdma_device == rdma_device), None)

    def rail_by_netdev(self, netdev: str) -> SimRail | None:
        return next((r for r in (*self.rails, *self.storage_rails) if r.netdev == netdev and r.ethernet), None)


@dataclass(frozen=True)
class SimCluster:
    nodes: tuple[SimNode, ...]
    # The cabled fabric as switches and hosts would show it (topology checks only: building it reads
    # every cable, which the other kinds do not need).
    fabric: SimFabric | None = None

    def node(self, name: str) -> SimNode | None:
        return self._nodes_by_name.get(name)

    def node_position(self, name: str) -> int:
        """The node's place in `nodes` (its LIDs follow it); ValueError for a host not in the cluster."""
        try:
            return self._positions[name]
        except KeyError:
            raise ValueError(f"{name} is not a node of the cluster") from None

    # Built once per snapshot, on first use: a target asks for its node by name, and a scan of 1,024
    # nodes per command made a target's cost grow with the cluster. (cached_property writes the
    # instance's __dict__ directly, which a frozen dataclass allows.)
    @cached_property
    def _nodes_by_name(self) -> dict[str, SimNode]:
        return {node.name: node for node in self.nodes}

    @cached_property
    def _positions(self) -> dict[str, int]:
        return {node.name: position for position, node in enumerate(self.nodes)}

    @cached_property
    def fault_plans(self) -> dict[int, FaultPlan]:
        """The fault plan of this snapshot by seed (plan_faults'): it lives and dies with the snapshot."""
        return {}


@dataclass(frozen=True)
class FaultPlan:
    dirty_fiber: tuple[str, str] | None = None  # (node, rdma device)
    hot_optic: tuple[str, str] | None = None
    slow_gpu_rdma_node: str | None = None
    nccl_corruption_node: str | None = None

    def describe(self) -> list[str]:
        lines = []
        if self.dirty_fiber:
            lines.append(f"dirty fiber (high BER) on {self.dirty_fiber[0]} {self.dirty_fiber[1]}")
        if self.hot_optic:
            lines.append(f"hot optic with low Rx power on {self.hot_optic[0]} {self.hot_optic[1]}")
        if self.slow_gpu_rdma_node:
            lines.append(f"GPU RDMA at {SLOW_GPU_RDMA_FACTOR:.0%} on {self.slow_gpu_rdma_node}")
        if self.nccl_corruption_node:
            lines.append(f"NCCL wrong values on runs including {self.nccl_corruption_node}")
        return lines


def plan_faults(cluster: SimCluster, seed: int) -> FaultPlan:
    """Where the faults go: the one place that decides it. Deterministic for a given inventory and seed.
    The two optical faults land on different nodes when there are several, as do the two node faults.
    Planning sorts every optical rail of the cluster, and the engine's runner, the soak sampler and the
    run's start plan for the same snapshot: each plan is made once, kept on the snapshot (so it goes
    when the snapshot goes: nothing here keeps a snapshot alive)."""
    plan = cluster.fault_plans.get(seed)
    if plan is None:
        plan = cluster.fault_plans[seed] = _plan_faults(cluster, seed)
    return plan


def _plan_faults(cluster: SimCluster, seed: int) -> FaultPlan:
    rng = random.Random(f"faults:{seed}")
    nodes = sorted(n.name for n in cluster.nodes)
    optical = sorted((n.name, r.rdma_device) for n in cluster.nodes for r in n.rails if r.module.optical)
    dirty = hot = None
    if optical:
        dirty = rng.choice(optical)
        others = [p for p in optical if p[0] != dirty[0]] or [p for p in optical if p != dirty]
        hot = rng.choice(others) if others else None
    slow = corrupt = None
    if nodes:
        slow = rng.choice(nodes)
        corrupt = rng.choice([n for n in nodes if n != slow] or nodes)
    return FaultPlan(dirty_fiber=dirty, hot_optic=hot, slow_gpu_rdma_node=slow, nccl_corruption_node=corrupt)


def _rng(seed: int, *parts: object) -> random.Random:
    """A generator for one (host, command): the same question always gets the same answer."""
    digest = hashlib.sha256(":".join(map(str, (seed, *parts))).encode()).hexdigest()
    return random.Random(int(digest[:16], 16))


def _not_found(host: str, command: str) -> RunOutput:
    name = command.split()[0] if command.split() else command
    return RunOutput(stdout="", stderr=f"sh: 1: {name}: not found\n", exit_code=127)


class SimulatedRunner(Runner):
    server_start_s = 0.0

    def __init__(
        self,
        cluster: SimCluster,
        *,
        seed: int = 0,
        down_hosts: Iterable[str] = (),
        flaky_hosts: dict[str, int] | None = None,
        attempt: int = 1,
    ):
        """`down_hosts` refuse every connection; `flaky_hosts` maps a host to how many attempts it
        refuses before answering (`attempt` is the caller's 1-based attempt number)."""
        self.cluster = cluster
        self.seed = seed
        self.faults = plan_faults(cluster, seed)
        self.fabric_faults = plan_fabric_faults(cluster.fabric, seed) if cluster.fabric else FabricFaults()
        self._fabric_devices = cluster.fabric.devices() if cluster.fabric else set()
        self.down_hosts = set(down_hosts)
        self.flaky_hosts = dict(flaky_hosts or {})
        self.attempt = attempt

    # -- the Runner API ------------------------------------------------------------------------------

    def run(self, host: str, command: str, timeout: float) -> RunOutput:
        self._connect(host)
        argv = shlex.split(command)
        if not argv:
            return RunOutput("", "", 0)
        tool = argv[0]
        if tool == "mlxlink":
            return self._mlxlink(host, argv)
        if tool == "ib_write_bw":
            return self._ib_write_bw_alone(host, argv)
        if tool in ("mpirun", "srun"):
            return self._nccl(command)
        if tool == "iblinkinfo":
            return self._iblinkinfo(host, argv)
        if tool == "lldpcli":
            return self._lldpcli(host, argv)
        if tool in ("ethtool", "mlnx_qos") or (tool == "grep" and "/ecn/" in command):
            return self._roce_port(host, argv)
        return self._version_probe(host, command)

    def run_pair(self, *, server_host, server_command, client_host, client_command, timeout):
        self._connect(server_host)
        self._connect(client_host)
        client_argv = shlex.split(client_command)
        rate = self._pair_bandwidth(client_host, server_host, client_argv)
        return (
            self._perftest_output(server_host, shlex.split(server_command), rate, client=False),
            self._perftest_output(client_host, client_argv, rate, client=True),
        )

    def _connect(self, host: str) -> None:
        if host in self.down_hosts:
            raise TransientRunnerError(f"{host}:22: Connection refused")
        if self.attempt <= self.flaky_hosts.get(host, 0):
            raise TransientRunnerError(f"{host}:22: Connection refused (attempt {self.attempt})")
        if self.cluster.node(host) is None and host not in self._fabric_devices:
            raise TransientRunnerError(f"{host}:22: No route to host")

    # -- mlxlink --------------------------------------------------------------------------------------

    def _mlxlink(self, host: str, argv: list[str]) -> RunOutput:
        device = _option(argv, "-d") or _option(argv, "--device")
        node = self.cluster.node(host)
        rail = node.rail_by_device(device) if node and device else None
        if rail is None:
            return RunOutput("", f"-E- Failed to open device: {device}\n", 1)
        port = (host, rail.rdma_device)
        text = (mlxlink_ethernet_text if rail.ethernet else mlxlink_text)(
            rail,
            _rng(self.seed, host, "mlxlink", device),
            dirty=port == self.faults.dirty_fiber,
            hot=port == self.faults.hot_optic,
        )
        return RunOutput(text, "", 0)

    # -- RoCE ports: ethtool -S / -m, mlnx_qos, the ECN switches --------------------------------------

    def _roce_port(self, host: str, argv: list[str]) -> RunOutput:
        """A healthy lossless port (priority 3, DSCP 26, ECN on), except the dirty fiber's port, whose
        CRC errors show in its counters too."""
        tool = argv[0]
        netdev = _option(argv, "-S") or _option(argv, "-m") or _option(argv, "-i") or ""
        if tool == "grep":
            netdev = next((a.split("/")[4] for a in argv if a.startswith("/sys/class/net/")), "")
        node = self.cluster.node(host)
        rail = node.rail_by_netdev(netdev) if node and netdev else None
        if rail is None:
            return _no_such_netdev(tool, netdev)
        rng = _rng(self.seed, host, tool, netdev)
        dirty = (host, rail.rdma_device) == self.faults.dirty_fiber
        if tool == "mlnx_qos":
            return RunOutput(mlnx_qos_text(), "", 0)
        if tool == "grep":
            return RunOutput(ecn_text(argv), "", 0)
        if "-S" in argv:
            return RunOutput(ethtool_stats_text(rail, rng, dirty=dirty), "", 0)
        return RunOutput("", f"netlink error: Operation not supported (module EEPROM of {netdev})\n", 1)

    # -- ib_write_bw ----------------------------------------------------------------------------------

    def _gpu_factor(self, *hosts: str) -> float:
        return SLOW_GPU_RDMA_FACTOR if self.faults.slow_gpu_rdma_node in hosts else 1.0

    def _pair_bandwidth(self, client_host: str, server_host: str, argv: list[str]) -> float:
        """The slower end limits the pair: a slow GPU path on either node shows on the test."""
        rail = self._rail(client_host, argv)
        rng = _rng(self.seed, "bw", *sorted((client_host, server_host)), " ".join(argv[:-1]))
        if _uses_cuda(argv):
            line = rail.speed_gbps if rail else 800
            return (
                line
                * GPU_RDMA_FRACTION_OF_LINE
                * rng.uniform(0.9995, 1.0005)
                * self._gpu_factor(client_host, server_host)
            )
        return rng.uniform(*CPU_PATH_GBPS)

    def _rail(self, host: str, argv: list[str]) -> SimRail | None:
        node = self.cluster.node(host)
        device = _option(argv, "-d")
        return node.rail_by_device(device) if node and device else None

    def _ib_write_bw_alone(self, host: str, argv: list[str]) -> RunOutput:
        """Only one side was asked (no pair): a client measures against its named server; a server
        alone reports what its own node can do."""
        client = _positional_host(argv)
        if client:
            self._connect(client)
            rate = self._pair_bandwidth(host, client, argv)
        else:
            rate = self._pair_bandwidth(host, host, argv)
        return self._perftest_output(host, argv, rate, client=bool(client))

    def _perftest_output(self, host: str, argv: list[str], rate_gbps: float, *, client: bool) -> RunOutput:
        rail = self._rail(host, argv)
        if rail is None:
            device = _option(argv, "-d")
            return RunOutput("", f" Couldn't find IB device {device}\n Unable to open IB device\n", 1)
        node_index = self.cluster.node_position(host)
        gid = _option(argv, "-x")
        text = ib_write_bw_text(
            rail=rail,
            rate_gbps=rate_gbps,
            qps=int(_option(argv, "-q") or 1),
            client=client,
            gpu_index=_cuda_index(argv),
            rng=_rng(self.seed, host, " ".join(argv)),
            lid=node_index * 16 + rail.index + 1,
            gid_index=int(gid) if gid is not None and gid.isdigit() and rail.ethernet else None,
            rdma_cm="-R" in argv,
        )
        return RunOutput(text, "", 0)

    # -- NCCL -----------------------------------------------------------------------------------------

    def _nccl(self, command: str) -> RunOutput:
        hosts = hosts_of_nccl_command(command)
        unknown = [h for h in hosts if self.cluster.node(h) is None]
        if not hosts or unknown:
            return RunOutput("", f"Could not resolve host(s): {', '.join(unknown) or '(none)'}\n", 1)
        for host in hosts:
            self._connect(host)
        argv = shlex.split(command)
        test = next((a for a in argv if a.endswith("_perf")), "all_reduce_perf")
        gpus = len(self.cluster.node(hosts[0]).rails) or 1
        text = nccl_text(
            hosts=hosts,
            gpus_per_node=gpus,
            test=test,
            rng=_rng(self.seed, "nccl", *hosts),
            busbw_peak=NCCL_PEAK_BUSBW_GBS * self._gpu_factor(*hosts)
            if len(hosts) > 1
            else NCCL_PEAK_BUSBW_GBS,
            corrupt=self.faults.nccl_corruption_node in hosts,
        )
        return RunOutput(text, "", 1 if self.faults.nccl_corruption_node in hosts else 0)

    # -- the fabric: iblinkinfo on a host, lldpcli on a switch ----------------------------------------

    def _iblinkinfo(self, host: str, argv: list[str]) -> RunOutput:
        ibdev = _option(argv, "-C") or "mlx5_0"
        text = iblinkinfo_text(self.cluster.fabric, self.fabric_faults, host=host, ibdev=ibdev) \
            if self.cluster.fabric else None
        if text is None:
            return RunOutput("", f"ibwarn: [1] mad_rpc_open_port: can't open UMAD port ({ibdev}:1)\n"
                             "iblinkinfo: iberror: failed: Failed to open port\n", 255)
        return RunOutput(text, "", 0)

    def _lldpcli(self, host: str, argv: list[str]) -> RunOutput:
        if self.cluster.fabric is None:
            return RunOutput("", "lldpcli: unable to connect to lldpd daemon\n", 1)
        if _option(argv, "-f") == "json":
            return RunOutput(lldpcli_json(self.cluster.fabric, self.fabric_faults, host), "", 0)
        return RunOutput(lldpcli_text(self.cluster.fabric, self.fabric_faults, host), "", 0)

    # -- version probes -------------------------------------------------------------------------------

    def _version_probe(self, host: str, command: str) -> RunOutput:
        node = self.cluster.node(host)
        gpus = len(node.rails) if node else 8
        if command == "uname -r":
            return RunOutput(VERSIONS["kernel"] + "\n", "", 0)
        if command.startswith("nvidia-smi --query-gpu=driver_version"):
            return RunOutput((VERSIONS["gpu_driver"] + "\n") * gpus, "", 0)
        if command == "nvidia-smi -L":
            rng = _rng(self.seed, host, "gpus")
            lines = [f"GPU {i}: {GPU_NAME} (UUID: GPU-{_uuid(rng)})" for i in range(gpus)]
            return RunOutput("\n".join(lines) + "\n", "", 0)
        if command == "ofed_info -s":
            return RunOutput(VERSIONS["ofed"] + "\n", "", 0)
        if command.startswith("cat /sys/class/infiniband/"):
            return RunOutput(
                (VERSIONS["nic_firmware"] + "\n") * max(len(node.rails) if node else 1, 1), "", 0
            )
        if command.startswith("dpkg-query") and "libnccl2" in command:
            return RunOutput(VERSIONS["nccl"] + "\n", "", 0)
        return _not_found(host, command)


# ---------------------------------------------------------------------------------------------------
# Argument helpers


def _option(argv: Sequence[str], name: str) -> str | None:
    for index, arg in enumerate(argv):
        if arg == name and index + 1 < len(argv):
            return argv[index + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return None


def _no_such_netdev(tool: str, netdev: str) -> RunOutput:
    if tool == "grep":
        return RunOutput("", f"grep: /sys/class/net/{netdev}/ecn: No such file or directory\n", 2)
    if tool == "mlnx_qos":
        return RunOutput("", f"Netlink error: Bad value. see dmesg.\nInterface {netdev} doesn't exist\n", 1)
    return RunOutput("", f"Cannot get stats strings information: No such device ({netdev})\n", 1)


def _uses_cuda(argv: Sequence[str]) -> bool:
    return any(a == "--use_cuda" or a.startswith("--use_cuda=") for a in argv)


def _cuda_index(argv: Sequence[str]) -> int | None:
    value = _option(argv, "--use_cuda")
    if value is not None:
        return int(value) if value.isdigit() else 0
    return 0 if _uses_cuda(argv) else None


_VALUED = {"-d", "-q", "-p", "-s", "-n", "-D", "-x", "-m", "-i", "--source_ip", "-T"}


def _positional_host(argv: Sequence[str]) -> str | None:
    """ib_write_bw's server name is its one positional argument (clients only)."""
    skip = False
    for arg in argv[1:]:
        if skip:
            skip = False
            continue
        if arg in _VALUED:
            skip = True
            continue
        if not arg.startswith("-"):
            return arg
    return None


def _uuid(rng: random.Random) -> str:
    h = f"{rng.getrandbits(128):032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


# ---------------------------------------------------------------------------------------------------
# Tool-format text


def _kv(key: str, value: object, width: int = 35) -> str:
    return f"{key:<{width}}: {value}"


def _section(title: str, rows: Iterable[tuple[str, object]]) -> list[str]:
    return [title, "-" * len(title), *(_kv(k, v) for k, v in rows), ""]


def _lanes(values: Iterable[float], digits: int = 2) -> str:
    return ",".join(f"{v:.{digits}f}" for v in values)


def mlxlink_text(rail: SimRail, rng: random.Random, *, dirty: bool = False, hot: bool = False) -> str:
    """`mlxlink -d <dev> -m -c` of one port: operational, supported, troubleshooting and tool info,
    the module (DOM with the module's [low..high] limits, or a passive DAC's zeros), and the counters."""
    plan = link_plan(speed_gbps=rail.speed_gbps, lanes=rail.lanes, infiniband=True)
    generation = (plan.speed or "IB-XDR").removeprefix("IB-")
    lines = _section(
        "Operational Info",
        [
            ("State", "Active"),
            ("Physical state", "LinkUp"),
            ("Speed", plan.speed or f"{rail.speed_gbps}G"),
            ("Width", plan.width),
            ("FEC", "Interleaved_Standard_RS_FEC_PLR - (544,514)"),
            ("Loopback Mode", "No Loopback"),
            ("Auto Negotiation", "ON"),
        ],
    )
    lines += _section(
        "Supported Info",
        [
            ("Enabled Link Speed", "0x000001f1 (XDR,NDR,HDR,EDR,SDR)"),
            ("Supported Cable Speed", f"0x000001f1 ({generation},NDR,HDR,EDR,SDR)"),
        ],
    )
    recommendation = (
        "Bad signal integrity, check the cable and the connectors" if dirty else "No issue was observed"
    )
    lines += _section(
        "Troubleshooting Info",
        [
            ("Status Opcode", 0 if not dirty else 49),
            ("Group Opcode", "N/A"),
            ("Recommendation", recommendation),
        ],
    )
    lines += _section(
        "Tool Information",
        [
            ("Firmware Version", VERSIONS["nic_firmware"]),
            ("amBER Version", "7.8"),
            ("MFT Version", VERSIONS["mft"]),
        ],
    )
    lines += _section("Module Info", _module_rows(rail, rng, dirty=dirty, hot=hot))
    lines += _section("Physical Counters and BER Info", _counter_rows(rail, rng, dirty=dirty))
    return "\n".join(lines)


def _module_rows(rail: SimRail, rng: random.Random, *, dirty: bool, hot: bool) -> list[tuple[str, object]]:
    module, lanes = rail.module, rail.lanes
    if not module.optical:
        zeros = ",".join(["0"] * lanes)
        return [
            ("Temperature [C]", "0 [0..0]"),
            ("Voltage [mV]", "0 [0..0]"),
            ("Bias Current [mA]", f"{zeros} [0..0]"),
            ("Rx Power Current [dBm]", f"{zeros} [0..0]"),
            ("Tx Power Current [dBm]", f"{zeros} [0..0]"),
            ("Identifier", "OSFP"),
            ("Compliance", "IB XDR"),
            ("Cable Technology", "Copper cable, passive, unequalized"),
            ("Cable Type", "Passive copper cable"),
            ("Vendor Name", module.vendor),
            ("Vendor Part Number", module.part_number),
            ("Vendor Serial Number", module.serial or "N/A"),
            ("Digital Diagnostic Monitoring", "No"),
        ]
    temperature = rng.uniform(41, 55) if not hot else rng.uniform(71.0, 73.5)
    rx = [rng.uniform(-0.6, 1.8) for _ in range(lanes)]
    if dirty:
        rx = [v - 4.5 for v in rx]  # a dirty connector loses light, though not yet below the limit
    if hot:
        rx = [rng.uniform(-12.9, -11.2) for _ in range(lanes)]
    tx = [rng.uniform(0.4, 2.2) for _ in range(lanes)]
    bias = [rng.uniform(6.8, 8.2) for _ in range(lanes)]
    return [
        ("Temperature [C]", f"{temperature:.0f} [-5..75]"),
        ("Voltage [mV]", f"{rng.uniform(3260, 3310):.1f} [2970..3630]"),
        ("Bias Current [mA]", f"{_lanes(bias, 3)} [2..15]"),
        ("Rx Power Current [dBm]", f"{_lanes(rx)} [-10.4..5]"),
        ("Tx Power Current [dBm]", f"{_lanes(tx)} [-6.4..5]"),
        ("Identifier", "OSFP"),
        ("Compliance", "IB XDR"),
        ("Cable Technology", "1310 nm DML"),
        ("Cable Type", "Optical Module (separated)"),
        ("OUI", "Nvidia"),
        ("Vendor Name", module.vendor),
        ("Vendor Part Number", module.part_number),
        ("Vendor Serial Number", module.serial or f"MT{rng.randrange(10**9):09d}"),
        ("Rev", "A1"),
        ("Wavelength [nm]", 1311),
        ("Transfer Distance [m]", 500),
        ("Digital Diagnostic Monitoring", "Yes"),
        ("Module State", "Ready state"),
        ("Rx LOS [per lane]", ",".join(["0"] * lanes)),
        ("Tx Fault [per lane]", ",".join(["0"] * lanes)),
    ]


def _counter_rows(rail: SimRail, rng: random.Random, *, dirty: bool) -> list[tuple[str, object]]:
    minutes = rng.uniform(600, 2880)
    if dirty:
        raw_per_lane = [rng.randrange(4_000_000, 9_000_000) for _ in range(rail.lanes)]
        return [
            ("Time Since Last Clear [Min]", f"{minutes:.1f}"),
            ("Effective Physical Errors", rng.randrange(15000, 25000)),
            ("Effective Physical BER", f"{rng.randrange(2, 6)}E-10"),
            ("Raw Physical Errors Per Lane", ",".join(map(str, raw_per_lane))),
            ("Raw Physical BER", f"{rng.randrange(2, 9)}E-05"),
            ("Link Down Counter", 0),
            ("Link Error Recovery Counter", rng.randrange(3, 9)),
            ("Symbol Errors", rng.randrange(900, 2000)),
            ("Symbol BER", f"{rng.randrange(2, 9)}E-13"),
        ]
    raw_per_lane = [rng.randrange(0, 5000) for _ in range(rail.lanes)]
    return [
        ("Time Since Last Clear [Min]", f"{minutes:.1f}"),
        ("Effective Physical Errors", 0),
        ("Effective Physical BER", "15E-255"),
        ("Raw Physical Errors Per Lane", ",".join(map(str, raw_per_lane))),
        ("Raw Physical BER", f"{rng.randrange(1, 9)}E-{rng.randrange(9, 12)}"),
        ("Link Down Counter", 0),
        ("Link Error Recovery Counter", 0),
        ("Symbol Errors", 0),
        ("Symbol BER", "15E-255"),
    ]


def mlxlink_ethernet_text(rail: SimRail, rng: random.Random, *, dirty: bool = False, hot: bool = False) -> str:
    """`mlxlink -d <dev> -m -c` of an Ethernet (RoCE) port, as MFT 4.30 prints it for one (see the BlueField-3
    fixture mlxlink_04): an Ethernet speed ("400G"), RS(544,514) FEC on PAM4 lanes, no symbol counters."""
    lanes = rail.lanes
    lines = _section(
        "Operational Info",
        [
            ("State", "Active"),
            ("Physical state", "LinkUp"),
            ("Speed", f"{rail.speed_gbps}G"),
            ("Width", f"{lanes}x"),
            ("FEC", "Standard_RS-FEC - (544,514)"),
            ("Loopback Mode", "No Loopback"),
            ("Auto Negotiation", "ON"),
        ],
    )
    lines += _section(
        "Supported Info",
        [
            ("Enabled Link Speed (Ext.)", f"0x00003000 ({rail.speed_gbps}G_{lanes}X)"),
            ("Supported Cable Speed (Ext.)", f"0x00003000 ({rail.speed_gbps}G_{lanes}X)"),
        ],
    )
    recommendation = (
        "Bad signal integrity, check the cable and the connectors" if dirty else "No issue was observed"
    )
    lines += _section("Troubleshooting Info", [("Status Opcode", 49 if dirty else 0), ("Group Opcode", "N/A"),
                                               ("Recommendation", recommendation)])
    lines += _section(
        "Tool Information",
        [("Firmware Version", VERSIONS["nic_firmware"]), ("amBER Version", "7.8"), ("MFT Version", VERSIONS["mft"])],
    )
    lines += _section("Module Info", _module_rows(rail, rng, dirty=dirty, hot=hot))
    minutes = rng.uniform(600, 2880)
    if dirty:
        counters = [
            ("Time Since Last Clear [Min]", f"{minutes:.1f}"),
            ("Effective Physical Errors", rng.randrange(15000, 25000)),
            ("Effective Physical BER", f"{rng.randrange(2, 6)}E-10"),
            ("Raw Physical Errors Per Lane", ",".join(str(rng.randrange(4_000_000, 9_000_000)) for _ in range(lanes))),
            ("Link Down Counter", 0),
            ("Link Error Recovery Counter", rng.randrange(3, 9)),
            ("Raw Physical BER", f"{rng.randrange(2, 9)}E-05"),
        ]
    else:
        counters = [
            ("Time Since Last Clear [Min]", f"{minutes:.1f}"),
            ("Effective Physical Errors", 0),
            ("Effective Physical BER", "15E-255"),
            ("Raw Physical Errors Per Lane", ",".join(str(rng.randrange(0, 5000)) for _ in range(lanes))),
            ("Link Down Counter", 0),
            ("Link Error Recovery Counter", 0),
            ("Raw Physical BER", f"{rng.randrange(1, 9)}E-{rng.randrange(9, 12)}"),
        ]
    lines += _section("Physical Counters and BER Info", counters)
    return "\n".join(lines)


# The lossless settings the simulated hosts run: RoCE's common defaults (criteria.RoceSettings).
SIM_PFC_PRIORITY = 3


def mlnx_qos_text() -> str:
    """`mlnx_qos -i <if>` of a port set up for lossless RoCE on priority 3 (trust DSCP, DSCP 26 -> 3, PFC on
    3 only, priority 3 in a receive buffer of its own), in the layout of MLNX_OFED 5+ (fixture mlnx_qos_02)."""
    lines = ["DCBX mode: OS controlled", "Priority trust state: dscp", "dscp2prio mapping:"]
    for prio in range(8):
        dscps = ",".join(f"{d:02d}" for d in range(prio * 8 + 7, prio * 8 - 1, -1))
        lines.append(f"        prio:{prio} dscp:{dscps},")
    enabled = ["1" if p == SIM_PFC_PRIORITY else "0" for p in range(8)]
    lines += [
        "default priority:",
        "Receive buffer size (bytes): 130944,130944,0,0,0,0,0,0,max_buffer_size=4151520",
        "Cable len: 7",
        "PFC configuration:",
        "        priority    0   1   2   3   4   5   6   7",
        "        enabled     " + "   ".join(enabled) + "   ",
        "        buffer      " + "   ".join(enabled) + "   ",
    ]
    for tc in range(8):
        lines += [f"tc: {tc} ratelimit: unlimited, tsa: vendor", f"         priority:  {tc}"]
    return "\n".join(lines) + "\n"


def ecn_text(argv: Sequence[str]) -> str:
    """The ECN probe (grep -H . <np file> <rp file>): both switches on."""
    return "".join(f"{path}:1\n" for path in argv if path.startswith("/sys/class/net/"))


def ethtool_stats_text(rail: SimRail, rng: random.Random, *, dirty: bool = False) -> str:
    """`ethtool -S <if>` of a mlx5 port, the physical-port and per-priority counters as the driver names them
    (fixture ethtool_S_01); a dirty fiber's port shows the CRC errors its BER implies."""
    packets = rng.randrange(10**9, 10**10)
    rx_bytes = packets * rng.randrange(2000, 4000)
    paused = rng.randrange(0, 5000)
    counters = [
        ("rx_packets", packets), ("tx_packets", packets + rng.randrange(0, 10**6)),
        ("rx_out_of_buffer", 0),
        ("tx_packets_phy", packets), ("rx_packets_phy", packets),
        ("rx_crc_errors_phy", rng.randrange(200_000, 900_000) if dirty else 0),
        ("tx_bytes_phy", rx_bytes), ("rx_bytes_phy", rx_bytes),
        ("tx_mac_control_phy", paused), ("tx_pause_ctrl_phy", paused), ("rx_pause_ctrl_phy", 0),
        ("rx_discards_phy", 0), ("tx_discards_phy", 0), ("tx_errors_phy", 0),
        ("rx_symbol_err_phy", 0), ("rx_undersize_pkts_phy", 0), ("rx_fragments_phy", 0), ("rx_jabbers_phy", 0),
    ]
    for prio in range(8):
        lossless = prio == SIM_PFC_PRIORITY
        counters += [
            (f"rx_prio{prio}_bytes", rx_bytes if lossless else 0),
            (f"rx_prio{prio}_packets", packets if lossless else 0),
            (f"rx_prio{prio}_discards", 0),
            (f"tx_prio{prio}_bytes", rx_bytes if lossless else 0),
            (f"tx_prio{prio}_packets", packets if lossless else 0),
            (f"rx_prio{prio}_pause", rng.randrange(0, 5000) if lossless else 0),
            (f"rx_prio{prio}_pause_duration", rng.randrange(0, 90000) if lossless else 0),
            (f"tx_prio{prio}_pause", paused if lossless else 0),
            (f"tx_prio{prio}_pause_duration", rng.randrange(0, 90000) if lossless else 0),
            (f"rx_prio{prio}_pause_transition", 0),
        ]
    counters += [("tx_pause_storm_warning_events", 0), ("tx_pause_storm_error_events", 0)]
    return "NIC statistics:\n" + "".join(f"     {name}: {value}\n" for name, value in counters)


_PERFTEST_RULE = "-" * 87


def ib_write_bw_text(
    *,
    rail: SimRail,
    rate_gbps: float,
    qps: int,
    client: bool,
    gpu_index: int | None,
    rng: random.Random,
    lid: int,
    gid_index: int | None = None,
    rdma_cm: bool = False,
) -> str:
    """One side of ib_write_bw --report_gbits. Only the client prints TX depth (as perftest does). With a
    `gid_index` the port is RoCE: Link type Ethernet, the GID index and each QP's GID, LID 0000."""
    lines = []
    buffer = 0x7F0000000000 + rng.getrandbits(40)
    if gpu_index is not None:
        lines += [
            "initializing CUDA",
            "Listing all CUDA devices in system:",
            f"CUDA device {gpu_index}: PCIe address is {0x18 + 0x10 * gpu_index:02X}:00",
            "",
            f"Picking device No. {gpu_index}",
            f"[pid = {rng.randrange(2000, 60000)}, dev = {gpu_index}] device name = [{GPU_NAME}]",
            "creating CUDA Ctx",
            "making it the current CUDA Ctx",
            "CUDA device integrated: 0",
            "cuMemAlloc() of a 8388608 bytes GPU buffer",
            f"allocated GPU buffer address at {buffer:016x} pointer={buffer:#x}",
        ]
    lines += [
        _PERFTEST_RULE,
        "                    RDMA_Write BW Test",
        f" Dual-port       : OFF\t\tDevice         : {rail.rdma_device}",
        f" Number of qps   : {qps}\t\tTransport type : IB",
        " Connection type : RC\t\tUsing SRQ      : OFF",
        " PCIe relax order: ON\t\tLock-free      : OFF",
        " ibv_wr* API     : ON\t\tUsing Enhanced Reorder      : OFF",
    ]
    if client:
        lines.append(" TX depth        : 128")
    lines += [
        " CQ Moderation   : 1",
        " CQE Poll Batch  : Dynamic",
        " Mtu             : 4096[B]",
        f" Link type       : {'Ethernet' if gid_index is not None else 'IB'}",
        *([f" GID index       : {gid_index}"] if gid_index is not None else []),
        " Max inline data : 0[B]",
        f" rdma_cm QPs\t : {'ON' if rdma_cm else 'OFF'}",
        f" Data ex. method : {'rdma_cm' if rdma_cm else 'Ethernet'}",
        _PERFTEST_RULE,
    ]
    remote = lid + 0x100
    local_lid, remote_lid = (0, 0) if gid_index is not None else (lid, remote)
    for side, base, at in (("local", 0x100, local_lid), ("remote", 0x200, remote_lid)):
        for q in range(qps):
            lines.append(
                f" {side} address: LID {at:#06x} QPN {base + q:#06x} PSN {rng.getrandbits(24):#08x} "
                f"RKey 0x1fff00 VAddr 0x007f{rng.getrandbits(40):010x}"
            )
            if gid_index is not None:
                octets = (lid if side == "local" else remote) % 250 + 1
                lines.append(f" GID: 00:00:00:00:00:00:00:00:00:00:255:255:10:{base >> 8:02d}:{octets:02d}:{q + 1:02d}")
    size = 65536
    messages_mpps = rate_gbps * 1e9 / (size * 8) / 1e6
    peak = rate_gbps * rng.uniform(1.0002, 1.0012)
    lines += [
        _PERFTEST_RULE,
        " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]",
        f" {size:<10d} {5000:<16d} {peak:<18.2f} {rate_gbps:.2f} \t\t     {messages_mpps:.6f}",
        _PERFTEST_RULE,
    ]
    if gpu_index is not None:
        lines += [f"deallocating GPU buffer {buffer:016x}", "destroying current CUDA Ctx"]
    return "\n".join(lines) + "\n"


# The column header of nccl-tests 2.x (with redop and root), as it prints it, trailing blanks included.
_NCCL_HEADER = [
    "#" + " " * 62 + "out-of-place" + " " * 23 + "in-place" + " " * 10,
    "#       size         count      type   redop    root     time   algbw   busbw  #wrong"
    "     time   algbw   busbw  #wrong ",
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)       "
    "      (us)  (GB/s)  (GB/s)         ",
]


def nccl_text(
    *,
    hosts: Sequence[str],
    gpus_per_node: int,
    test: str,
    rng: random.Random,
    busbw_peak: float,
    corrupt: bool,
) -> str:
    """nccl-tests 2.x output: header, one line per rank, the table with redop/root and #wrong columns,
    and the trailers. A corrupting node makes a few sizes report wrong values, and the test fail."""
    ranks = len(hosts) * gpus_per_node
    factor = 2 * (ranks - 1) / ranks if ranks > 1 else 1.0  # all-reduce: busbw = algbw * 2(n-1)/n
    latency_us = 18.0 + 6.0 * len(hosts).bit_length()
    lines = [
        "# nccl-tests version 2.16.4 nccl-headers=22705 nccl-library=22705",
        f"# Collective test starting: {test}",
        "# nThread 1 nGpus 1 minBytes 8 maxBytes 17179869184 step: 2(factor) warmup iters: 5 iters: 20 "
        "agg iters: 1 validation: 1 graph: 0",
        "#",
        "# Using devices",
    ]
    pids = {h: rng.randrange(10000, 99999) for h in hosts}
    for rank in range(ranks):
        host = hosts[rank // gpus_per_node]
        gpu = rank % gpus_per_node
        lines.append(
            f"#  Rank {rank:2d} Group  0 Pid {pids[host]:6d} on {host:>10} device {gpu:2d} "
            f"[{0x18 + 0x10 * gpu:04x}:00:00] {GPU_NAME}"
        )
    lines += [
        "#",
        *_NCCL_HEADER,
    ]
    corrupt_sizes = {1 << 20: (96, 32), 1 << 22: (64, 0)} if corrupt else {}
    busbws, wrong_cells = [], 0
    for exponent in range(3, 35):
        size = 1 << exponent
        halves = []
        for half in (0, 1):
            time_us = (latency_us + size / (busbw_peak / factor * 1e3)) * rng.uniform(0.997, 1.004)
            algbw = size / time_us / 1e3
            busbw = algbw * factor
            busbws.append(busbw)
            wrong = corrupt_sizes.get(size, (0, 0))[half]
            wrong_cells += 1 if wrong else 0
            halves.append(f"{_nccl_time(time_us):>8} {algbw:7.2f} {busbw:7.2f} {wrong:7d}")
        lines.append(f"{size:12d} {size // 4:13d} {'float':>9} {'sum':>7} {-1:7d} {halves[0]} {halves[1]}")
    status = f"{wrong_cells} FAILED" if wrong_cells else "0 OK"
    lines += [
        f"# Out of bounds values : {status}",
        f"# Avg bus bandwidth    : {sum(busbws) / len(busbws):.4f} ",
        "#",
        f"# Collective test concluded: {test}",
        "#",
        "",
    ]
    if corrupt:
        lines += [f" .. {host} pid {pids[host]}: Test failure common.cu:1189" for host in hosts[:2]]
    return "\n".join(lines) + "\n"


def _nccl_time(time_us: float) -> str:
    """nccl-tests' precision: 2 decimals below 100 us, 1 below 10 ms, whole microseconds above."""
    if time_us >= 10000:
        return f"{time_us:.0f}"
    return f"{time_us:.1f}" if time_us >= 100 else f"{time_us:.2f}"
