"""Objects for the access matrix (a test that walks every /p/<code>/ page and API endpoint as anonymous,
outsider, customer, technician and manager): for every URL name of the `inventory:` and `imports:`
namespaces, and every route of the inventory API basenames (keyed "api:<url name>"), the URL
kwargs besides the project `code` that name an object of `project`. A few rows, made as the app makes
them (device_create gives the device its NIC and port)."""

from __future__ import annotations

from django.core.files.base import ContentFile

from inventory.choices import PortKind
from inventory.models import ImportJob, NicTemplate, PortTemplate
from inventory.services import device_create, optic_install
from tests.factories import HardwareModelFactory, OpticFactory, RackFactory


def samples(project) -> dict[str, dict]:
    rack = RackFactory(project=project)
    model = HardwareModelFactory()
    nic_template = NicTemplate.objects.create(hardware_model=model, slot="nic0", model="ConnectX-8")
    PortTemplate.objects.create(hardware_model=model, nic_template=nic_template, name="ib0",
                                kind=PortKind.INFINIBAND, speed_gbps=800)
    device = device_create(project=project, hardware_model=model, name="sample-1", rack=rack, position_u=1)
    port = device.ports.get()
    optic = optic_install(optic=OpticFactory(project=project), port=port)
    job = ImportJob(project=project, original_name="racks.csv")
    job.file.save("racks.csv", ContentFile(b"site,name,row,position,power_budget_w\n"), save=False)
    job.save()

    pages = {
        "inventory:rack-list": {}, "inventory:rack-detail": {"pk": rack.pk},
        "inventory:device-list": {}, "inventory:device-detail": {"pk": device.pk},
        "inventory:device-edit": {"pk": device.pk},
        "inventory:optic-list": {}, "inventory:optic-detail": {"pk": optic.pk},
        "imports:page": {}, "imports:export": {},
        "imports:job": {"pk": job.pk}, "imports:job-confirm": {"pk": job.pk},
    }
    rows = {
        "site": rack.site, "rack": rack, "hardware-model": model, "device": device, "nic": device.nics.get(),
        "port": port, "optic": optic,
    }
    api = {f"api:{basename}-list": {} for basename in rows}
    api |= {f"api:{basename}-detail": {"pk": row.pk} for basename, row in rows.items()}
    return pages | api
