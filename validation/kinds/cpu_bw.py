"""CPU-path bandwidth: ib_write_bw between host memories on every rail of every node against a partner,
judged against the profile's floor in Gb/s."""

from ..choices import CheckKind
from .perftest import pair_bandwidth_kind

KIND = pair_bandwidth_kind(CheckKind.CPU_BANDWIDTH, gpu=False)
