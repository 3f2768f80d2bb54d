"""Forms of the cabling pages that are not filters (cabling.filters has those)."""

from django import forms

from inventory.choices import Network

from .choices import LabelScope, LabelStockName, RmaState


class LabelSheetExportForm(forms.Form):
    scope = forms.ChoiceField(choices=LabelScope.choices, initial=LabelScope.ALL, widget=forms.RadioSelect)
    rack = forms.CharField(required=False, max_length=50, help_text="With “One rack”: the ends in this rack.")
    network = forms.ChoiceField(choices=[("", "—"), *Network.choices], required=False,
                                help_text="With “One network”: both ends of its cables.")
    stock = forms.ChoiceField(choices=LabelStockName.choices, initial=LabelStockName.L7651)

    def clean(self):
        """Keep only what the chosen scope uses (a rack typed before choosing "whole fabric" is dropped)."""
        data = super().clean()
        scope = data.get("scope")
        if scope != LabelScope.RACK:
            data["rack"] = ""
        if scope != LabelScope.NETWORK:
            data["network"] = ""
        return data


class SwapForm(forms.Form):
    """Replacing an optic or a cable on the floor; the service checks everything (cabling.services.swaps)."""

    new_serial = forms.CharField(max_length=100, label="New serial",
                                 help_text="Scan or type the serial of the part going in.",
                                 widget=forms.TextInput(attrs={"autofocus": True, "autocomplete": "off"}))
    old_serial = forms.CharField(max_length=100, required=False, label="Old serial",
                                 help_text="The serial printed on the cable taken out, when none was recorded.")
    reason = forms.CharField(max_length=2000, widget=forms.Textarea(attrs={"rows": 3}),
                             help_text="What you saw: the check that failed, the damage, the DOM reading.")
    rma_case = forms.CharField(max_length=100, required=False, label="RMA case",
                               help_text="The vendor's RMA number, if there is one already.")
    rma_state = forms.ChoiceField(choices=RmaState.choices, initial=RmaState.NONE, label="RMA")


class SwapRmaForm(forms.Form):
    """The RMA of a swapped part moving on."""

    rma_case = forms.CharField(max_length=100, required=False, label="RMA case")
    rma_state = forms.ChoiceField(choices=RmaState.choices, label="RMA state")
