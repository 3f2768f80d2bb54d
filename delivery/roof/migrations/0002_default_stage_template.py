from django.db import migrations

from delivery.roof.stage_data import DEFAULT_STAGES, DEFAULT_TEMPLATE_DESCRIPTION, DEFAULT_TEMPLATE_NAME


def load_default_template(apps, schema_editor):
    StageTemplate = apps.get_model("roof", "StageTemplate")
    StageTemplate.objects.get_or_create(
        name=DEFAULT_TEMPLATE_NAME,
        defaults={"description": DEFAULT_TEMPLATE_DESCRIPTION, "stages": DEFAULT_STAGES},
    )


class Migration(migrations.Migration):
    dependencies = [("roof", "0001_initial")]

    operations = [migrations.RunPython(load_default_template, migrations.RunPython.noop)]
