"""factory-boy factories for the models tests build. Devices are made with the real service
(inventory.services.device_create), so their NICs, ports and lanes come from the templates."""

import factory
from django.contrib.auth import get_user_model

from inventory.choices import FormFactor, HardwareKind, Network, PortKind
from inventory.models import HardwareModel, NicTemplate, Optic, PortTemplate, Rack, Site
from projects.choices import Role
from projects.models import Membership, Project


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ["username"]

    username = factory.Sequence(lambda n: f"user{n}")
    password = factory.django.Password("pw-for-tests-1")


class ProjectFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Project

    code = factory.Sequence(lambda n: f"PRJ-{n:03d}")
    name = factory.Sequence(lambda n: f"Cluster {n}")
    customer_name = "Example AI Lab"
    site = "DC1 Hall 2"


class MembershipFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Membership

    user = factory.SubFactory(UserFactory)
    project = factory.SubFactory(ProjectFactory)
    role = Role.TECHNICIAN


class SiteFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Site

    project = factory.SubFactory(ProjectFactory)
    name = factory.Sequence(lambda n: f"Hall {n}")


class RackFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Rack

    project = factory.SubFactory(ProjectFactory)
    site = factory.LazyAttribute(lambda o: SiteFactory(project=o.project))
    name = factory.Sequence(lambda n: f"R{n:03d}")
    row = "A"
    position = factory.Sequence(lambda n: n + 1)
    height_u = 48
    power_budget_w = 40000


class HardwareModelFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = HardwareModel

    vendor = "Generic"
    model = factory.Sequence(lambda n: f"Box {n}")
    part_number = factory.Sequence(lambda n: f"PN-{n:05d}")
    kind = HardwareKind.OTHER
    height_u = 1
    max_power_w = 500


def gpu_server_model(
    *, nics: int = 8, part_number: str = "TEST-B300-8GPU", lanes: int = 4, bmc: bool = True,
    model_name: str = "B300 8-GPU",
) -> HardwareModel:
    """A B300-like GPU server: `nics` ConnectX-8 NICs, each with one 800G XDR port split into `lanes` plane
    lanes (4 x 200G, or 2 x 400G for the dual-plane reference fabric), plus a BMC port."""
    model, created = HardwareModel.objects.get_or_create(
        part_number=part_number,
        defaults=dict(vendor="Example", model=model_name, kind=HardwareKind.GPU_SERVER, height_u=10,
                      max_power_w=14300),
    )
    if created:
        for i in range(nics):
            nic = NicTemplate.objects.create(hardware_model=model, slot=f"nic{i}", model="ConnectX-8 SuperNIC",
                                             part_number="900-9X81Q-00CN-ST0")
            PortTemplate.objects.create(
                hardware_model=model, nic_template=nic, name=f"ib{i}", kind=PortKind.INFINIBAND, speed_gbps=800,
                network=Network.COMPUTE, breakout_lanes=lanes, lane_speed_gbps=800 // lanes, planes_per_lane=True,
            )
        if bmc:
            PortTemplate.objects.create(hardware_model=model, name="bmc", kind=PortKind.BMC, speed_gbps=1,
                                        network=Network.OOB)
    return model


class OpticFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Optic

    project = factory.SubFactory(ProjectFactory)
    vendor = "NVIDIA"
    part_number = "980-9I693-00NS00"
    serial = factory.Sequence(lambda n: f"MT{n:08d}")
    form_factor = FormFactor.OSFP
    speed_gbps = 800
