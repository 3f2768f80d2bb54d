"""The access matrix's samples for projects (tests/access_world.py): the projects, memberships and job
status routes of the API."""

from __future__ import annotations

from core.jobs import job_models
from projects.choices import Role
from tests.factories import MembershipFactory


def any_job(project):
    """A job row of the project, of whichever kind the other apps' samples made first (they run before
    these: tests.access_world.collect_samples)."""
    for model in job_models().values():
        job = model._default_manager.filter(**{model.project_path: project}).order_by("pk").first()
        if job is not None:
            return job
    return None


def samples(project) -> dict[str, dict]:
    membership = MembershipFactory(project=project, role=Role.CUSTOMER)
    found = {
        "api:project-list": {},
        "api:project-detail": {"code": project.code},
        "api:membership-list": {},
        "api:membership-detail": {"pk": membership.pk},
    }
    job = any_job(project)
    if job is not None:
        found["api:api-job-status"] = {"job_type": job.job_type, "pk": job.pk}
    return found
