"""Acceptance profiles, check runs and their per-target results.

A check run and an uploaded tool output are job rows (core.models.Job): status, progress, who asked, a
log, polled by the one progress partial through the one status endpoint. Each target a run covers
(a port, a node pair, a node, the cluster) is one CheckResult created when the run starts, so a
redelivered task updates its own row instead of adding one: (run, target_key) is unique.
"""

import dataclasses
import hashlib
from datetime import timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import NotSupportedError, models
from django.db.models import Case, Count, F, FloatField, IntegerField, Q, Value, When
from django.db.models.constants import LOOKUP_SEP
from django.db.models.fields.json import KeyTransform, compile_json_path
from django.db.models.functions import Coalesce
from simple_history.models import HistoricalRecords

from cabling.models import Cable
from core.choices import JobStatus
from core.models import Job
from inventory.models import Device, Optic, Port
from projects.models import Project

from . import criteria
from .choices import CheckKind, LinkChange, LinkState, ResultStatus, RunnerKind, TopologySource, UploadSource, Verdict

_DEFAULTS = criteria.Profile()
_FRACTION = [MinValueValidator(0.0), MaxValueValidator(1.0)]
_POSITIVE = [MinValueValidator(0.0)]
# A result's place in a worst-first list (fail, error, warn, pass, not measured yet) and a matrix pair's
# slowest rail (-1 for none, so a pair without a figure comes before any with one, as NULLS FIRST would,
# on SQLite and PostgreSQL alike). Defined once: the index that serves the matrix's worst-first page
# (checkresult_worst_pairs_idx) must hold the very expressions the page orders by, or PostgreSQL sorts.
SEVERITY_RANK = Case(
    When(verdict=Verdict.FAIL, then=Value(0)),
    When(verdict=Verdict.ERROR, then=Value(1)),
    When(verdict=Verdict.WARN, then=Value(2)),
    When(verdict=Verdict.PASS, then=Value(3)),
    default=Value(4),
    output_field=IntegerField(),
)


class JSONNumber(models.Func):
    """The JSON value at a path of a JSON field (`JSONNumber("metrics__min_gbps")`) as a float when it is a
    JSON number, NULL when it is anything else (text such as "n/a", null, a list, missing).

    Why not Cast(KT(...), FloatField()): PostgreSQL refuses to cast the text "n/a" (a DataError, on every
    read that compares it, and on every write of a row an expression index holds it in), and SQLite casts
    it to 0.0 silently. The type is asked first, so only numbers are cast: jsonb_typeof on PostgreSQL (an
    immutable function, so the expression can be indexed), json_type on SQLite."""

    output_field = FloatField()

    def __init__(self, path: str, **extra):
        field, *keys = path.split(LOOKUP_SEP)
        if not keys:
            raise ValueError("JSONNumber needs a key inside the field: 'metrics__min_gbps'.")
        value = F(field)
        for key in keys:
            value = KeyTransform(key, value)
        super().__init__(value, **extra)

    def as_sql(self, compiler, connection, **extra_context):
        raise NotSupportedError(f"JSONNumber is written for PostgreSQL and SQLite, not {connection.vendor}.")

    def as_postgresql(self, compiler, connection, **extra_context):
        json, params = compiler.compile(self.source_expressions[0])  # jsonb: metrics -> 'min_gbps'
        sql = f"(CASE WHEN jsonb_typeof({json}) = 'number' THEN ({json})::double precision ELSE NULL END)"
        return sql, (*params, *params)

    def as_sqlite(self, compiler, connection, **extra_context):
        document, params, keys = self.source_expressions[0].preprocess_lhs(compiler, connection)
        path = compile_json_path(keys)
        sql = (f"(CASE WHEN JSON_TYPE({document}, %s) IN ('integer', 'real') "
               f"THEN CAST(JSON_EXTRACT({document}, %s) AS REAL) ELSE NULL END)")
        return sql, (*params, path, *params, path)


SLOWEST_GBPS = JSONNumber("metrics__min_gbps")  # a text figure ("n/a") is no figure: NULL, never an error
SLOWEST_GBPS_OR_NONE = Coalesce(SLOWEST_GBPS, Value(-1.0), output_field=FloatField())

# Results outlive what they measured: a swapped optic or a removed device keeps its history.
_OPTIONAL = dict(on_delete=models.SET_NULL, null=True, blank=True)


