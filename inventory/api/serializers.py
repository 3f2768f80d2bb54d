"""Serializers of the inventory API.

Rows name their relations the way people do: a project by code, a site or rack by name within the
row's own project, a hardware model by part number. A rack of another project is simply not found in
this one, so a payload cannot link across projects, and an outsider learns nothing from the error.
Ports, NICs and optics point at devices and ports by id, because those names are only unique within a
project or a device.

Writes run the model's full_clean() (devices and optics go through inventory.services). A refusal rises
as Django's ValidationError and the API's exception handler (core.api.exceptions) makes it the one 400
shape; django_errors_as_400 around a save also blames a unique rule lost to a race on its field, so
that is a 400 too, never a 500.
"""

from __future__ import annotations

from django.db import transaction
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.api.exceptions import django_errors_as_400
from core.api.fields import NaturalKeyField, named_enum_field
from inventory import services
from inventory.choices import HardwareKind, OpticStatus, PortKind
from inventory.models import (
    Device,
    HardwareModel,
    Nic,
    NicTemplate,
    Optic,
    Port,
    PortTemplate,
    Rack,
    Site,
)
from inventory.selectors import is_power_flagged, power_headroom
from projects.access import scope_to_user, visible_projects
from projects.api.fields import VisibleProjectField
from projects.models import Project

HardwareKindField = named_enum_field(HardwareKind)
PortKindField = named_enum_field(PortKind)


# The browsable API renders related fields as a text box, not a <select> of every row the user can see:
# a project has thousands of ports, and an unbound create form has no project to list racks from.
TEXT_INPUT = {"base_template": "input.html"}


class InProjectSlugField(NaturalKeyField):
    """A related row named by its natural key, looked up only within the project of the row being
    written (the parent serializer's target_project())."""

    def __init__(self, **kwargs):
        kwargs.setdefault("style", TEXT_INPUT)
        super().__init__(**kwargs)

    def get_queryset(self):
        project = self.parent.target_project()
        queryset = super().get_queryset()
        return queryset.filter(project=project) if project is not None else queryset.none()


class CleanModelSerializer(serializers.ModelSerializer):
    """Plain writes through the model's full_clean(), so the model's own rules answer with a 400."""

    def get_validators(self):
        # DRF would check multi-column unique constraints with a non-field "must make a unique set";
        # validate() checks them instead, with a message on the field the user should change.
        return []

    def create(self, validated_data):
        return self.save_clean(self.Meta.model(**validated_data))

    def update(self, instance, validated_data):
        for name, value in validated_data.items():
            setattr(instance, name, value)
        return self.save_clean(instance)

    def save_clean(self, instance):
        with django_errors_as_400(self.fields), transaction.atomic():
            instance.full_clean()
            instance.save()
        return instance

    def unchanged_on_update(self, attrs, field: str, message: str) -> None:
        if self.instance is not None and field in attrs and attrs[field] != getattr(self.instance, field):
            raise serializers.ValidationError({field: message})

    def refuse_duplicate(self, attrs, queryset, field: str, message: str) -> None:
        """A field-named 400 for a unique rule, before the database would refuse the row."""
        value = attrs.get(field, getattr(self.instance, field, None))
        if value in (None, ""):
            return
        if self.instance is not None:
            queryset = queryset.exclude(pk=self.instance.pk)
        if queryset.filter(**{field: value}).exists():
            raise serializers.ValidationError({field: message.format(value=value)})


class ProjectRowSerializer(CleanModelSerializer):
    """Rows owned directly by a project (sites, racks, devices, optics). The project is given by code
    on create and cannot change afterwards."""

    project = VisibleProjectField()

    def target_project(self) -> Project | None:
        """The project this write lands in: the row's own on update, the payload's on create; None for
        an unbound serializer (the browsable API's empty create form has no payload yet)."""
        if self.instance is not None:
            return self.instance.project
        if not hasattr(self, "initial_data"):
            return None
        if not hasattr(self, "_target_project"):
            code = self.initial_data.get("project") if hasattr(self.initial_data, "get") else None
            user = self.context["request"].user
            self._target_project = visible_projects(user).filter(code=code).first() if code else None
        return self._target_project

    def validate(self, attrs):
        self.unchanged_on_update(attrs, "project", "A row cannot move to another project.")
        return attrs

    def siblings(self, model):
        """Rows of the same model in the target project, for uniqueness checks."""
        return model.objects.filter(project=self.target_project())


class SiteSerializer(ProjectRowSerializer):
    class Meta:
        model = Site
        fields = ["id", "project", "name", "address"]

    def validate(self, attrs):
        attrs = super().validate(attrs)
        self.refuse_duplicate(
            attrs, self.siblings(Site), "name", "A site named {value} already exists in this project."
        )
        return attrs


