"""Loading hardware models into the shared catalogue from device-type YAML files (inventory.catalogue:
the files Bringup ships, or any from NetBox's community device-type library).

- A set of files is loaded all or nothing: every file is read first, and one error anywhere (each named
  by file, line and field) writes nothing at all.
- A model is matched by part number. A new one is created with its NIC and port templates; one whose
  fields and templates already match is left alone, so loading twice writes nothing (not even history);
  one that differs is updated, when the caller may (`allow_update`: staff and the command; a project
  manager adds models to the shared catalogue but does not change what other projects use).
- Devices copy their ports from the templates when they are made, so the templates of a model that
  devices use are never rewritten under them (HardwareModel itself refuses a new height or depth): a
  changed model is a new part number.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Prefetch
from simple_history.utils import bulk_create_with_history

from ..catalogue import shipped_files
from ..catalogue.reader import HardwareModelData, NicData, PortData, read_device_type
from ..models import HardwareModel, NicTemplate, PortTemplate

MAX_FILES = 200  # one set; the shipped catalogue has about 15


@dataclass(frozen=True)
class CatalogueFile:
    name: str
    content: bytes


@dataclass
class CatalogueResult:
    created: list[str] = field(default_factory=list)  # part numbers
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.created or self.updated)

    def summary(self) -> str:
        return f"{len(self.created)} created, {len(self.updated)} updated, {len(self.unchanged)} unchanged"


def catalogue_files_from_paths(paths: Iterable[str | Path]) -> list[CatalogueFile]:
    """Files from the disk (the command); a folder stands for its *.yaml and *.yml files."""
    files: list[CatalogueFile] = []
    errors: list[str] = []
    for raw in paths:
        path = Path(raw)
        members = sorted([*path.glob("*.yaml"), *path.glob("*.yml")]) if path.is_dir() else [path]
        for member in members:
            try:
                files.append(CatalogueFile(name=str(member), content=member.read_bytes()))
            except OSError as exc:
                errors.append(f"{member}: cannot read ({exc.strerror})")
    if errors:
        raise ValidationError(errors)
    return files


def shipped_catalogue_files() -> list[CatalogueFile]:
    return [CatalogueFile(name=path.name, content=path.read_bytes()) for path in shipped_files()]


def catalogue_read(
    *, files: Sequence[CatalogueFile], default_kind: str = ""
) -> tuple[list[HardwareModelData], list[str]]:
    """Every file read (no database): the models and the warnings, or a ValidationError with every
    file's errors. Two files of one set may not describe the same part number."""
    if len(files) > MAX_FILES:
        raise ValidationError(f"{len(files)} files; one load takes at most {MAX_FILES}.")
    if not files:
        raise ValidationError("No file to load.")
    models: list[HardwareModelData] = []
    errors: list[str] = []
    warnings: list[str] = []
    source_of: dict[str, str] = {}
    for upload in files:
        read = read_device_type(upload.content, source=upload.name, default_kind=default_kind)
        errors += read.errors
        warnings += read.warnings
        if read.data is None:
            continue
        other = source_of.setdefault(read.data.part_number, upload.name)
        if other != upload.name:
            errors.append(f"{upload.name}: part_number: {read.data.part_number!r} is also the part number in {other}")
            continue
        models.append(read.data)
    if errors:
        raise ValidationError(errors)
    return models, warnings


@transaction.atomic
def catalogue_load(
    *, files: Sequence[CatalogueFile], default_kind: str = "", allow_update: bool = True, user=None
) -> CatalogueResult:
    """Create or update the hardware models the files describe, with their NIC and port templates; all or
    nothing. Refuses with a ValidationError whose messages name file, line and field."""
    models, warnings = catalogue_read(files=files, default_kind=default_kind)
    result = CatalogueResult(warnings=warnings)
    existing = _existing({m.part_number for m in models})
    errors: list[str] = []
    for data in models:
        try:
            _load_one(data, existing.get(data.part_number), result, allow_update=allow_update, user=user)
        except ValidationError as exc:
            errors += _placed(data.source, exc)
    if errors:
        raise ValidationError(errors)  # and the transaction rolls back whatever the other files wrote
    return result


