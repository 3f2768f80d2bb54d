"""Forms of the inventory pages. Writes still go through inventory.services; a form only collects and
validates input (the model's clean() runs here too, so overlap errors land on the right field)."""

from django import forms
from django.core.exceptions import ValidationError

from projects.models import Project

from .models import Device, Rack


class DeviceForm(forms.ModelForm):
    """What a technician changes on the floor: where the device sits, its state and its labels."""

    class Meta:
        model = Device
        fields = ["status", "rack", "position_u", "face", "serial", "asset_tag", "oob_address"]
        labels = {"position_u": "Position (lowest U)", "oob_address": "Out-of-band address"}

    def __init__(self, *args, project: Project, **kwargs):
        super().__init__(*args, **kwargs)
        # Only this project's racks: another project's rack is not a choice, not even by id.
        racks = Rack.objects.filter(project=project).order_by("row", "position", "name")
        self.fields["rack"].queryset = racks
        self.fields["rack"].required = False
        self.fields["position_u"].widget.attrs["min"] = 1

    def clean_serial(self):
        """The database constraint would say only its name; say which device already has the serial."""
        serial = self.cleaned_data["serial"].strip()
        if serial:
            holder = (
                Device.objects.filter(project_id=self.instance.project_id, serial=serial)
                .exclude(pk=self.instance.pk)
                .values_list("name", flat=True)
                .first()
            )
            if holder:
                raise ValidationError(f"Serial {serial} is already recorded for {holder}.")
        return serial

    def service_fields(self) -> dict:
        """cleaned_data in the shape inventory.services.device_update takes."""
        fields = {name: self.cleaned_data[name] for name in self.Meta.fields}
        fields["oob_address"] = fields["oob_address"] or None
        return fields