class RackSerializer(ProjectRowSerializer):
    site = InProjectSlugField(
        slug_field="name", queryset=Site.objects.all(),
        error_messages={"does_not_exist": "No site named “{value}” in this project."},
    )
    device_count = serializers.IntegerField(read_only=True)
    power_used_w = serializers.IntegerField(
        read_only=True, help_text="Sum of the devices' nameplate maximum, in W."
    )
    headroom = serializers.SerializerMethodField(help_text="Share of the budget left free (0.25 = 25%).")
    power_flagged = serializers.SerializerMethodField(help_text="Less headroom than the 20% rule asks.")

    class Meta:
        model = Rack
        fields = [
            "id", "project", "site", "name", "row", "position", "height_u", "status",
            "power_budget_w", "power_used_w", "headroom", "power_flagged", "device_count",
        ]

    @extend_schema_field(serializers.FloatField(allow_null=True))
    def get_headroom(self, rack) -> float | None:
        return power_headroom(used_w=rack.power_used_w, budget_w=rack.power_budget_w)

    def get_power_flagged(self, rack) -> bool:
        return is_power_flagged(used_w=rack.power_used_w, budget_w=rack.power_budget_w)

    def validate(self, attrs):
        attrs = super().validate(attrs)
        self.refuse_duplicate(
            attrs, self.siblings(Rack), "name", "A rack named {value} already exists in this project."
        )
        site = attrs.get("site", getattr(self.instance, "site", None))
        row = attrs.get("row", getattr(self.instance, "row", None))
        self.refuse_duplicate(
            attrs, Rack.objects.filter(site=site, row=row), "position",
            "Position {value} of this row is already taken by another rack.",
        )
        return attrs


class NicTemplateSerializer(serializers.ModelSerializer):
    class Meta:
        model = NicTemplate
        fields = ["slot", "model", "part_number"]


class PortTemplateSerializer(serializers.ModelSerializer):
    kind = PortKindField(choices=PortKind.choices, read_only=True)
    nic_slot = serializers.CharField(
        source="nic_template.slot", read_only=True, allow_null=True
    )

    class Meta:
        model = PortTemplate
        fields = [
            "name", "kind", "speed_gbps", "network", "breakout_lanes", "lane_speed_gbps", "planes_per_lane",
            "nic_slot",
        ]


class HardwareModelSerializer(CleanModelSerializer):
    kind = HardwareKindField(choices=HardwareKind.choices)
    port_count = serializers.IntegerField(read_only=True, help_text="Physical port templates.")

    class Meta:
        model = HardwareModel
        fields = ["id", "vendor", "model", "part_number", "kind", "height_u", "max_power_w", "is_full_depth",
                  "port_count"]


class HardwareModelDetailSerializer(HardwareModelSerializer):
    """The catalogue entry with the NICs and ports a device of this model gets (edited in the admin)."""

    nic_templates = NicTemplateSerializer(many=True, read_only=True)
    port_templates = PortTemplateSerializer(many=True, read_only=True)

    class Meta(HardwareModelSerializer.Meta):
        fields = HardwareModelSerializer.Meta.fields + ["nic_templates", "port_templates"]


class DeviceSerializer(ProjectRowSerializer):
    hardware_model = NaturalKeyField(slug_field="part_number", queryset=HardwareModel.objects.all())
    rack = InProjectSlugField(
        slug_field="name", queryset=Rack.objects.all(), required=False, allow_null=True,
        error_messages={"does_not_exist": "No rack named “{value}” in this project."},
    )
    port_count = serializers.IntegerField(read_only=True, help_text="Physical ports (lanes not counted).")
    lane_count = serializers.IntegerField(read_only=True, help_text="Breakout lanes.")

    class Meta:
        model = Device
        fields = [
            "id", "project", "name", "hardware_model", "rack", "position_u", "face", "role", "serial",
            "asset_tag", "oob_address", "status", "port_count", "lane_count",
        ]
        extra_kwargs = {"position_u": {"min_value": 1}}

    def validate(self, attrs):
        attrs = super().validate(attrs)
        # Its NICs and ports were made from the model's templates; another model needs a new device.
        self.unchanged_on_update(
            attrs, "hardware_model", "The hardware model of an existing device cannot change."
        )
        devices = self.siblings(Device)
        self.refuse_duplicate(attrs, devices, "name", "A device named {value} already exists in the project.")
        self.refuse_duplicate(attrs, devices, "serial", "Serial {value} is already used by another device.")
        return attrs

    def create(self, validated_data):
        with django_errors_as_400(self.fields):
            return services.device_create(**validated_data)

    def update(self, instance, validated_data):
        with django_errors_as_400(self.fields):
            return services.device_update(device=instance, **validated_data)


class VisibleRowField(serializers.PrimaryKeyRelatedField):
    """A related row by id, chosen among the rows of the requesting user's projects, so an outsider's
    id gets the same 'does not exist' as a missing one."""

    def __init__(self, project_path: str = "project", **kwargs):
        self.project_path = project_path
        kwargs.setdefault("style", TEXT_INPUT)
        super().__init__(**kwargs)

    def get_queryset(self):
        return scope_to_user(super().get_queryset(), self.context["request"].user, self.project_path)


