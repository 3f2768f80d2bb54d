from rest_framework import serializers

from core.api.exceptions import django_errors_as_400
from projects.api.fields import UsernameField, VisibleProjectField
from projects.models import Membership, Project
from projects.services import membership_set


class ProjectSerializer(serializers.ModelSerializer):
    class Meta:
        model = Project
        fields = [
            "id", "code", "name", "customer_name", "site", "description", "status", "start_date",
            "target_date",
        ]
        read_only_fields = fields


class MembershipSerializer(serializers.ModelSerializer):
    """Memberships are written by projects.services.membership_set; its refusals (the last manager
    cannot be demoted) reach the client through the API's exception handler as a 400 on the field."""

    project = VisibleProjectField()
    user = UsernameField(help_text="The exact username of the person to add.")

    class Meta:
        model = Membership
        fields = ["id", "project", "user", "role", "created_at"]
        read_only_fields = ["created_at"]
        validators = []  # the (user, project) pair is checked in validate() with a field-named error

    def validate(self, attrs):
        project = attrs.get("project", getattr(self.instance, "project", None))
        user = attrs.get("user", getattr(self.instance, "user", None))
        if self.instance is not None:
            if project != self.instance.project:
                raise serializers.ValidationError({"project": "A membership cannot move to another project."})
            if user != self.instance.user:
                raise serializers.ValidationError({"user": "A membership cannot move to another user."})
            return attrs
        if Membership.objects.filter(project=project, user=user).exists():
            raise serializers.ValidationError({"user": "This user is already a member of the project."})
        return attrs

    def create(self, validated_data):
        return self._set(validated_data["project"], validated_data["user"], validated_data["role"])

    def update(self, instance, validated_data):
        return self._set(instance.project, instance.user, validated_data.get("role", instance.role))

    def _set(self, project, user, role) -> Membership:
        # Two managers adding the same person at once: the loser's unique (user, project) is blamed on user.
        with django_errors_as_400(self.fields):
            return membership_set(project=project, user=user, role=role)