class AcceptanceProfile(models.Model):
    """The thresholds one project's results are judged by; created with the defaults on first use
    and editable by the project's managers (services.acceptance_profile_update)."""

    project = models.OneToOneField(Project, on_delete=models.CASCADE, related_name="acceptance_profile")
    effective_ber_warn = models.FloatField(default=_DEFAULTS.effective_ber_warn, validators=_POSITIVE)
    effective_ber_fail = models.FloatField(default=_DEFAULTS.effective_ber_fail, validators=_POSITIVE)
    symbol_ber_warn = models.FloatField(default=_DEFAULTS.symbol_ber_warn, validators=_POSITIVE)
    symbol_ber_fail = models.FloatField(default=_DEFAULTS.symbol_ber_fail, validators=_POSITIVE)
    check_dom = models.BooleanField(
        default=_DEFAULTS.check_dom, help_text="Hold optics' DOM readings to the module's own limits."
    )
    dom_power_margin_db = models.FloatField(
        default=_DEFAULTS.dom_power_margin_db,
        validators=_POSITIVE,
        help_text="Warn when a lane's Tx/Rx power is this close (dB) to the module's limit.",
    )
    dom_temperature_margin_c = models.FloatField(
        default=_DEFAULTS.dom_temperature_margin_c,
        validators=_POSITIVE,
        help_text="Warn when the module temperature is this close (C) to the module's limit.",
    )
    gpu_rdma_warn_fraction = models.FloatField(default=_DEFAULTS.gpu_rdma_warn_fraction, validators=_FRACTION)
    gpu_rdma_fail_fraction = models.FloatField(
        default=_DEFAULTS.gpu_rdma_fail_fraction,
        validators=_FRACTION,
        help_text="GPU RDMA write bandwidth below this share of the line rate fails.",
    )
    cpu_bw_warn_gbps = models.FloatField(default=_DEFAULTS.cpu_bw_warn_gbps, validators=_POSITIVE)
    cpu_bw_fail_gbps = models.FloatField(
        default=_DEFAULTS.cpu_bw_fail_gbps,
        validators=_POSITIVE,
        help_text="CPU-path (host memory) bandwidth per link below this fails, in Gb/s.",
    )
    nccl_busbw_warn_gbs = models.FloatField(default=_DEFAULTS.nccl_busbw_warn_gbs, validators=_POSITIVE)
    nccl_busbw_fail_gbs = models.FloatField(
        default=_DEFAULTS.nccl_busbw_fail_gbs,
        validators=_POSITIVE,
        help_text="NCCL bus bandwidth at the largest message size below this fails, in GB/s.",
    )
    matrix_outlier_fraction = models.FloatField(
        default=_DEFAULTS.matrix_outlier_fraction,
        validators=_FRACTION,
        help_text="A node pair below this share of the run's median bandwidth is flagged.",
    )
    pinned_versions = models.JSONField(
        default=dict,
        blank=True,
        help_text='Versions every node must run, e.g. {"gpu_driver": "580.65.06"}. '
        "Empty: each node is compared with the majority of the run.",
    )
    roce = models.JSONField(
        default=dict,
        blank=True,
        help_text="RoCE settings that differ from the defaults (PFC priority 3, DSCP 26, trust dscp, ECN on, "
        'GID index 3, traffic class 106), e.g. {"pfc_priority": 5, "dscp": 24}.',
    )
    updated_at = models.DateTimeField(auto_now=True)

    history = HistoricalRecords()

    # The model fields that carry a threshold, in the order a form shows them.
    THRESHOLD_FIELDS = [f.name for f in dataclasses.fields(criteria.Profile)]

    def __str__(self) -> str:
        return f"Acceptance profile of {self.project.code}"

    def clean(self):
        errors = {}
        pairs = [
            ("effective_ber_warn", "effective_ber_fail", "at most"),
            ("symbol_ber_warn", "symbol_ber_fail", "at most"),
            ("gpu_rdma_warn_fraction", "gpu_rdma_fail_fraction", "at least"),
            ("cpu_bw_warn_gbps", "cpu_bw_fail_gbps", "at least"),
            ("nccl_busbw_warn_gbs", "nccl_busbw_fail_gbs", "at least"),
        ]
        for warn_field, fail_field, relation in pairs:
            warn, fail = getattr(self, warn_field), getattr(self, fail_field)
            if warn is None or fail is None:
                continue
            wrong = warn > fail if relation == "at most" else warn < fail
            if wrong:
                errors[warn_field] = f"The warn level must be {relation} the fail level ({fail:g})."
        if not isinstance(self.pinned_versions, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in self.pinned_versions.items()
        ):
            errors["pinned_versions"] = "Give an object of name: version strings."
        roce_error = self._roce_error()
        if roce_error:
            errors["roce"] = roce_error
        if errors:
            raise ValidationError(errors)

    def _roce_error(self) -> str:
        """Why the RoCE overrides cannot be used ('' when they can): refused here, never when a run reads them."""
        if not isinstance(self.roce, dict):
            return 'Give an object of RoCE settings, e.g. {"pfc_priority": 3}.'
        try:
            criteria.RoceSettings.from_dict(self.roce)
        except ValueError as exc:
            return str(exc)
        return ""

    def roce_shown(self) -> dict:
        """The RoCE settings runs use (defaults with the overrides), or the stored overrides as they are when
        they cannot be used (a page shows what is wrong rather than failing)."""
        return criteria.RoceSettings.from_dict(self.roce).as_dict() if not self._roce_error() else self.roce

    def as_criteria(self) -> criteria.Profile:
        return criteria.Profile(**{name: getattr(self, name) for name in self.THRESHOLD_FIELDS})