@transaction.atomic
def catalogue_load_shipped(*, user=None) -> CatalogueResult:
    """The catalogue Bringup ships (inventory/catalogue/data), as `make run` loads it."""
    return catalogue_load(files=shipped_catalogue_files(), user=user)


def _existing(part_numbers: set[str]) -> dict[str, HardwareModel]:
    ports = PortTemplate.objects.select_related("nic_template").order_by("id")
    found = HardwareModel.objects.filter(part_number__in=part_numbers).prefetch_related(
        Prefetch("nic_templates", queryset=NicTemplate.objects.order_by("id")),
        Prefetch("port_templates", queryset=ports),
    )
    return {model.part_number: model for model in found}


def _placed(source: str, exc: ValidationError) -> list[str]:
    if hasattr(exc, "error_dict"):
        return [f"{source}: {name}: {message}" for name, errs in exc.error_dict.items()
                for e in errs for message in e.messages]
    return [f"{source}: {message}" for message in exc.messages]


def _stored_templates(model: HardwareModel) -> tuple[tuple[NicData, ...], tuple[PortData, ...]]:
    nics = tuple(NicData(slot=n.slot, model=n.model, part_number=n.part_number) for n in model.nic_templates.all())
    ports = tuple(
        PortData(
            name=t.name, kind=t.kind, speed_gbps=t.speed_gbps, network=t.network,
            nic_slot=t.nic_template.slot if t.nic_template_id else "", breakout_lanes=t.breakout_lanes,
            lane_speed_gbps=t.lane_speed_gbps if t.breakout_lanes > 1 else None, planes_per_lane=t.planes_per_lane,
        )
        for t in model.port_templates.all()
    )
    return nics, ports


def _load_one(data: HardwareModelData, model: HardwareModel | None, result: CatalogueResult, *,
              allow_update: bool, user) -> None:
    if model is None:
        model = HardwareModel(part_number=data.part_number, **data.model_fields())
        model.full_clean()
        model.save()
        _templates_create(model, data, user=user)
        result.created.append(data.part_number)
        return
    fields = data.model_fields()
    changed_fields = [name for name, value in fields.items() if getattr(model, name) != value]
    templates_differ = _stored_templates(model) != (data.nics, data.ports)
    if not changed_fields and not templates_differ:
        result.unchanged.append(data.part_number)
        return
    if not allow_update:
        what = ", ".join(changed_fields + (["port or NIC templates"] if templates_differ else []))
        raise ValidationError({"part_number": (
            f"{data.part_number} is already in the catalogue with another {what}; only staff change a model "
            "other projects may use"
        )})
    if templates_differ:
        in_use = model.devices.count()
        if in_use:
            raise ValidationError({"interfaces": (
                f"{in_use} device(s) of {data.part_number} were made from its current port and NIC templates; "
                "give the changed model a new part number instead"
            )})
    for name in changed_fields:
        setattr(model, name, fields[name])
    model.full_clean()
    model.save()
    if templates_differ:
        model.port_templates.all().delete()
        model.nic_templates.all().delete()
        _templates_create(model, data, user=user)
    result.updated.append(data.part_number)


def _templates_create(model: HardwareModel, data: HardwareModelData, *, user) -> None:
    nics = [NicTemplate(hardware_model=model, slot=n.slot, model=n.model, part_number=n.part_number) for n in data.nics]
    for nic in nics:
        nic.full_clean(validate_unique=False, validate_constraints=False)  # slots are unique by the reader
    nics = bulk_create_with_history(nics, NicTemplate, default_user=user)
    by_slot = {nic.slot: nic for nic in nics}
    ports = [
        PortTemplate(
            hardware_model=model, nic_template=by_slot.get(p.nic_slot) if p.nic_slot else None, name=p.name,
            kind=p.kind, speed_gbps=p.speed_gbps, network=p.network, breakout_lanes=p.breakout_lanes,
            lane_speed_gbps=p.lane_speed_gbps, planes_per_lane=p.planes_per_lane,
        )
        for p in data.ports
    ]
    for port in ports:
        port.full_clean(validate_unique=False, validate_constraints=False)  # names are unique by the reader
    bulk_create_with_history(ports, PortTemplate, default_user=user)
