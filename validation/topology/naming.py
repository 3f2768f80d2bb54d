"""How a real site's fabric names what our inventory names, in both directions (pure Python).

- An HCA's node description is what the host sets by default: `<hostname> <ibdev>`, e.g. `gpu-001 mlx5_3`
  (older drivers: `n01 HCA-1`). Rail n of a host is its n-th compute InfiniBand port in port order,
  which the host names `mlx5_<n>` (`HCA-<n+1>` on old drivers), as validation.cluster.Rail assumes.
- A switch's node description is its name, or the managed-switch form `MF0;<hostname>:<model>/U1`; a
  director's blades add theirs (`MF0;<hostname>:MCS8500/L01/U1` is `<hostname>/L01`).
- An InfiniBand switch port is the number in our port name (`p17` is port 17). A split port's lanes are
  numbered as the switch reports them once split: lane k of port n of an L-lane port is
  (n - 1) x L + k + 1, and a switch with any split port numbers all its ports that way.
- An Ethernet port is named by its switch model's OS (`HardwareModel.os_port_format`): `swp{n}`
  (Cumulus), `Ethernet{n}` (SONiC), `eth1/{n}` (NX-OS style), where {n} is the number in our port name.
  Lanes follow the OS's breakout names: `swp17s0` (Cumulus) or `eth1/17/1` (the others: /lane+1), unless
  the format places `{lane}` itself. Fields may hold arithmetic over n, lane and lanes, for lane-indexed
  names: SONiC's 8-lane 800G ports are `Ethernet{8*(n-1)+lane*8//lanes}` (Ethernet0, Ethernet8, ...).
  A blank format: the OS prints our port names.
"""

from __future__ import annotations

import ast
import operator
import re
from functools import lru_cache

# --- InfiniBand speeds -------------------------------------------------------------------------------

# Data rate per lane, in Gb/s, of each InfiniBand generation as a planner counts it.
IB_LANE_GBPS = {"SDR": 2.5, "DDR": 5, "QDR": 10, "FDR10": 10, "FDR": 14, "EDR": 25, "HDR": 50, "NDR": 100,
                "XDR": 200}
# The signalling rate iblinkinfo prints per lane (libibmad's strings), to the generation.
_IB_SIGNAL_GBPS = {2.5: "SDR", 5.0: "DDR", 10.0: "QDR", 14.0625: "FDR", 25.78125: "EDR", 53.125: "HDR",
                   106.25: "NDR", 212.5: "XDR"}
_GBPS = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*Gbps\s*(\(FDR10\))?\s*$", re.IGNORECASE)
_WIDTH = re.compile(r"^\s*([0-9]{1,2})\s*[xX]\s*$")


def ib_generation(speed: str | None) -> str | None:
    """"XDR", "212.5 Gbps", "25.78 Gbps" (a shortened print) or "10.0 Gbps (FDR10)" -> the generation."""
    if not speed:
        return None
    token = speed.strip().upper()
    if token in IB_LANE_GBPS:
        return token
    match = _GBPS.match(speed)
    if not match:
        return None
    if match[2]:
        return "FDR10"
    value = float(match[1])
    nearest = min(_IB_SIGNAL_GBPS, key=lambda signal: abs(signal - value))
    return _IB_SIGNAL_GBPS[nearest] if abs(nearest - value) <= 0.05 * nearest else None


def ib_width(width: str | None) -> int | None:
    match = _WIDTH.match(width or "")
    return int(match[1]) if match else None


def generation_of_lane(gbps: float) -> str | None:
    """The generation whose lanes run at `gbps` (200 -> XDR), None when none does."""
    return next((name for name, rate in IB_LANE_GBPS.items() if rate == gbps and name != "FDR10"), None)


def ib_rate(width: int | None, generation: str | None) -> float | None:
    if width is None or generation not in IB_LANE_GBPS:
        return None
    return width * IB_LANE_GBPS[generation]


# --- Ethernet speeds (NVUE's Speed column, a MAU type) ------------------------------------------------

_ETH_SPEED = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([MGT])(?:b/?s|bps|igE?)?\b", re.IGNORECASE)
_MAU_SPEED = re.compile(r"^\s*([0-9]+)(G|Gig)(?:Base|BASE)", re.IGNORECASE)


@lru_cache(maxsize=4096)
def ethernet_gbps(text: str | None) -> float | None:
    """"400G", "100Gb/s", "1G", "400GBASE-DR4", "10GigBaseLR - R fiber" -> Gb/s; None for anything else."""
    if not text:
        return None
    if match := _MAU_SPEED.match(text):
        return float(match[1])
    if match := _ETH_SPEED.match(text):
        value = float(match[1])
        return {"M": value / 1000, "G": value, "T": value * 1000}[match[2].upper()]
    return None


# --- node descriptions --------------------------------------------------------------------------------

_MANAGED = re.compile(r"^MF0;(?P<host>[^:]+):(?P<model>[^/]+)(?:/(?P<blade>[^/]+))?/U[0-9]+$")
_MLX = re.compile(r"^mlx[45]_(?P<n>[0-9]{1,3})$")
_HCA = re.compile(r"^HCA-(?P<n>[0-9]{1,3})$")
AGGREGATION_NODE = "Aggregation Node"  # a switch's own SHARP aggregation node: no cable reaches it


def split_hca_description(description: str) -> tuple[str, str | None]:
    """"gpu-001 mlx5_3" -> ("gpu-001", "mlx5_3"); a description of one word is a host name alone."""
    host, _, ibdev = description.strip().rpartition(" ")
    return (host.strip(), ibdev) if host.strip() else (ibdev, None)


