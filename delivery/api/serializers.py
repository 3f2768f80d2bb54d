from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import serializers

from delivery.models import Membership, Project
from delivery.services import membership_set


class ProjectSerializer(serializers.ModelSerializer):
    class Meta:
        model = Project
        fields = [
            "id", "code", "name", "customer_name", "site", "description", "status", "start_date",
            "target_date",
        ]
        read_only_fields = fields


class VisibleProjectField(serializers.SlugRelatedField):
    """A project given by its code, chosen among the projects the requesting user can see, so an
    outsider's write gets a 400 that does not reveal whether the project exists."""

    def __init__(self, **kwargs):
        kwargs.setdefault("slug_field", "code")
        super().__init__(**kwargs)

    def get_queryset(self):
        from delivery.access import visible_projects

        return visible_projects(self.context["request"].user)


class UsernameField(serializers.CharField):
    """A user given by their exact username. Not a related field on purpose: it offers no list of
    choices (the browsable form would otherwise show every account of every tenant), and whatever the
    reason a name is refused, the answer is the same one sentence."""

    default_error_messages = {"no_such_user": "No active account has exactly this username."}

    def to_internal_value(self, data):
        username = super().to_internal_value(data)
        user = get_user_model().objects.filter(username=username, is_active=True).first()
        if user is None:
            self.fail("no_such_user")
        return user

    def to_representation(self, value):
        return value.get_username()


class MembershipSerializer(serializers.ModelSerializer):
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
        try:
            return membership_set(project=project, user=user, role=role)
        except DjangoValidationError as exc:
            raise serializers.ValidationError(serializers.as_serializer_error(exc)) from exc
