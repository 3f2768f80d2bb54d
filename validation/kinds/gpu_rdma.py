"""GPU RDMA bandwidth: ib_write_bw --use_cuda between GPU memories on every rail of every node against a
partner, judged against the profile's share of the rail's line rate."""

from ..choices import CheckKind
from .perftest import pair_bandwidth_kind

KIND = pair_bandwidth_kind(CheckKind.GPU_RDMA, gpu=True)
