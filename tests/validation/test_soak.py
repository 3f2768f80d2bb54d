"""Soak sampling: the beat task driven directly, several times, on a simulated cluster whose counters grow
on one port; the failure names that port and the first sample at which it grew; windows close on time
or when stopped; the soak pages with their access rules; the beat schedule."""

from datetime import UTC, datetime, timedelta

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.urls import reverse
from django.utils import timezone

from core.choices import JobStatus
from tests.support import count_queries
from validation import soak, tasks
from validation.choices import CheckKind, ResultStatus, RunnerKind, Verdict
from validation.models import CheckResult, SoakSample, SoakWindow
from validation.runners import plan_faults
from validation.services import sim_cluster_for

from .conftest import make_gpu_nodes

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 12, 1, 8, 0, tzinfo=UTC)
MIN = timedelta(minutes=1)
SEED = 1
GROWING = "gpu-002:mlx5_3"  # rail 3 of gpu-002 = port ib3


@pytest.fixture
def nodes(project):
    return make_gpu_nodes(project, 3)  # 24 compute ports


@pytest.fixture
def committed(django_capture_on_commit_callbacks):
    """Run a callable and the tasks it enqueues on commit (eagerly, as without a broker)."""

    def call(function, *args, **kwargs):
        with django_capture_on_commit_callbacks(execute=True):
            return function(*args, **kwargs)

    return call


@pytest.fixture
def start(project, technician, committed):
    def start_window(**options):
        options.setdefault("seed", SEED)
        return committed(soak.soak_window_start, project=project, user=technician, options=options, now=T0)

    return start_window


@pytest.fixture
def tick(committed):
    """What Celery beat does every minute, at a chosen time."""

    def tick_at(moment):
        committed(tasks.soak_tick.delay, now=moment.isoformat())

    return tick_at


def result(window, key) -> CheckResult:
    return window.run.results.get(target_key=key)


def fail_texts(result) -> list[str]:
    return [r["text"] for r in result.reasons if r["level"] == Verdict.FAIL]


# -- sampling and judging growth ---------------------------------------------------------------------


def test_growth_on_one_port_fails_that_port_naming_the_first_sample_it_grew(start, tick, nodes):
    window = start(growing_ports=[GROWING], grow_from_sample=2)
    assert (window.run.kind, window.run.status, window.run.progress_total) == (CheckKind.SOAK, JobStatus.RUNNING, 24)
    assert SoakSample.objects.filter(sweep=0).count() == 24  # the baseline, taken at the start
    tick(T0 + 15 * MIN)  # sample 1
    tick(T0 + 20 * MIN)  # not due: nothing
    tick(T0 + 30 * MIN)  # sample 2: the port's counters start growing
    tick(T0 + 45 * MIN)  # sample 3: still growing
    window.refresh_from_db()
    assert window.sweeps == 4 and SoakSample.objects.count() == 4 * 24
    assert list(SoakSample.objects.order_by().values_list("taken_at", flat=True).distinct().order_by("taken_at")) == [
        T0, T0 + 15 * MIN, T0 + 30 * MIN, T0 + 45 * MIN
    ]
    failed = list(window.run.results.filter(verdict=Verdict.FAIL))
    assert [r.target_key for r in failed] == ["gpu-002:ib3"]
    port = failed[0]
    assert port.port.name == "ib3" and port.device.name == "gpu-002" and port.status == ResultStatus.RUNNING
    growth = port.metrics["growth"]
    assert set(growth) == {"symbol_errors", "effective_physical_errors", "link_error_recovery"}
    assert {g["sweep"] for g in growth.values()} == {2}  # the first sample that grew, not the last
    assert {g["at"] for g in growth.values()} == {(T0 + 30 * MIN).isoformat()}
    before, after = growth["symbol_errors"]["before"], growth["symbol_errors"]["after"]
    assert after == before + 1500
    assert f"symbol errors grew from {before} to {after} at sample 2 (2026-12-01 08:30 UTC)" in fail_texts(port)
    # every other port is untouched so far (verdicts come when the window closes)
    assert not window.run.results.exclude(pk=port.pk).exclude(verdict="").exists()