class CheckRun(Job):
    """A run of one check kind over the project's targets. Its progress counts targets measured, errored
    or cancelled (progress_done) of those it covers (progress_total)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="check_runs")
    kind = models.CharField(max_length=20, choices=CheckKind.choices)
    runner = models.CharField(max_length=16, choices=RunnerKind.choices, default=RunnerKind.SIMULATED)
    options = models.JSONField(default=dict, blank=True, help_text="Kind-specific settings (seed, use_cuda).")
    current_round = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="The round whose targets were last scheduled; later rounds wait for it (bandwidth tests).",
    )
    parent = models.ForeignKey(
        "self",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="reruns",
        help_text="The run whose failed targets this run repeats.",
    )
    # The run's figures as it finished, so that a finished run's pages read them instead of counting its
    # results (half a million for a 1,024-node matrix): written by services.progress.check_run_summary_store
    # when the run closes, valid while summarised_at is set. A result recorded after that (a target still
    # running when the run was cancelled) clears summarised_at in the same UPDATE that counts it, and the
    # pages count live again. Running runs are always counted live.
    summarised_at = models.DateTimeField(null=True, blank=True, help_text="When the figures below were stored.")
    summary_results = models.PositiveIntegerField(null=True, blank=True, help_text="Results of the run.")
    summary_passed = models.PositiveIntegerField(null=True, blank=True)
    summary_warned = models.PositiveIntegerField(null=True, blank=True)
    summary_failed = models.PositiveIntegerField(null=True, blank=True)
    summary_errored = models.PositiveIntegerField(null=True, blank=True)
    summary_figure_lo = models.FloatField(
        null=True, blank=True, help_text="A matrix run's slowest pair's slowest rail (Gb/s): the scale's low end."
    )
    summary_figure_hi = models.FloatField(
        null=True, blank=True, help_text="A matrix run's fastest pair's slowest rail (Gb/s): the scale's high end."
    )

    SUMMARY_COUNTS = {"passed": "summary_passed", "warned": "summary_warned", "failed": "summary_failed",
                      "errored": "summary_errored"}

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["project", "kind", "-created_at"], name="checkrun_project_kind_idx")]
        constraints = [
            models.CheckConstraint(
                condition=Q(progress_done__lte=F("progress_total")), name="checkrun_done_within_total"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.project.code} {self.get_kind_display()} #{self.pk}"

    @property
    def has_summary(self) -> bool:
        return self.summarised_at is not None

    def status_figures(self) -> dict:
        """The verdict counts so far, which the run pages show beside the progress bar: the stored ones of
        a finished run, else one query."""
        if self.has_summary:
            return {name: getattr(self, field) for name, field in self.SUMMARY_COUNTS.items()}
        return self.results.aggregate(
            passed=Count("id", filter=Q(verdict=Verdict.PASS)),
            warned=Count("id", filter=Q(verdict=Verdict.WARN)),
            failed=Count("id", filter=Q(verdict=Verdict.FAIL)),
            errored=Count("id", filter=Q(verdict=Verdict.ERROR)),
        )


class CheckResult(models.Model):
    """One target of a run. Created pending when the run starts; its task fills in the raw output (always
    kept), the parsed metrics, the verdict and the reasons. Linked to whatever it concerns so a failure
    can become a punch item on that port, cable, optic or node."""

    run = models.ForeignKey(CheckRun, on_delete=models.CASCADE, related_name="results")
    # A pair's key is "<node>:<port>~<node>:<port>": up to 2 x (64 + 1 + 40) + 1 = 211 characters.
    target_key = models.CharField(max_length=255, help_text="Stable name of the target within the run.")
    round = models.PositiveIntegerField(default=0)
    params = models.JSONField(default=dict, blank=True, help_text="What the task needs to run this target.")
    status = models.CharField(max_length=16, choices=ResultStatus.choices, default=ResultStatus.PENDING)
    device = models.ForeignKey(Device, **_OPTIONAL, related_name="check_results")
    peer_device = models.ForeignKey(Device, **_OPTIONAL, related_name="+")
    port = models.ForeignKey(Port, **_OPTIONAL, related_name="check_results")
    peer_port = models.ForeignKey(Port, **_OPTIONAL, related_name="+")
    cable = models.ForeignKey(Cable, **_OPTIONAL, related_name="check_results")
    optic = models.ForeignKey(Optic, **_OPTIONAL, related_name="check_results")
    host = models.CharField(max_length=200, blank=True)
    command = models.TextField(blank=True)
    raw_output = models.TextField(blank=True)
    stderr = models.TextField(blank=True)
    exit_code = models.IntegerField(null=True, blank=True)
    metrics = models.JSONField(default=dict, blank=True)
    verdict = models.CharField(max_length=8, choices=Verdict.choices, blank=True)
    reasons = models.JSONField(default=list, blank=True, help_text='[{"level": "fail", "text": "..."}]')
    attempt = models.PositiveSmallIntegerField(default=0, help_text="How many times the target was executed.")
    started_at = models.DateTimeField(null=True, blank=True)
    # A chunk of targets is claimed at once and run one after another, so each row of it holds the whole
    # chunk's lease (every command of every target at its full timeout, plus the margin), counted from
    # started_at. Empty on rows claimed before chunks: their lease is their own (services.leases).
    lease_s = models.FloatField(null=True, blank=True, help_text="Seconds from started_at the claim holds it.")
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["run", "round", "id"]
        constraints = [
            models.UniqueConstraint(fields=["run", "target_key"], name="checkresult_target_unique_in_run"),
        ]
        indexes = [
            models.Index(fields=["run", "status", "round"], name="checkresult_run_status_idx"),
            models.Index(fields=["port", "-finished_at"], name="checkresult_port_history_idx"),
            # A matrix run's results worst first (selectors.worst_pairs_first): its first page is the
            # start of this index, not a sort of every pair.
            models.Index(F("run"), SEVERITY_RANK, SLOWEST_GBPS_OR_NONE, F("id"), name="checkresult_worst_pairs_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.run_id}:{self.target_key}"

    @classmethod
    def fit_key(cls, key: str) -> str:
        """A target key that fits the column: a longer one (a name from an uploaded file can be anything)
        keeps its start and ends in a digest of the whole, so two long keys stay two keys."""
        limit = cls._meta.get_field("target_key").max_length
        if len(key) <= limit:
            return key
        digest = hashlib.sha256(key.encode("utf-8", errors="replace")).hexdigest()[:16]
        return f"{key[: limit - len(digest) - 1]}#{digest}"


# ---------------------------------------------------------------------------------------------------
# Uploaded tool outputs


def tool_upload_path(upload: "ToolUpload", filename: str) -> str:
    return f"uploads/{upload.project.code}/{filename}"


class ToolUpload(Job):
    """A tool's output sent as a file (the upload page) or posted by a node (the API). The file is kept
    as it came, whatever happens; a task parses it and files its results as the CheckResults of one run
    (runner "upload"), so uploaded and executed measurements live in one place. An upload that cannot
    be read fails with the reason in `errors` and the line that stopped it in `error_line`."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="tool_uploads")
    file = models.FileField(upload_to=tool_upload_path, max_length=300)
    original_name = models.CharField(max_length=255)
    size_bytes = models.PositiveIntegerField(default=0)
    host = models.CharField(max_length=200, help_text="The node the output was captured on, as sent.")
    device = models.ForeignKey(Device, **_OPTIONAL, related_name="tool_uploads")
    tool_requested = models.CharField(max_length=20, blank=True, help_text="Blank: detect the tool.")
    tool = models.CharField(max_length=20, blank=True, help_text="The tool the output was read as.")
    source = models.CharField(max_length=8, choices=UploadSource.choices, default=UploadSource.PAGE)
    error_line = models.PositiveIntegerField(null=True, blank=True, help_text="1-based line of the file.")
    run = models.OneToOneField(CheckRun, **_OPTIONAL, related_name="upload")
    result_count = models.PositiveIntegerField(default=0)
    counts = models.JSONField(default=dict, blank=True, help_text='Results per verdict, e.g. {"pass": 7, "fail": 1}.')

    STATUS_LABELS = {JobStatus.DONE: "Parsed"}

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["project", "-created_at"], name="toolupload_project_recent")]

    def __str__(self) -> str:
        return f"{self.project.code} upload {self.pk} ({self.original_name})"

    @property
    def error(self) -> str:
        """Why the file could not be read, as one line (pages and the API show it so)."""
        return "; ".join(self.errors or [])


