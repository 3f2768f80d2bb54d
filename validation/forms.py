"""Forms of the validation pages. They collect and check input; writes go through validation.services,
whose refusals come back onto the form's fields (core.forms.add_service_errors)."""

from django import forms

from .choices import EXECUTING_RUNNERS, CheckKind, RunnerKind
from .kinds import STARTABLE_CHECK_KINDS
from .models import AcceptanceProfile


class CheckRunStartForm(forms.Form):
    kind = forms.ChoiceField(choices=[(k.value, k.label) for k in STARTABLE_CHECK_KINDS], label="Check")
    runner = forms.ChoiceField(
        choices=[(r.value, r.label) for r in EXECUTING_RUNNERS], initial=RunnerKind.SIMULATED, label="Runner"
    )
    seed = forms.IntegerField(
        required=False, min_value=0, label="Simulation seed",
        help_text="Simulated runner only: where the demo cluster's faults go (blank: 0).",
    )

    def __init__(self, *args, **kwargs):
        # The runs list also has a filter form with kind and runner fields: keep the ids apart.
        kwargs.setdefault("auto_id", "start_%s")
        super().__init__(*args, **kwargs)

    def clean(self):
        data = super().clean()
        if data.get("seed") is not None and data.get("runner") != RunnerKind.SIMULATED:
            self.add_error("seed", "A seed only means something to the simulated runner.")
        return data

    def service_fields(self) -> dict:
        """cleaned_data in the shape services.check_run_start takes."""
        data = self.cleaned_data
        options = {"seed": data["seed"]} if data.get("seed") is not None else {}
        return {"kind": CheckKind(data["kind"]), "runner": RunnerKind(data["runner"]), "options": options}


class AcceptanceProfileForm(forms.ModelForm):
    """Every threshold of the profile; the model's clean() holds warn levels on the safe side of fail."""

    class Meta:
        model = AcceptanceProfile
        fields = [*AcceptanceProfile.THRESHOLD_FIELDS, "roce"]
        labels = {
            "effective_ber_warn": "Effective BER: warn above",
            "effective_ber_fail": "Effective BER: fail above",
            "symbol_ber_warn": "Symbol BER: warn above",
            "symbol_ber_fail": "Symbol BER: fail above",
            "check_dom": "Check DOM against the module's limits",
            "dom_power_margin_db": "DOM power margin (dB)",
            "dom_temperature_margin_c": "DOM temperature margin (C)",
            "gpu_rdma_warn_fraction": "GPU RDMA: warn below this share of line rate",
            "gpu_rdma_fail_fraction": "GPU RDMA: fail below this share of line rate",
            "cpu_bw_warn_gbps": "CPU-path bandwidth: warn below (Gb/s)",
            "cpu_bw_fail_gbps": "CPU-path bandwidth: fail below (Gb/s)",
            "nccl_busbw_warn_gbs": "NCCL bus bandwidth: warn below (GB/s)",
            "nccl_busbw_fail_gbs": "NCCL bus bandwidth: fail below (GB/s)",
            "matrix_outlier_fraction": "Bandwidth matrix: flag pairs below this share of the median",
            "pinned_versions": "Pinned versions (JSON)",
            "roce": "RoCE settings (JSON)",
        }
        widgets = {
            "pinned_versions": forms.Textarea(attrs={"rows": 4, "spellcheck": "false"}),
            "roce": forms.Textarea(attrs={"rows": 3, "spellcheck": "false"}),
        }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for field in self.fields.values():
            if isinstance(field, forms.FloatField):
                # Thresholds like 1e-12: the browser must accept any number, not only multiples of 0.01.
                field.widget = forms.TextInput(attrs={"inputmode": "decimal"})

    def service_fields(self) -> dict:
        fields = {name: self.cleaned_data[name] for name in self.Meta.fields}
        fields["pinned_versions"] = fields["pinned_versions"] or {}  # an emptied box means "none pinned"
        fields["roce"] = fields["roce"] or {}  # an emptied box means "the defaults"
        return fields
