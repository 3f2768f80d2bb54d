"""Review fixes: optics recorded in a port but not installed are taken out (0005 then makes the database
refuse that state); positions start at 1; a NIC with ports cannot be deleted on its own (RESTRICT)."""

import django.core.validators
import django.db.models.deletion
from django.db import migrations, models

INSTALLED = "installed"  # OpticStatus.INSTALLED, frozen here as migrations must not import app code


def take_out_optics_marked_not_installed(apps, schema_editor):
    """Rows the old rule let through: a port and a status other than installed. The status is the later,
    explicit statement (the API let a status-only edit keep the port), so the port is the one cleared."""
    Optic = apps.get_model("inventory", "Optic")
    Optic.objects.filter(port__isnull=False).exclude(status=INSTALLED).update(port=None)


class Migration(migrations.Migration):

    dependencies = [
        ("delivery", "0001_initial"),
        ("inventory", "0003_constraint_messages"),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name="optic",
            name="optic_installed_has_port",
        ),
        migrations.RunPython(take_out_optics_marked_not_installed, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="device",
            name="position_u",
            field=models.PositiveSmallIntegerField(
                blank=True, help_text="Lowest rack unit the device occupies, from 1 at the bottom.", null=True,
                validators=[django.core.validators.MinValueValidator(1)], verbose_name="position (U)",
            ),
        ),
        migrations.AlterField(
            model_name="historicaldevice",
            name="position_u",
            field=models.PositiveSmallIntegerField(
                blank=True, help_text="Lowest rack unit the device occupies, from 1 at the bottom.", null=True,
                validators=[django.core.validators.MinValueValidator(1)], verbose_name="position (U)",
            ),
        ),
        migrations.AlterField(
            model_name="historicalrack",
            name="position",
            field=models.PositiveSmallIntegerField(
                help_text="Position in the row, from 1.", validators=[django.core.validators.MinValueValidator(1)]
            ),
        ),
        migrations.AlterField(
            model_name="rack",
            name="position",
            field=models.PositiveSmallIntegerField(
                help_text="Position in the row, from 1.", validators=[django.core.validators.MinValueValidator(1)]
            ),
        ),
        migrations.AlterField(
            model_name="port",
            name="nic",
            field=models.ForeignKey(
                blank=True, null=True, on_delete=django.db.models.deletion.RESTRICT, related_name="ports",
                to="inventory.nic",
            ),
        ),
    ]