# ---------------------------------------------------------------------------------------------------
# Soak: link counters sampled across a long window


class SoakWindow(models.Model):
    """A soak: every compute port's counters read every `interval` for `duration`. Its run (kind soak)
    holds one CheckResult per port, failed as soon as a counter grows; the run's status is the window's
    (running while open, done when it ran its course, cancelled when stopped early)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="soak_windows")
    run = models.OneToOneField(CheckRun, on_delete=models.CASCADE, related_name="soak_window")
    started_at = models.DateTimeField()
    duration = models.DurationField(validators=[MinValueValidator(timedelta(minutes=1))])
    interval = models.DurationField(validators=[MinValueValidator(timedelta(seconds=10))])
    sweeps = models.PositiveIntegerField(default=0, help_text="Samplings started (sample 0 is the baseline).")
    last_sweep_at = models.DateTimeField(null=True, blank=True)
    started_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
        ordering = ["-started_at", "-id"]

    def __str__(self) -> str:
        return f"{self.project.code} soak #{self.pk}"

    @property
    def ends_at(self):
        return self.started_at + self.duration

    @property
    def duration_hours(self) -> float:
        return self.duration.total_seconds() / 3600

    @property
    def interval_minutes(self) -> float:
        return self.interval.total_seconds() / 60

    @property
    def is_open(self) -> bool:
        return self.run.status == JobStatus.RUNNING

    def progress(self, now) -> float:
        """Elapsed share of the window, 0..1 (a stopped or finished window stays where it ended)."""
        end = now if self.is_open else (self.run.finished_at or now)
        elapsed = (min(end, self.ends_at) - self.started_at).total_seconds()
        return max(0.0, min(1.0, elapsed / self.duration.total_seconds()))


class SoakSample(models.Model):
    """One port's counters at one sampling. `error` says why a reading is missing."""

    window = models.ForeignKey(SoakWindow, on_delete=models.CASCADE, related_name="samples")
    result = models.ForeignKey(CheckResult, on_delete=models.CASCADE, related_name="soak_samples")
    sweep = models.PositiveIntegerField()
    taken_at = models.DateTimeField()
    symbol_errors = models.BigIntegerField(null=True, blank=True)
    effective_physical_errors = models.BigIntegerField(null=True, blank=True)
    link_down = models.BigIntegerField(null=True, blank=True)
    link_error_recovery = models.BigIntegerField(null=True, blank=True)
    effective_ber = models.FloatField(null=True, blank=True)
    symbol_ber = models.FloatField(null=True, blank=True)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["window", "sweep", "id"]
        constraints = [
            models.UniqueConstraint(fields=["result", "sweep"], name="soaksample_one_per_port_and_sweep"),
        ]
        indexes = [models.Index(fields=["window", "sweep"], name="soaksample_window_sweep_idx")]

    def __str__(self) -> str:
        return f"{self.result_id}@{self.sweep}"


