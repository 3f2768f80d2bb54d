"""Cable.fabric_verified_at: when the topology comparison that verified a cable by the fabric's word ran.
The burn-up dated those cables by fabric_checked_at, which every comparison moves to its own time; it now
reads this field, which only a move into verified sets.

The cables verified by the fabric's word before this field existed (verified, no verified_at: the marker the
services use) are dated by their history: the first row of their current run of "verified" rows is the
comparison that verified them (its history rows carry its time). fabric_checked_at, the latest comparison,
is the date when it is earlier (the demo backdates it, not the history) or when no history row says more."""

from collections import defaultdict

from django.db import migrations, models

VERIFIED = "verified"  # CableStatus.VERIFIED, frozen here as migrations must not import app code
CHUNK = 2000  # ids per statement
HELP_TEXT = ("When the topology comparison that verified it by the fabric's word ran; cleared when it leaves "
             "verified or a scan verifies it.")


def _verified_since(HistoricalCable, cables) -> dict:
    """{cable id: history_date of the first row of its latest unbroken run of verified rows}."""
    since = {}
    rows = (HistoricalCable.objects.filter(id__in=cables.values("pk")).order_by("id", "history_date", "history_id")
            .values_list("id", "status", "history_date"))
    for pk, status, at in rows.iterator(chunk_size=CHUNK):
        if status == VERIFIED:
            since.setdefault(pk, at)
        else:  # out of verified: the run that counts starts later
            since.pop(pk, None)
    return since


def date_fabric_verified_cables(apps, schema_editor):
    Cable = apps.get_model("cabling", "Cable")
    cables = Cable.objects.filter(status=VERIFIED, verified_at__isnull=True, fabric_checked_at__isnull=False)
    since = _verified_since(apps.get_model("cabling", "HistoricalCable"), cables)
    by_date = defaultdict(list)  # a comparison dates all the cables it verified: few distinct dates
    for pk, checked_at in cables.values_list("pk", "fabric_checked_at").iterator(chunk_size=CHUNK):
        by_date[min(checked_at, since.get(pk, checked_at))].append(pk)
    for at, ids in by_date.items():
        for start in range(0, len(ids), CHUNK):
            Cable.objects.filter(pk__in=ids[start : start + CHUNK]).update(fabric_verified_at=at)


class Migration(migrations.Migration):

    dependencies = [
        ("cabling", "0008_swaps"),
    ]

    operations = [
        migrations.AddField(
            model_name="cable",
            name="fabric_verified_at",
            field=models.DateTimeField(blank=True, help_text=HELP_TEXT, null=True),
        ),
        migrations.AddField(
            model_name="historicalcable",
            name="fabric_verified_at",
            field=models.DateTimeField(blank=True, help_text=HELP_TEXT, null=True),
        ),
        migrations.RunPython(date_fabric_verified_cables, migrations.RunPython.noop),
    ]
