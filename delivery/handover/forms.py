"""The push form: NetBox's address, an API token (never shown back), dry run or apply."""

from django import forms

DRY_RUN, APPLY = "dry_run", "apply"


class NetBoxPushForm(forms.Form):
    netbox_url = forms.CharField(
        label="NetBox URL", max_length=300, widget=forms.URLInput(attrs={"placeholder": "https://netbox.example.com"}),
        help_text="NetBox's root address (its API is under /api/).",
    )
    token = forms.CharField(
        label="API token", max_length=256, strip=True,
        widget=forms.PasswordInput(attrs={"autocomplete": "off", "spellcheck": "false"}, render_value=False),
        help_text="Kept encrypted for this job only, then forgotten. An apply needs a write-enabled token.",
    )
    action = forms.ChoiceField(choices=[(DRY_RUN, "Dry run"), (APPLY, "Apply")], initial=DRY_RUN,
                               widget=forms.HiddenInput)