def test_constant_error_counters_are_not_growth(start, tick, nodes, project):
    """The seeded dirty fiber has non-zero counters at every reading; without growth it does not fail."""
    window = start(growing_ports=[])
    tick(T0 + 15 * MIN)
    tick(T0 + 30 * MIN)
    host, device = plan_faults(sim_cluster_for(project), SEED).dirty_fiber
    dirty = result(window, f"{host}:ib{device.removeprefix('mlx5_')}")
    readings = list(dirty.soak_samples.order_by("sweep").values_list("symbol_errors", flat=True))
    assert len(readings) == 3 and readings[0] > 0 and len(set(readings)) == 1
    assert not window.run.results.filter(verdict=Verdict.FAIL).exists()


def test_by_default_the_simulated_dirty_fiber_keeps_taking_errors(start, tick, nodes, project):
    window = start()
    tick(T0 + 15 * MIN)
    host, device = plan_faults(sim_cluster_for(project), SEED).dirty_fiber
    failed = window.run.results.get(verdict=Verdict.FAIL)
    assert failed.target_key == f"{host}:ib{device.removeprefix('mlx5_')}"
    assert "at sample 1 (2026-12-01 08:15 UTC)" in fail_texts(failed)[0]


def test_the_window_closes_when_it_has_run_its_course(start, tick, nodes):
    window = start(growing_ports=[GROWING], grow_from_sample=1)
    for minutes in (15, 30):
        tick(T0 + minutes * MIN)
    tick(T0 + 72 * 60 * MIN)  # the default 72 hours are over
    window.refresh_from_db()
    run = window.run
    assert (run.status, run.progress_done, run.progress_total) == (JobStatus.DONE, 24, 24)
    assert run.finished_at == T0 + 72 * 60 * MIN
    assert window.sweeps == 3 and window.progress(T0 + 100 * 60 * MIN) == 1.0
    verdicts = dict(run.results.values_list("target_key", "verdict"))
    assert verdicts.pop("gpu-002:ib3") == Verdict.FAIL and set(verdicts.values()) == {Verdict.PASS}
    assert set(run.results.values_list("status", flat=True)) == {ResultStatus.DONE}
    assert "closed after 3 sample(s): the window ran its course; 23 pass, 0 warn, 1 fail, 0 error" in run.log
    tick(T0 + 73 * 60 * MIN)  # closed windows are left alone
    assert SoakSample.objects.count() == 3 * 24


def test_a_node_that_cannot_be_read_is_an_error_not_a_pass(start, tick, nodes):
    window = start(growing_ports=[], down_hosts=["gpu-003"])
    tick(T0 + 15 * MIN)
    tick(T0 + 72 * 60 * MIN)
    unreadable = result(window, "gpu-003:ib0")
    assert unreadable.verdict == Verdict.ERROR and unreadable.status == ResultStatus.ERROR
    assert unreadable.reasons[0]["text"].startswith("counters unreadable at 2 of 2 sample(s): could not run on gpu-003")
    assert result(window, "gpu-001:ib0").verdict == Verdict.PASS
    assert SoakSample.objects.exclude(error="").count() == 2 * 8


def test_a_redelivered_node_task_reads_nothing_twice(start, nodes):
    window = start(growing_ports=[])
    device_id = nodes[0].pk
    tasks.soak_sample_node(window.pk, 0, device_id, T0.isoformat())
    assert SoakSample.objects.count() == 24


def test_a_late_reading_moves_the_failure_back_to_the_sample_that_first_grew(start, committed, nodes):
    """Workers may finish samples out of order: sample 2 recorded after sample 3 still owns the growth."""
    window = start(growing_ports=[GROWING], grow_from_sample=2)
    gpu2 = nodes[1].pk
    for sweep in (1, 2, 3):
        SoakWindow.objects.filter(pk=window.pk).update(sweeps=sweep + 1)
    tasks.soak_sample_node(window.pk, 1, gpu2, (T0 + 15 * MIN).isoformat())
    tasks.soak_sample_node(window.pk, 3, gpu2, (T0 + 45 * MIN).isoformat())
    assert result(window, "gpu-002:ib3").metrics["growth"]["symbol_errors"]["sweep"] == 3
    tasks.soak_sample_node(window.pk, 2, gpu2, (T0 + 30 * MIN).isoformat())
    growth = result(window, "gpu-002:ib3").metrics["growth"]["symbol_errors"]
    assert (growth["sweep"], growth["at"]) == (2, (T0 + 30 * MIN).isoformat())