# ---------------------------------------------------------------------------------------------------
# Topology comparisons: the fabric as the switches and hosts see it, against the plan


class TopologyComparison(Job):
    """One comparison of the live fabric with the plan: from which files or check run, who asked, the
    counts per state, and the previous comparison of the project, so a page says what changed. Its links
    that are not ok (and those fixed since the previous one) are TopologyLink rows; its files are kept as
    they came (TopologyFile). A job row: the upload page queues it and a task runs it; the command and
    the topology check run it in place."""

    STATUS_LABELS = {JobStatus.DONE: "Compared"}

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="topology_comparisons")
    source = models.CharField(max_length=12, choices=TopologySource.choices, default=TopologySource.PAGE)
    run = models.OneToOneField(
        CheckRun, **_OPTIONAL, related_name="topology_comparison",
        help_text="The topology check run that collected the outputs through the runners.",
    )
    previous = models.ForeignKey(
        "self", **_OPTIONAL, related_name="+", help_text="The project's comparison before this one."
    )
    counts = models.JSONField(
        default=dict, blank=True,
        help_text='Links per state and more: {"ok": n, "missing": n, "miswired": n, "unplanned": n, '
        '"degraded": n, "swaps": n, "in_scope": n, "observed": n}.',
    )
    changes = models.JSONField(default=dict, blank=True, help_text='{"new": n, "still": n, "fixed": n}')
    notes = models.JSONField(default=list, blank=True, help_text="What the mapping could not place.")
    cables_changed = models.PositiveIntegerField(default=0, help_text="Cables whose state the comparison moved.")

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["project", "-created_at"], name="topocomp_project_recent")]

    def __str__(self) -> str:
        return f"{self.project.code} topology comparison {self.pk}"

    @property
    def faults(self) -> int:
        counts = self.counts or {}
        return sum(counts.get(state, 0) for state in LinkState.values if state != LinkState.OK)


