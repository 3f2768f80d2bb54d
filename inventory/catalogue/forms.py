from django import forms

from ..choices import HardwareKind
from .reader import MAX_FILE_BYTES

MAX_UPLOAD_FILES = 20


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """Several files under one name (Django's documented recipe)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("widget", MultipleFileInput(attrs={"accept": ".yaml,.yml"}))
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None):
        single = super().clean
        if isinstance(data, (list, tuple)):
            return [single(item, initial) for item in data]
        return [single(data, initial)] if data else single(data, initial)


class CatalogueImportForm(forms.Form):
    """Device-type YAML files to add to the shared catalogue. Only their number and sizes are checked
    here; what they say is the loader's business (inventory.services.catalogue_load)."""

    files = MultipleFileField(
        label="Device-type files",
        help_text=f"YAML files in NetBox's device-type format, up to {MAX_UPLOAD_FILES} of "
        f"{MAX_FILE_BYTES // 1024 // 1024} MiB each.",
    )
    kind = forms.ChoiceField(
        choices=[("", "As each file says (bringup.kind)"), *HardwareKind.choices], required=False,
        help_text="The kind of hardware for files that do not say: NetBox's own files never do.",
    )

    def clean_files(self):
        uploads = self.cleaned_data["files"]
        if len(uploads) > MAX_UPLOAD_FILES:
            raise forms.ValidationError(f"{len(uploads)} files; at most {MAX_UPLOAD_FILES} at once.")
        too_big = [u.name for u in uploads if u.size > MAX_FILE_BYTES]
        if too_big:
            raise forms.ValidationError(
                f"Larger than {MAX_FILE_BYTES // 1024 // 1024} MiB, the limit: {', '.join(too_big[:5])}."
            )
        return uploads
