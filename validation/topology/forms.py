from django import forms

from .services import MAX_FILES, max_file_bytes


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """Several files in one field (Django's documented recipe): a list of UploadedFile."""

    def __init__(self, *args, **kwargs):
        accept = ".txt,.json,.log,.out,text/plain,application/json"
        kwargs.setdefault("widget", MultipleFileInput(attrs={"accept": accept}))
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None):
        single = super().clean
        if isinstance(data, list | tuple):
            return [single(item, initial) for item in data]
        return [single(data, initial)]


class TopologyUploadForm(forms.Form):
    """Whether a file is a readable topology output is the comparison's job (each file gets its own
    verdict, with the line where parsing stopped); the form only takes the files and, for one LLDP
    table, the device it was read on."""

    files = MultipleFileField(
        help_text="iblinkinfo or ibnetdiscover (one per InfiniBand fabric), lldpcli show neighbors (text, -f json or "
        "-f keyvalue) or nv show interface lldp (one per switch, named after it: stor-leaf-01.json).",
    )
    host = forms.CharField(
        max_length=200, required=False,
        help_text="For one LLDP table: the switch or host it was read on (else the file name or prompt says).",
    )

    def clean_files(self):
        files = self.cleaned_data["files"]
        if len(files) > MAX_FILES:
            raise forms.ValidationError(f"{len(files):,} files; at most {MAX_FILES:,} at once.")
        limit = max_file_bytes()
        for upload in files:
            if upload.size > limit:
                raise forms.ValidationError(f"{upload.name} is {upload.size:,} bytes; the limit is {limit:,} bytes.")
        return files
