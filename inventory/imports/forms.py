from django import forms

from ..choices import ImportKind

MAX_UPLOAD_BYTES = 20 * 1024 * 1024


class ImportUploadForm(forms.Form):
    """Any file is accepted and kept: whether it is a readable inventory file is the preview's job, so a
    bad upload is still there to look at."""

    file = forms.FileField(help_text="A .csv (one kind) or an .xlsx (sheets racks, devices, nics, optics).")
    kind = forms.ChoiceField(
        choices=[("", "Tell from the header row / sheet names"), *ImportKind.choices], required=False,
        help_text="What a CSV holds, when its header does not make it clear.",
    )

    def clean_file(self):
        upload = self.cleaned_data["file"]
        if upload.size > MAX_UPLOAD_BYTES:
            raise forms.ValidationError(f"The file is larger than {MAX_UPLOAD_BYTES // (1024 * 1024)} MB.")
        return upload
