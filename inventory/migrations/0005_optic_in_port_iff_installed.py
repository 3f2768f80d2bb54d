"""An optic is in a port exactly when it is installed, both ways, in the database. Its own migration, after
0004 has fixed the rows, so PostgreSQL adds the constraint in a transaction that updated no rows."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("inventory", "0004_review_fixes"),
    ]

    operations = [
        migrations.AddConstraint(
            model_name="optic",
            constraint=models.CheckConstraint(
                condition=models.Q(models.Q(("port__isnull", False), ("status", "installed")),
                                   models.Q(models.Q(("status", "installed"), _negated=True), ("port__isnull", True)),
                                   _connector="OR"),
                name="optic_in_port_iff_installed",
                violation_error_message="An optic is in a port exactly when it is installed.",
            ),
        ),
    ]
