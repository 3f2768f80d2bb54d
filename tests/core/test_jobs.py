"""The job row's lifecycle, the one claim helper and progress a poller sees, on a real job model
(an inventory import; every job model shares the abstract row)."""

import ast
import importlib
import threading
from pathlib import Path

import pytest
from django.core.exceptions import ValidationError
from django.core.files.base import ContentFile
from django.db import connection, connections, transaction

from core.choices import JobStatus
from core.jobs import enqueue_on_commit, job_models, job_queue, job_status, progress_reporter
from inventory.models import ImportJob

pytestmark = pytest.mark.django_db


def make_job(project, **fields) -> ImportJob:
    job = ImportJob(project=project, original_name="racks.csv", **fields)
    job.file.save("racks.csv", ContentFile(b"name\n"), save=False)
    job.save()
    return job


def test_start_is_won_once(project):
    job = make_job(project)
    assert job.start(step="reading", total=10)
    again = ImportJob.objects.get(pk=job.pk)
    assert not again.start()  # a redelivered task finds it running and leaves it
    job.refresh_from_db()
    assert (job.status, job.progress_step, job.progress_total) == (JobStatus.RUNNING, "reading", 10)
    assert job.started_at is not None


def test_advance_counts_by_one_statement_from_many_workers(project):
    job = make_job(project, status=JobStatus.RUNNING, progress_total=20)
    copies = [ImportJob.objects.get(pk=job.pk) for _ in range(4)]
    for copy in copies:  # each worker holds a stale copy: the count must still add up
        copy.advance(by=5)
    job.refresh_from_db()
    assert job.progress_done == 20


def test_finish_reports_the_whole_progress_and_settles(project):
    job = make_job(project, status=JobStatus.RUNNING, progress_total=7, progress_done=3)
    assert job.finish(status=JobStatus.WAITING, summary={"counts": {"racks": 1}})
    job.refresh_from_db()
    assert (job.status, job.progress_done, job.summary) == (JobStatus.WAITING, 7, {"counts": {"racks": 1}})
    assert job.is_settled and not job.is_finished and job.finished_at is not None
    assert job.status_label == "Ready to confirm"  # the model's own words
    assert not job.finish()  # not active any more: nothing changes


def test_fail_keeps_the_reasons(project):
    job = make_job(project, status=JobStatus.RUNNING)
    assert job.fail("the file is empty")
    job.refresh_from_db()
    assert (job.status, job.errors) == (JobStatus.FAILED, ["the file is empty"])


def test_append_log_keeps_every_writer_s_lines(project):
    job = make_job(project)
    ImportJob.objects.get(pk=job.pk).append_log("first")
    ImportJob.objects.get(pk=job.pk).append_log("second")
    job.refresh_from_db()
    lines = job.log.splitlines()
    assert [line.split(" ", 2)[2] for line in lines] == ["first", "second"]


def test_job_queue_claims_once_and_enqueues_after_commit(project, django_capture_on_commit_callbacks):
    job = make_job(project, status=JobStatus.WAITING)
    with django_capture_on_commit_callbacks() as callbacks:
        job_queue(job, task="inventory.tasks.apply_import_job", from_statuses={JobStatus.WAITING},
                  refused="not waiting")
        with pytest.raises(ValidationError, match="not waiting"):
            job_queue(ImportJob.objects.get(pk=job.pk), task="inventory.tasks.apply_import_job",
                      from_statuses={JobStatus.WAITING}, refused="not waiting")
    assert len(callbacks) == 1
    assert ImportJob.objects.get(pk=job.pk).status == JobStatus.QUEUED


def test_a_task_is_sent_after_commit_with_its_countdown(project, django_capture_on_commit_callbacks, monkeypatch):
    from celery import current_app

    current_app.loader.import_default_modules()
    task = current_app.tasks["delivery.tasks.gates_recompute_task"]
    sent = []
    monkeypatch.setattr(task, "apply_async", lambda args, countdown=None: sent.append((args, countdown)))
    with django_capture_on_commit_callbacks(execute=True):
        enqueue_on_commit("delivery.tasks.gates_recompute_task", project.pk, countdown=5)
        enqueue_on_commit("delivery.tasks.gates_recompute_task", project.pk)
        assert sent == []  # nothing before commit
    assert sent == [((project.pk,), 5), ((project.pk,), None)]


def test_an_unknown_task_name_fails_loudly(project, django_capture_on_commit_callbacks):
    with pytest.raises(KeyError), django_capture_on_commit_callbacks(execute=True):
        enqueue_on_commit("inventory.tasks.no_such_task", 1)


SENDERS = ("enqueue_on_commit", "job_queue")
APP_PACKAGES = ("core", "projects", "inventory", "cabling", "validation", "delivery", "demo")


