from django.db import models

from .criteria import Outcome

# A check run's and an upload's status is a job's: core.choices.JobStatus.


class CheckKind(models.TextChoices):
    LINK_HEALTH = "link_health", "Link health (mlxlink)"
    CPU_BANDWIDTH = "cpu_bw", "CPU-path bandwidth (ib_write_bw)"
    GPU_RDMA = "gpu_rdma", "GPU RDMA bandwidth (ib_write_bw --use_cuda)"
    BANDWIDTH_MATRIX = "bw_matrix", "Bandwidth matrix (pairwise ib_write_bw)"
    NCCL = "nccl", "NCCL all_reduce_perf"
    NODE_INVENTORY = "node_inventory", "Node inventory (driver, firmware, libraries)"
    SOAK = "soak", "Soak (counter sampling)"
    PORT_STATE = "port_state", "Port state (ibstat / ibstatus)"  # arrives only as an uploaded output
    TOPOLOGY = "topology", "Topology (iblinkinfo, lldpcli) against the plan"
    LOSSLESS = "lossless", "Lossless RoCE configuration (mlnx_qos, ECN)"


class ResultStatus(models.TextChoices):
    """Where one target of a run stands. A target is finished once done, errored or cancelled."""

    PENDING = "pending", "Pending"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    ERROR = "error", "Error (could not measure)"
    CANCELLED = "cancelled", "Cancelled"


FINISHED_RESULT_STATUSES = (ResultStatus.DONE, ResultStatus.ERROR, ResultStatus.CANCELLED)


class Verdict(models.TextChoices):
    # The pure criteria module owns the outcome values; these labels are what pages show.
    PASS = Outcome.PASS.value, "Pass"
    WARN = Outcome.WARN.value, "Warn"
    FAIL = Outcome.FAIL.value, "Fail"
    ERROR = Outcome.ERROR.value, "Error (could not measure)"


class RunnerKind(models.TextChoices):
    SIMULATED = "simulated", "Simulated (demo cluster)"
    LOCAL = "local", "Local subprocess"
    SSH = "ssh", "SSH"
    UPLOAD = "upload", "Uploaded output"  # results parsed from a file a technician or a node sent


class NcclLauncher(models.TextChoices):
    MPIRUN = "mpirun", "mpirun (Open MPI)"
    SRUN = "srun", "srun (Slurm)"


class UploadSource(models.TextChoices):
    PAGE = "page", "Upload page"
    API = "api", "API (node post)"


# Which kinds a person starts as a run of targets is the kind table's to say: validation.kinds.
# Runners that execute commands; an "upload" run's results arrive as files and it has nothing to execute.
EXECUTING_RUNNERS = (RunnerKind.SIMULATED, RunnerKind.LOCAL, RunnerKind.SSH)


class LinkState(models.TextChoices):
    """What a topology comparison saw of one link: the values of validation.topology.compare.LinkState
    (written out here, since the pure module below cannot import Django; a test keeps the two equal)."""

    OK = "ok", "Ok"
    MISSING = "missing", "Missing (down or absent)"
    MISWIRED = "miswired", "Miswired"
    UNPLANNED = "unplanned", "Unplanned"
    DEGRADED = "degraded", "Degraded (lower speed or width)"


class LinkChange(models.TextChoices):
    """How a link of a comparison stands against the previous comparison."""

    NEW = "new", "New since the previous comparison"
    STILL = "still", "Also in the previous comparison"
    FIXED = "fixed", "Fixed since the previous comparison"


class TopologySource(models.TextChoices):
    COMMAND = "command", "compare_topology command"
    PAGE = "page", "Upload page"
    CHECK_RUN = "check_run", "Topology check run (collected from the nodes and switches)"