def rail_of_ibdev(ibdev: str | None) -> int | None:
    """mlx5_<n> -> n, HCA-<n> -> n - 1 (old drivers count from 1); None for a renamed device."""
    if not ibdev:
        return None
    if match := _MLX.match(ibdev):
        return int(match["n"])
    if match := _HCA.match(ibdev):
        return max(int(match["n"]) - 1, 0)
    return None


def ibdev_of_rail(rail: int) -> str:
    return f"mlx5_{rail}"


def switch_name_candidates(description: str) -> list[str]:
    """Names a switch's node description may stand for, most specific first."""
    description = description.strip()
    names = [description]
    if match := _MANAGED.match(description):
        if match["blade"]:
            names.append(f"{match['host']}/{match['blade']}")
        names.append(match["host"])
    return names


def host_name_candidates(name: str) -> list[str]:
    """A host or system name as printed, then without its domain (`leaf02.example.com` -> `leaf02`)."""
    name = name.strip()
    short = name.split(".", 1)[0]
    return [name] if short == name or not short else [name, short]


# --- port names -------------------------------------------------------------------------------------

_TRAILING_NUMBER = re.compile(r"([0-9]+)$")
_FIELD = re.compile(r"\{([^{}]*)\}")
_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv}


@lru_cache(maxsize=65536)
def port_number(name: str) -> int | None:
    """The number in a physical port's name: `p17`, `swp17` and `Ethernet1/17` are port 17."""
    match = _TRAILING_NUMBER.search(name.strip())
    return int(match[1]) if match else None


def ib_switch_port(number: int, lane: int | None, lanes: int, *, split: bool) -> int:
    """The port number a switch reports for our port `number` (and `lane` of its `lanes`, when split)."""
    if not split or lanes <= 1:
        return number
    return (number - 1) * lanes + (lane or 0) + 1


def ib_switch_port_of(fabric_port: int, lanes: int, *, split: bool) -> tuple[int, int | None]:
    """The inverse: (our port number, lane or None) of the port number a switch reports."""
    if not split or lanes <= 1:
        return fabric_port, None
    return (fabric_port - 1) // lanes + 1, (fabric_port - 1) % lanes


class FormatError(ValueError):
    """An OS port format that is not {n}-and-arithmetic."""


def _evaluate(node: ast.AST, names: dict[str, int]) -> int:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body, names)
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.Name) and node.id in names:
        return names[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        right = _evaluate(node.right, names)
        if isinstance(node.op, ast.FloorDiv) and right == 0:
            raise FormatError("division by zero")
        return _OPERATORS[type(node.op)](_evaluate(node.left, names), right)
    raise FormatError("only n, lane, lanes, whole numbers and + - * // may appear between braces")


@lru_cache(maxsize=256)
def _compiled(fmt: str) -> tuple[tuple[str, ...], tuple[ast.Expression, ...], bool]:
    """(literal pieces, field expressions, whether `lane` appears): parsed once per format."""
    if len(fmt) > 60:
        raise FormatError("a format of at most 60 characters")
    pieces, fields = [], []
    last = 0
    for match in _FIELD.finditer(fmt):
        pieces.append(fmt[last:match.start()])
        try:
            fields.append(ast.parse(match[1].strip() or "?", mode="eval"))
        except SyntaxError:
            raise FormatError(f"{{{match[1]}}} is not n, lane or arithmetic over them") from None
        last = match.end()
    pieces.append(fmt[last:])
    if not fields or "{" in "".join(pieces) or "}" in "".join(pieces):
        raise FormatError("the format must hold {n}")
    uses_lane = "lane" in re.sub(r"lanes", "", "".join(m[1] for m in _FIELD.finditer(fmt)))
    return tuple(pieces), tuple(fields), uses_lane


def check_format(fmt: str) -> None:
    """Raise FormatError when `fmt` cannot name ports (a form's check)."""
    if fmt:
        os_port_name(fmt, number=1, lane=0, lanes=2)
        os_port_name(fmt, number=1, lane=None, lanes=1)


@lru_cache(maxsize=65536)  # a model's few hundred names, asked for once per switch of that model
def os_port_name(fmt: str, *, number: int, lane: int | None, lanes: int) -> str:
    """What the OS of a switch model calls our port `number` (its `lane` of `lanes`, for a lane)."""
    pieces, fields, uses_lane = _compiled(fmt)
    names = {"n": number, "lane": lane or 0, "lanes": max(lanes, 1)}
    text = pieces[0]
    for field, piece in zip(fields, pieces[1:], strict=True):
        text += str(_evaluate(field, names)) + piece
    if lane is None or uses_lane:
        return text
    return f"{text}s{lane}" if text.lower().startswith("swp") else f"{text}/{lane + 1}"


_ETH_PREFIX = re.compile(r"^(?:ethernet|eth|et)(?=[0-9]+/)")


@lru_cache(maxsize=65536)
def normalize_port_name(name: str) -> str:
    """One spelling for comparing port names: lower case, and Ethernet1/17, Eth1/17, Et1/17 all eth1/17
    (EOS and NX-OS print the short forms in their tables, the long ones in LLDP). Only the slot/port form
    is folded: SONiC's Ethernet0 is a data port and its eth0 the management port."""
    value = name.strip().lower()
    return _ETH_PREFIX.sub("eth", value)


# --- prompts ----------------------------------------------------------------------------------------

_PROMPT = re.compile(r"^\s*(?:\[)?[A-Za-z0-9_.-]+@(?P<host>[A-Za-z0-9_.-]+)(?::\S*\s*[$#]|\s+\S*\][$#])")


def prompt_host(text: str) -> str | None:
    """The host a captured output names in its shell prompt (`cumulus@leaf-03:~$ ...`, `[root@n01 HPL]#`),
    looked for in its first lines only."""
    for line in text[:4000].splitlines()[:5]:
        if match := _PROMPT.match(line):
            return match["host"]
    return None
