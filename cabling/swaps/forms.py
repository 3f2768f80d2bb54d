"""The forms of a swap: replacing an optic or a cable on the floor, and its RMA moving on."""

from django import forms

from cabling.choices import RmaState


class SwapForm(forms.Form):
    """Replacing an optic or a cable on the floor; the service checks everything (cabling.swaps.services)."""

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