def _module_strings(tree) -> dict[str, str]:
    """The module-level names bound to a string constant (RENDER_TASK = "...")."""
    return {target.id: node.value.value for node in tree.body if isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
            for target in node.targets if isinstance(target, ast.Name)}


def _imported_names(tree) -> dict[str, str]:
    """Names imported from another module: name -> that module's dotted path."""
    return {alias.asname or alias.name: node.module for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module for alias in node.names}


def _task_argument(call: ast.Call):
    """What a call of a sender passes as the task's name: its first argument or its `task` keyword."""
    keyword = next((k.value for k in call.keywords if k.arg == "task"), None)
    if keyword is not None:
        return keyword
    return call.args[0] if call.args and getattr(call.func, "id", getattr(call.func, "attr", "")) != "job_queue" \
        else None


def sent_task_names() -> tuple[set[str], list[str]]:
    """Every task name a module of the apps sends by name, each argument resolved to its string (a literal, a
    constant of the module, or one it imports); and the call sites whose argument could not be resolved."""
    root = Path(__file__).resolve().parents[2]
    names, unresolved = set(), []
    for package in APP_PACKAGES:
        for path in (root / package).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            tree = ast.parse(path.read_text())
            constants, imported = _module_strings(tree), _imported_names(tree)
            for node in ast.walk(tree):
                if not (isinstance(node, ast.Call)
                        and getattr(node.func, "id", getattr(node.func, "attr", "")) in SENDERS):
                    continue
                argument = _task_argument(node)
                if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                    names.add(argument.value)
                elif isinstance(argument, ast.Name) and argument.id in constants:
                    names.add(constants[argument.id])
                elif isinstance(argument, ast.Name) and argument.id in imported:
                    names.add(getattr(importlib.import_module(imported[argument.id]), argument.id))
                elif not (path.name == "jobs.py" and package == "core"):  # job_queue hands its own argument on
                    unresolved.append(f"{path.relative_to(root)}:{node.lineno}")
    return names, unresolved


def test_every_task_a_service_sends_by_name_is_registered():
    """Services send tasks by name (core.jobs): a name with a typo would only fail after commit."""
    from bringup.celery import app

    names, unresolved = sent_task_names()
    assert not unresolved, f"task names this test cannot read (use a module constant): {unresolved}"
    # Every kind of long work sends its task by name: a walk that found none would prove nothing.
    assert {"delivery.tasks.gates_recompute_task", "validation.tasks.check_run_dispatch",
            "cabling.tasks.apply_fabric_plan", "inventory.tasks.apply_import_job"} <= names
    app.loader.import_default_modules()
    missing = {name for name in names if name not in app.tasks}
    assert not missing, f"tasks sent by name but not registered: {sorted(missing)}"


def test_the_walk_reads_a_misspelt_task_name(monkeypatch, tmp_path):
    """The check above would catch a typo: a name sent by a constant is found, and is not registered."""
    from bringup.celery import app

    planted = "delivery.tasks.gates_recompute_tsak"
    assert planted not in app.tasks
    names, _ = sent_task_names()
    monkeypatch.setattr("tests.core.test_jobs._module_strings",
                        lambda tree: {**_real_module_strings(tree), "RECOMPUTE_TASK": planted})
    misspelt, _ = sent_task_names()
    assert planted in misspelt and planted not in names


_real_module_strings = _module_strings


def test_status_payload_has_the_same_keys_for_every_job_model(project):
    job = make_job(project, status=JobStatus.RUNNING, progress_total=4, progress_done=1, progress_step="rows")
    payload = job_status(job)
    assert payload["type"] == "inventory.importjob"
    assert (payload["done"], payload["total"], payload["percent"], payload["finished"]) == (1, 4, 25, False)
    assert payload["status_label"] == "Running (rows)"
    assert "inventory.importjob" in job_models()


@pytest.mark.django_db(transaction=True)
def test_progress_inside_an_open_transaction_is_seen_by_the_poller(project):
    """On PostgreSQL the report goes through its own connection, so a page polling from another
    connection sees it while the job's transaction is still open. (SQLite has one writer: there the
    reporter writes on the same connection and the progress shows at commit.)"""
    job = make_job(project, status=JobStatus.RUNNING)
    seen = {}

    def poll():
        seen["done"] = ImportJob.objects.get(pk=job.pk).progress_done
        connections.close_all()

    with transaction.atomic():
        with progress_reporter(job) as report:
            report(5, total=9, step="cables")
            if connection.vendor == "postgresql":
                poller = threading.Thread(target=poll)
                poller.start()
                poller.join()
    job.refresh_from_db()
    assert (job.progress_done, job.progress_total, job.progress_step) == (5, 9, "cables")
    if connection.vendor == "postgresql":
        assert seen["done"] == 5
