from django import forms
from django.conf import settings

from ..choices import ImportKind
from .limits import ImportLimits, size_text


class ImportUploadForm(forms.Form):
    """Any file is accepted and kept: whether it is a readable inventory file is the preview's job, so a
    bad upload is still there to look at. Only its size is checked here (IMPORT_MAX_FILE_BYTES); the
    request never opens it."""

    file = forms.FileField(help_text="A .csv (one kind) or an .xlsx (sheets racks, devices, nics, optics).")
    kind = forms.ChoiceField(
        choices=[("", "Tell from the header row / sheet names"), *ImportKind.choices], required=False,
        help_text="What a CSV holds, when its header does not make it clear.",
    )

    def clean_file(self):
        upload = self.cleaned_data["file"]
        limit = ImportLimits.from_settings(settings).max_file_bytes
        if upload.size > limit:
            raise forms.ValidationError(f"The file is larger than {size_text(limit)}, the limit.")
        return upload
