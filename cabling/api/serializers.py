"""Input and output of the cabling endpoints: fabric plans, and the floor's scans, cables and search."""

from __future__ import annotations

import yaml
from drf_spectacular.utils import extend_schema_serializer
from rest_framework import serializers

from core.api.fields import TextField, named_enum_field
from core.api.serializers import FlatInputSerializer
from core.choices import JobStatus

from ..choices import CableStatus, FabricState, ScanAction, ScanResult, ScanSource, Side
from ..codes import MAX_CODE_LENGTH, cable_end_code
from ..models import FabricPlan
from ..planner.labels import place_tag
from ..selectors import top_unit
from ..services import KEY_PATTERN, MAX_POSITION_U


class FabricPlanSerializer(serializers.ModelSerializer):
    project = serializers.SlugRelatedField(slug_field="code", read_only=True)
    created_by = serializers.SlugRelatedField(
        source="requested_by", slug_field="username", read_only=True, help_text="Who submitted the spec."
    )
    confirmed_by = serializers.SlugRelatedField(slug_field="username", read_only=True)
    finished = serializers.BooleanField(
        source="is_settled", read_only=True,
        help_text="Nothing more happens without someone acting (a preview to confirm, applied, or failed).",
    )
    # Plain text in the schema: an enum named after "status" would collide with the other apps' statuses.
    status = serializers.CharField(
        read_only=True,
        help_text="One of: " + ", ".join(JobStatus.values) + " (waiting: a preview to confirm; done: applied)",
    )

    class Meta:
        model = FabricPlan
        fields = [
            "id", "project", "name", "source", "status", "finished", "keep_installed", "summary", "diff", "errors",
            "progress_done", "progress_total", "progress_step", "created_by", "created_at", "confirmed_by",
            "confirmed_at", "applied_at", "finished_at", "spec_text",
        ]
        read_only_fields = fields


class FabricPlanListSerializer(FabricPlanSerializer):
    """The list leaves out the heavy columns (spec text, stored diff)."""

    class Meta(FabricPlanSerializer.Meta):
        fields = [f for f in FabricPlanSerializer.Meta.fields if f not in ("spec_text", "diff", "errors")]
        read_only_fields = fields


class FabricPlanPreviewSerializer(serializers.Serializer):
    project = serializers.CharField(help_text="Code of the project to plan for.")
    spec = serializers.JSONField(
        help_text="The cluster spec: YAML (or JSON) text, or the spec itself as a JSON object."
    )

    def validate_spec(self, value) -> str:
        if isinstance(value, str):
            if not value.strip():
                raise serializers.ValidationError("spec: required")
            return value
        if isinstance(value, dict):
            return yaml.safe_dump(value, sort_keys=False, allow_unicode=True)
        raise serializers.ValidationError("spec: expected YAML text or a mapping of fields")


class FabricPlanApplySerializer(serializers.Serializer):
    keep_installed = serializers.BooleanField(
        default=False,
        help_text="Keep (flagged) installed cables and switches in place that the plan drops, instead of refusing.",
    )


# --- the floor: scans and cables ----------------------------------------------------------------------------
#
# The answers are built by plain functions (payloads below) from rows the selectors loaded with all their
# relations: the scan endpoint answers 200 scans a second, and DRF's per-field machinery would cost more
# than the scan itself. The serializer classes declare the same fields for the OpenAPI schema and call
# those functions (tests/cabling/test_cables_api.py holds the two to the same keys).

_DATETIME = serializers.DateTimeField()


def _iso(value):
    return _DATETIME.to_representation(value) if value is not None else None


def _username(user) -> str | None:
    return user.get_username() if user is not None else None


