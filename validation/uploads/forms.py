from django import forms
from django.conf import settings

from ..choices import RunnerKind
from ..soak import SOAK_RUNNERS
from .services import UPLOAD_TOOLS, max_upload_bytes

TOOL_CHOICES = [("auto", "Detect from the output"), *((tool, tool) for tool in UPLOAD_TOOLS)]


class ToolUploadForm(forms.Form):
    """Whether the file is a readable tool output is the parse task's job; the form only needs a file, the
    node it came from and optionally the tool."""

    file = forms.FileField(help_text="The text a tool printed: mlxlink, ib_write_bw and friends, nccl-tests, "
                                     "ibstat, ibstatus, ethtool -S or mlnx_qos -i (keep the command line: it "
                                     "names the interface), or a switch's nv show qos roce (a captured loop "
                                     "over devices is fine).")
    host = forms.CharField(max_length=200, help_text="The node (or, for NVUE, the switch) the output was "
                                                     "captured on.")
    tool = forms.ChoiceField(choices=TOOL_CHOICES, initial="auto", required=False)

    def clean_file(self):
        upload = self.cleaned_data["file"]
        limit = max_upload_bytes()
        if upload.size > limit:
            raise forms.ValidationError(f"The file is {upload.size:,} bytes; the limit is {limit:,} bytes.")
        return upload


class SoakStartForm(forms.Form):
    duration_hours = forms.FloatField(min_value=0.1, max_value=24 * 30, label="Duration (hours)")
    runner = forms.ChoiceField(
        choices=[(value, label) for value, label in RunnerKind.choices if value in SOAK_RUNNERS],
        initial=RunnerKind.SIMULATED,
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["duration_hours"].initial = float(getattr(settings, "SOAK_DURATION_HOURS", 72))