def test_the_sampling_interval_comes_from_settings(start, tick, nodes, settings):
    settings.SOAK_SAMPLE_INTERVAL_MINUTES = 5
    window = start(growing_ports=[])
    assert window.interval == timedelta(minutes=5)
    tick(T0 + 5 * MIN)
    tick(T0 + 9 * MIN)
    tick(T0 + 10 * MIN)
    window.refresh_from_db()
    assert window.sweeps == 3


# -- starting and stopping ----------------------------------------------------------------------------


def test_one_open_window_per_project_and_stopping_judges_the_readings_so_far(start, tick, committed, nodes,
                                                                           technician):
    window = start(growing_ports=[GROWING], grow_from_sample=1)
    with pytest.raises(ValidationError, match=f"Soak #{window.pk} is open until 2026-12-04 08:00 UTC"):
        start()
    tick(T0 + 15 * MIN)
    soak.soak_window_stop(window=window, user=technician, now=T0 + 20 * MIN)
    window.refresh_from_db()
    assert window.run.status == JobStatus.CANCELLED and window.run.finished_at == T0 + 20 * MIN
    assert round(window.progress(T0 + 60 * 60 * MIN), 4) == round(20 / (72 * 60), 4)
    assert window.run.results.get(verdict=Verdict.FAIL).target_key == "gpu-002:ib3"
    with pytest.raises(ValidationError, match="already cancelled"):
        soak.soak_window_stop(window=window, user=technician)
    assert start(growing_ports=[]).pk != window.pk  # a new window may start now


def test_a_soak_run_is_stopped_from_its_window_not_cancelled_as_a_check_run(start, tick, nodes):
    from validation.services import check_run_cancel, check_run_rerun_failed

    window = start(growing_ports=[GROWING], grow_from_sample=1)
    tick(T0 + 15 * MIN)
    for refused in (check_run_cancel, lambda run: check_run_rerun_failed(run=run)):
        with pytest.raises(ValidationError, match="start and stop it from the soak page"):
            refused(run=window.run) if refused is check_run_cancel else refused(window.run)
    window.refresh_from_db()
    assert window.run.status == JobStatus.RUNNING and not window.run.reruns.exists()


def test_customers_cannot_start_or_stop_a_soak(project, customer, technician, nodes, committed):
    with pytest.raises(PermissionDenied):
        soak.soak_window_start(project=project, user=customer)
    window = committed(soak.soak_window_start, project=project, user=technician, options={"growing_ports": []})
    with pytest.raises(PermissionDenied):
        soak.soak_window_stop(window=window, user=customer)


@pytest.mark.parametrize(
    ("runner", "options", "field"),
    [
        (RunnerKind.SSH, {"growing_ports": ["gpu-001:mlx5_0"]}, "options.growing_ports"),
        (RunnerKind.SIMULATED, {"growing_ports": ["gpu-001"]}, "options.growing_ports"),
        (RunnerKind.SIMULATED, {"seed": -1}, "options.seed"),
        (RunnerKind.LOCAL, {}, "runner"),
    ],
)
def test_bad_soak_settings_are_refused_naming_the_field(project, technician, nodes, runner, options, field):
    with pytest.raises(ValidationError) as refused:
        soak.soak_window_start(project=project, user=technician, runner=runner, options=options)
    assert field in refused.value.message_dict
    assert not SoakWindow.objects.exists()


def test_a_project_without_gpu_nodes_has_nothing_to_soak(project, technician):
    with pytest.raises(ValidationError, match="Nothing to soak"):
        soak.soak_window_start(project=project, user=technician)


# -- beat, selectors ----------------------------------------------------------------------------------


def test_beat_schedule_sends_the_soak_tick():
    from bringup.celery import app

    entry = app.conf.beat_schedule["soak-sample-due-windows"]
    assert entry["task"] == tasks.soak_tick.name == "validation.tasks.soak_tick"
    assert entry["schedule"] > 0


