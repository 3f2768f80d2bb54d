"""Forms of the cabling pages that are not filters (cabling.filters has those)."""

from django import forms

from inventory.choices import Network

from .choices import LabelScope, LabelStockName


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