def end_payload(end, cable, ends: list) -> dict:
    """One end of a cable (its port, device, rack and model loaded: scan_selectors.END_RELATIONS)."""
    port = end.port
    device = port.device
    b_ends = sum(1 for e in ends if e.side == Side.B)
    rack = device.rack.name if device.rack_id else None
    top_u = top_unit(device.position_u, device.hardware_model.height_u)
    return {
        "id": end.pk,
        "side": end.side,
        "position": end.position,
        "code": cable_end_code(cable.label, end.side, end.position, b_ends=b_ends),
        "tag": place_tag(rack=rack, top_u=top_u, device=device.name, port=port.name),
        "rack": rack,
        "top_u": top_u,
        "device": device.name,
        "device_id": device.pk,
        "port": port.name,
        "port_id": port.pk,
        "port_status": port.status,
        "lane": port.lane,
        "plane": port.plane,
        "optic_part": cable.optic_part_a if end.side == Side.A else cable.optic_part_b,
        "confirmed_at": _iso(end.confirmed_at),
        "confirmed_by": _username(end.confirmed_by) if end.confirmed_by_id else None,
        "far_ends": [
            cable_end_code(cable.label, other.side, other.position, b_ends=b_ends)
            for other in ends if other.side != end.side
        ],
    }


def cable_payload(cable, ends: list | None = None) -> dict:
    """A cable with its ends (prefetched into `end_list` by scan_selectors, or given)."""
    ends = cable.end_list if ends is None else ends
    return {
        "id": cable.pk,
        "label": cable.label,
        "status": cable.status,
        "status_cause": cable.status_cause,
        "network": cable.network,
        "plane": cable.plane,
        "cable_type": cable.cable_type,
        "length_m": str(cable.length_m),
        "speed_gbps": cable.speed_gbps,
        "part_number": cable.part_number,
        "optic_part_a": cable.optic_part_a,
        "optic_part_b": cable.optic_part_b,
        "verified_at": _iso(cable.verified_at),
        "verified_by": _username(cable.verified_by) if cable.verified_by_id else None,
        "fabric_state": cable.fabric_state,
        "fabric_checked_at": _iso(cable.fabric_checked_at),
        "removed_from_plan": cable.removed_from_plan,
        "ends": [end_payload(end, cable, ends) for end in ends],
    }


def device_payload(device) -> dict:
    rack = device.rack.name if device.rack_id else None
    return {
        "id": device.pk,
        "name": device.name,
        "serial": device.serial,
        "asset_tag": device.asset_tag,
        "status": device.status,
        "rack": rack,
        "position_u": device.position_u,
        "top_u": top_unit(device.position_u, device.hardware_model.height_u),
        "racked_at": _iso(device.racked_at),
        "racked_by": _username(device.racked_by) if device.racked_by_id else None,
    }


def optic_payload(optic) -> dict:
    port = optic.port if optic.port_id else None
    return {
        "id": optic.pk,
        "serial": optic.serial,
        "part_number": optic.part_number,
        "status": optic.status,
        "port_id": optic.port_id,
        "port": f"{port.device.name}:{port.name}" if port else None,
        "installed_at": _iso(optic.installed_at),
        "installed_by": _username(optic.installed_by) if optic.installed_by_id else None,
    }


def port_payload(port) -> dict:
    return {
        "id": port.pk,
        "device": port.device.name,
        "device_id": port.device_id,
        "name": port.name,
        "code": f"{port.device.name}:{port.name}",
        "lane": port.lane,
        "plane": port.plane,
        "status": port.status,
        "status_cause": port.status_cause,
    }


def scan_payload(event, *, replayed: bool) -> dict:
    """A scan event as every scan answer shows it (loaded by scan_selectors.scan_list)."""
    matches = [{key: m[key] for key in ("kind", "id", "label", "url")} for m in event.context.get("matches", [])]
    return {
        "id": event.pk,
        "project": event.project.code,
        "action": event.action,
        "result": event.result,
        "reason": event.reason,
        "replayed": replayed,
        "created_at": _iso(event.created_at),
        "scanned_at": _iso(event.scanned_at),
        "source": event.source,
        "raw_code": event.raw_code,
        "idempotency_key": event.idempotency_key,
        "user": _username(event.user) if event.user_id else None,
        "matches": matches,
        "device": device_payload(event.device) if event.device_id else None,
        "optic": optic_payload(event.optic) if event.optic_id else None,
        "port": port_payload(event.port) if event.port_id else None,
        "cable": cable_payload(event.cable) if event.cable_id else None,
        "cable_end_id": event.cable_end_id,
    }