class DevicePartSerializer(CleanModelSerializer):
    """NICs and ports: they belong to one device for good."""

    device = VisibleRowField(queryset=Device.objects.all())
    device_name = serializers.CharField(source="device.name", read_only=True)

    def validate(self, attrs):
        self.unchanged_on_update(attrs, "device", "A NIC or port cannot move to another device.")
        return attrs

    def target_device(self, attrs) -> Device:
        return attrs.get("device", getattr(self.instance, "device", None))

    def same_device(self, attrs, field: str, message: str) -> None:
        related = attrs.get(field)
        if related is not None and related.device_id != self.target_device(attrs).pk:
            raise serializers.ValidationError({field: message})


class NicSerializer(DevicePartSerializer):
    class Meta:
        model = Nic
        fields = [
            "id", "device", "device_name", "slot", "model", "part_number", "serial", "firmware", "guid_mac",
        ]

    def validate(self, attrs):
        attrs = super().validate(attrs)
        self.refuse_duplicate(
            attrs, Nic.objects.filter(device=self.target_device(attrs)), "slot",
            "The device already has a NIC in slot {value}.",
        )
        return attrs


class PortSerializer(DevicePartSerializer):
    kind = PortKindField(choices=PortKind.choices)
    nic = VisibleRowField(
        project_path="device__project", queryset=Nic.objects.all(), required=False, allow_null=True
    )
    # No default: DRF leaves a field with a default out of a PATCH's answer; allow_null answers None.
    nic_slot = serializers.CharField(source="nic.slot", read_only=True, allow_null=True)
    parent = VisibleRowField(
        project_path="device__project", queryset=Port.objects.all(), required=False, allow_null=True,
        help_text="The physical port this breakout lane belongs to.",
    )

    class Meta:
        model = Port
        fields = [
            "id", "device", "device_name", "nic", "nic_slot", "parent", "lane", "plane", "name", "kind",
            "speed_gbps", "network", "guid_mac", "status",
        ]

    def validate(self, attrs):
        attrs = super().validate(attrs)
        self.same_device(attrs, "nic", "The NIC belongs to another device.")
        self.same_device(attrs, "parent", "A lane belongs to a port of the same device.")
        parent = attrs.get("parent", getattr(self.instance, "parent", None))
        lane = attrs.get("lane", getattr(self.instance, "lane", None))
        if (parent is None) != (lane is None):
            message = "A breakout lane has both a parent port and a lane number."
            raise serializers.ValidationError({"lane": message})
        self.refuse_duplicate(
            attrs, Port.objects.filter(device=self.target_device(attrs)), "name",
            "The device already has a port named {value}.",
        )
        return attrs


class OpticSerializer(ProjectRowSerializer):
    port = VisibleRowField(
        project_path="device__project", queryset=Port.objects.all(), required=False, allow_null=True,
        help_text="The port (id) the optic sits in; null to take it out.",
    )
    device = serializers.CharField(source="port.device.name", read_only=True, allow_null=True)
    port_name = serializers.CharField(source="port.name", read_only=True, allow_null=True)

    class Meta:
        model = Optic
        # DOM readings come from the link checks, not from hand edits.
        read_only_fields = [
            "dom_temperature_c", "dom_voltage_v", "dom_tx_power_dbm", "dom_rx_power_dbm", "dom_bias_ma",
            "dom_read_at",
        ]
        fields = [
            "id", "project", "vendor", "part_number", "serial", "form_factor", "speed_gbps", "port", "device",
            "port_name", "status", *read_only_fields,
        ]

    def validate(self, attrs):
        attrs = super().validate(attrs)
        self.refuse_duplicate(
            attrs, self.siblings(Optic), "serial", "Serial {value} is already used by another optic."
        )
        port = attrs.get("port")
        if port is not None and port.device.project_id != self.target_project().pk:
            raise serializers.ValidationError({"port": "The port belongs to another project."})
        self._status_matches_port(attrs)
        return attrs

    def _status_matches_port(self, attrs) -> None:
        """An optic is in a port exactly when it is installed, whichever of the two a PATCH changes."""
        status = attrs.get("status")
        if status is None:
            return
        port = attrs["port"] if "port" in attrs else getattr(self.instance, "port", None)
        if port is not None and status != OpticStatus.INSTALLED:
            if "port" in attrs:
                message = "An optic in a port is installed; leave status out, or set port to null to take it out."
            else:
                message = (
                    f"The optic sits in {port}, so it is installed; to mark it {OpticStatus(status).label.lower()}, "
                    "set port to null in the same request to take it out."
                )
            raise serializers.ValidationError({"status": message})
        if port is None and status == OpticStatus.INSTALLED:
            raise serializers.ValidationError({"port": "An installed optic sits in a port; give the port."})

    def create(self, validated_data):
        return self._write(Optic(), validated_data)

    def update(self, instance, validated_data):
        return self._write(instance, validated_data)

    def _write(self, optic: Optic, validated_data) -> Optic:
        port = validated_data.pop("port", services.UNCHANGED)
        with django_errors_as_400(self.fields):
            return services.optic_save(optic=optic, port=port, **validated_data)

