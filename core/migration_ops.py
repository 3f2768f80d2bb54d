"""Operations that migrations of several apps share."""

from django.db import migrations
from django.db.models import Case, F, Value, When


def remap_statuses(app_label: str, model_name: str, forward: dict[str, str], backward: dict[str, str]):
    """A RunPython that renames status values in one UPDATE each way (for a model moving onto the
    job row's JobStatus, keeping its rows)."""

    def remap(mapping: dict[str, str]):
        def run(apps, schema_editor):
            model = apps.get_model(app_label, model_name)
            renamed = Case(*(When(status=old, then=Value(new)) for old, new in mapping.items()), default=F("status"))
            model._default_manager.filter(status__in=list(mapping)).update(status=renamed)

        return run

    return migrations.RunPython(remap(forward), remap(backward))