def topology_file_path(topology_file: "TopologyFile", filename: str) -> str:
    return f"topology/{topology_file.comparison.project.code}/{topology_file.comparison_id}/{filename}"


class TopologyFile(models.Model):
    """A tool output a comparison read, kept as it came, with its digest; a file that could not be read
    says where parsing stopped."""

    comparison = models.ForeignKey(TopologyComparison, on_delete=models.CASCADE, related_name="files")
    file = models.FileField(upload_to=topology_file_path, max_length=300)
    original_name = models.CharField(max_length=255)
    size_bytes = models.PositiveIntegerField(default=0)
    sha256 = models.CharField(max_length=64)
    host = models.CharField(max_length=200, blank=True, help_text="The device the output was taken on.")
    tool = models.CharField(max_length=20, blank=True)
    error = models.TextField(blank=True)
    error_line = models.PositiveIntegerField(null=True, blank=True, help_text="1-based line of the file.")

    class Meta:
        ordering = ["comparison", "id"]

    def __str__(self) -> str:
        return self.original_name


class TopologyLink(models.Model):
    """A link of a comparison that is not ok, or that was not ok in the previous one and is now (fixed):
    its planned and observed ends in words, its cable, the advice, and how it stands against the previous
    comparison."""

    comparison = models.ForeignKey(TopologyComparison, on_delete=models.CASCADE, related_name="links")
    key = models.CharField(max_length=255, help_text="The planned link (cable label, /B<n> for a leg) or obs:<ends>.")
    state = models.CharField(max_length=12, choices=LinkState.choices)
    change = models.CharField(max_length=8, choices=LinkChange.choices, default=LinkChange.NEW)
    cable = models.ForeignKey(Cable, **_OPTIONAL, related_name="topology_links")
    cable_label = models.CharField(max_length=120, blank=True)
    planned_a = models.CharField(max_length=255, blank=True)
    planned_b = models.CharField(max_length=255, blank=True)
    observed_a = models.CharField(max_length=255, blank=True)
    observed_b = models.CharField(max_length=255, blank=True)
    note = models.TextField(blank=True)
    advice = models.TextField(blank=True)
    swap_with = models.CharField(max_length=255, blank=True)

    class Meta:
        ordering = ["comparison", "id"]
        constraints = [
            models.UniqueConstraint(fields=["comparison", "key"], name="topolink_key_unique_in_comparison"),
        ]
        indexes = [models.Index(fields=["cable", "-id"], name="topolink_cable_recent")]

    def __str__(self) -> str:
        return f"{self.comparison_id}:{self.key} {self.state}"