def test_series_and_failures_for_the_pages_and_charts(start, tick, nodes, technician, outsider):
    window = start(growing_ports=[GROWING], grow_from_sample=2)
    for minutes in (15, 30):
        tick(T0 + minutes * MIN)
    grown = result(window, "gpu-002:ib3")
    series = soak.soak_series(user=technician, window=window, result_ids=[grown.pk])
    assert list(series) == ["gpu-002:ib3"]
    points = series["gpu-002:ib3"]
    assert [p["sweep"] for p in points] == [0, 1, 2]
    assert points[2]["symbol_errors"] - points[1]["symbol_errors"] == 1500
    assert points[1]["symbol_errors"] == points[0]["symbol_errors"]
    assert len(soak.soak_series(user=technician, window=window)) == 24
    assert soak.soak_series(user=outsider, window=window) == {}
    assert [r.target_key for r in soak.soak_failures(user=technician, window=window)] == ["gpu-002:ib3"]
    assert soak.soak_failures(user=outsider, window=window) == []


# -- pages --------------------------------------------------------------------------------------------


def test_soak_pages_show_progress_and_the_failed_port(project, technician, tick, committed, nodes, client_for,
                                                      customer):
    began = timezone.now().replace(microsecond=0) - timedelta(hours=36)  # half of the 72 hours gone
    window = committed(soak.soak_window_start, project=project, user=technician, now=began,
                       options={"growing_ports": [GROWING], "grow_from_sample": 1})
    tick(began + 15 * MIN)
    client = client_for(customer)
    body = client.get(reverse("uploads:soak-list", args=["ACME-72"])).content.decode()
    assert f'<tr data-window="{window.pk}" class="flagged">' in body and 'id="soak-start"' not in body
    assert '<progress value="50" max="100"' in body
    body = client.get(reverse("uploads:soak-detail", args=["ACME-72", window.pk])).content.decode()
    when = timezone.localtime(began + 15 * MIN).strftime("%Y-%m-%d %H:%M %Z")
    assert 'data-port="gpu-002:ib3"' in body and f"at sample 1 ({when})" in body


def test_a_technician_starts_and_stops_a_soak_on_the_page(client_for, technician, nodes, committed):
    client = client_for(technician)
    assert 'id="soak-start"' in client.get(reverse("uploads:soak-list", args=["ACME-72"])).content.decode()
    response = committed(
        client.post, reverse("uploads:soak-start", args=["ACME-72"]), {"duration_hours": "2", "runner": "simulated"}
    )
    window = SoakWindow.objects.get()
    assert response.status_code == 302 and response.url == reverse("uploads:soak-detail", args=["ACME-72", window.pk])
    assert window.duration == timedelta(hours=2) and window.sweeps == 1 and window.started_by == technician
    body = client.get(reverse("uploads:soak-detail", args=["ACME-72", window.pk])).content.decode()
    assert "Stop now" in body
    response = client.post(reverse("uploads:soak-stop", args=["ACME-72", window.pk]))
    assert response.status_code == 302
    window.refresh_from_db()
    assert window.run.status == JobStatus.CANCELLED


def test_soak_pages_refuse_outsiders_with_404_and_customers_writes_with_403(start, client_for, outsider, customer,
                                                                            nodes):
    window = start(growing_ports=[])
    outside = client_for(outsider)
    for name, args in [("soak-list", []), ("soak-detail", [window.pk])]:
        assert outside.get(reverse(f"uploads:{name}", args=["ACME-72", *args])).status_code == 404
    for name, args in [("soak-start", []), ("soak-stop", [window.pk])]:
        assert outside.post(reverse(f"uploads:{name}", args=["ACME-72", *args])).status_code == 404
    member = client_for(customer)
    assert member.post(reverse("uploads:soak-start", args=["ACME-72"]), {"duration_hours": "1"}).status_code == 403
    assert member.post(reverse("uploads:soak-stop", args=["ACME-72", window.pk])).status_code == 403
    window.refresh_from_db()
    assert window.is_open and SoakWindow.objects.count() == 1


def test_soak_list_query_count_does_not_grow(project, technician, client_for, committed, nodes,
                                             django_assert_num_queries):
    def add_windows(count):
        for _ in range(count):
            window = committed(soak.soak_window_start, project=project, user=technician,
                               options={"growing_ports": []})
            soak.soak_window_stop(window=window, user=technician)

    client = client_for(technician)
    url = reverse("uploads:soak-list", args=["ACME-72"])
    add_windows(1)
    client.get(url)
    few = count_queries(lambda: client.get(url))
    add_windows(4)
    with django_assert_num_queries(few):
        body = client.get(url).content.decode()
    assert body.count("<tr data-window=") == 5