MAX_ID = 2**63 - 1
ScanActionField = named_enum_field(ScanAction)
ScanResultField = named_enum_field(ScanResult)
ScanSourceField = named_enum_field(ScanSource)
CableStatusField = named_enum_field(CableStatus)
SideField = named_enum_field(Side)
FabricStateField = named_enum_field(FabricState)


class ScanWhereSerializer(FlatInputSerializer):
    """What a scan sends besides its project and action (read by every scan: FlatInputSerializer)."""

    code = TextField(max_length=MAX_CODE_LENGTH, trim_whitespace=False,
                     help_text="The code exactly as read: a serial, asset tag, device name, cable label, cable end "
                     "code (C00417/A, C00417/B2), port (ib-leaf-03:p17), end tag, GUID or MAC.")
    idempotency_key = serializers.RegexField(
        KEY_PATTERN, required=False, allow_blank=True, max_length=64,
        help_text="8 to 64 letters, digits, - or _, chosen once per scan: a scan sent again with the same key "
        "(an offline replay) is recorded once and answered 200 with the first answer.",
        error_messages={"invalid": "8 to 64 letters, digits, '-' or '_', chosen once per scan."},
    )
    scanned_at = serializers.DateTimeField(required=False, allow_null=True,
                                           help_text="When the tablet read it (ISO 8601), for an offline scan.")
    source = ScanSourceField(choices=ScanSource.choices, default=ScanSource.API)
    rack = TextField(required=False, allow_blank=True, max_length=100,
                     help_text="rack action: the rack the device is in (default: its planned rack).")
    position_u = serializers.IntegerField(required=False, allow_null=True, min_value=1, max_value=MAX_POSITION_U,
                                          help_text="rack action: the device's lowest U (default: its planned U).")
    port = serializers.IntegerField(required=False, allow_null=True, min_value=1, max_value=MAX_ID,
                                    help_text="optic and cable_end actions: the id of the port you are at.")
    port_code = TextField(required=False, allow_blank=True, max_length=100,
                          help_text="optic and cable_end actions: the port you are at, as scanned "
                          "(ib-leaf-03:p17, an end tag, a GUID or MAC).")
    end = serializers.IntegerField(required=False, allow_null=True, min_value=1, max_value=MAX_ID,
                                   help_text="cable_end action with a bare label: the end you mean (default: the "
                                   "end planned on the port you are at).")


class ScanInputSerializer(ScanWhereSerializer):
    project = TextField(max_length=50, help_text="Code of the project.")
    action = ScanActionField(choices=ScanAction.choices)


class CableScanInputSerializer(ScanWhereSerializer):
    code = TextField(max_length=MAX_CODE_LENGTH, trim_whitespace=False, required=False,
                     help_text="The code as read at the end (C00417/A, or the bare label); default the cable's label.")


class CableStatusInputSerializer(serializers.Serializer):
    status = TextField(max_length=16, help_text="planned, installed or faulty (verified comes from scans and the "
                       "fabric, never by hand).")
    reason = TextField(required=False, allow_blank=True, max_length=150, help_text="Why, in a few words.")


class MatchSerializer(serializers.Serializer):
    kind = serializers.CharField(help_text="cable_end, cable, port, device or optic.")
    id = serializers.IntegerField()
    label = serializers.CharField()
    url = serializers.CharField(help_text="The object's page.")


class SearchMatchSerializer(MatchSerializer):
    how = serializers.CharField(help_text="What matched: serial, asset tag, name, label, end code, ...")


@extend_schema_serializer(many=False)  # the answer of a `list` action, yet one object: {"matches": [...]}
class SearchAnswerSerializer(serializers.Serializer):
    matches = SearchMatchSerializer(many=True)


class CableEndAnswerSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    side = SideField(choices=Side.choices)
    position = serializers.IntegerField(help_text="Leg of a breakout, from 0.")
    code = serializers.CharField(help_text="What this end's label holds: C00417/A, C00417/B, C00417/B2.")
    tag = serializers.CharField(help_text="rack-U-device-port, as printed under the label.")
    rack = serializers.CharField(allow_null=True)
    top_u = serializers.IntegerField(allow_null=True)
    device = serializers.CharField()
    device_id = serializers.IntegerField()
    port = serializers.CharField()
    port_id = serializers.IntegerField()
    port_status = serializers.CharField()
    lane = serializers.IntegerField(allow_null=True)
    plane = serializers.IntegerField(allow_null=True)
    optic_part = serializers.CharField(help_text="The transceiver the plan calls for at this end (blank: none).")
    confirmed_at = serializers.DateTimeField(allow_null=True)
    confirmed_by = serializers.CharField(allow_null=True)
    far_ends = serializers.ListField(child=serializers.CharField(), help_text="The codes of the other side's ends.")


class CableSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    label = serializers.CharField()
    status = CableStatusField(choices=CableStatus.choices)
    status_cause = serializers.CharField()
    network = serializers.CharField()
    plane = serializers.IntegerField(allow_null=True)
    cable_type = serializers.CharField()
    length_m = serializers.DecimalField(max_digits=6, decimal_places=1)
    speed_gbps = serializers.IntegerField()
    part_number = serializers.CharField()
    optic_part_a = serializers.CharField()
    optic_part_b = serializers.CharField()
    verified_at = serializers.DateTimeField(allow_null=True, help_text="When a scan confirmed its last end.")
    verified_by = serializers.CharField(allow_null=True)
    fabric_state = FabricStateField(choices=FabricState.choices, allow_blank=True)
    fabric_checked_at = serializers.DateTimeField(allow_null=True)
    removed_from_plan = serializers.BooleanField()
    ends = CableEndAnswerSerializer(many=True)

    def to_representation(self, instance):
        return cable_payload(instance)


class DeviceBriefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    serial = serializers.CharField()
    asset_tag = serializers.CharField()
    status = serializers.CharField()
    rack = serializers.CharField(allow_null=True)
    position_u = serializers.IntegerField(allow_null=True)
    top_u = serializers.IntegerField(allow_null=True)
    racked_at = serializers.DateTimeField(allow_null=True)
    racked_by = serializers.CharField(allow_null=True)


class OpticAnswerSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    serial = serializers.CharField()
    part_number = serializers.CharField()
    status = serializers.CharField()
    port_id = serializers.IntegerField(allow_null=True)
    port = serializers.CharField(allow_null=True)
    installed_at = serializers.DateTimeField(allow_null=True)
    installed_by = serializers.CharField(allow_null=True)


class PortBriefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    device = serializers.CharField()
    device_id = serializers.IntegerField()
    name = serializers.CharField()
    code = serializers.CharField()
    lane = serializers.IntegerField(allow_null=True)
    plane = serializers.IntegerField(allow_null=True)
    status = serializers.CharField()
    status_cause = serializers.CharField()


class ScanEventSerializer(serializers.Serializer):
    """A recorded scan: what was read, what it resolved to, what happened and why."""

    id = serializers.IntegerField()
    project = serializers.CharField()
    action = ScanActionField(choices=ScanAction.choices)
    result = ScanResultField(choices=ScanResult.choices)
    reason = serializers.CharField(help_text="What happened, in the technician's words.")
    replayed = serializers.BooleanField(help_text="True: this key was recorded before; this is that first answer.")
    created_at = serializers.DateTimeField()
    scanned_at = serializers.DateTimeField(allow_null=True)
    source = ScanSourceField(choices=ScanSource.choices)
    raw_code = serializers.CharField()
    idempotency_key = serializers.CharField()
    user = serializers.CharField(allow_null=True)
    matches = MatchSerializer(many=True, help_text="What the code resolved to, most specific first.")
    device = DeviceBriefSerializer(allow_null=True)
    optic = OpticAnswerSerializer(allow_null=True)
    port = PortBriefSerializer(allow_null=True, help_text="Where the technician was (optic, cable_end).")
    cable = CableSerializer(allow_null=True)
    cable_end_id = serializers.IntegerField(allow_null=True)

    def to_representation(self, instance):
        return scan_payload(instance, replayed=self.context.get("replayed", False))
