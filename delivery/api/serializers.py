from django.contrib.auth import get_user_model
from rest_framework import serializers

from delivery.models import Membership, Project


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


class MembershipSerializer(serializers.ModelSerializer):
    project = VisibleProjectField()
    user = serializers.SlugRelatedField(slug_field="username", queryset=get_user_model().objects.all())

    class Meta:
        model = Membership
        fields = ["id", "project", "user", "role", "created_at"]
        read_only_fields = ["created_at"]
        validators = []  # the (user, project) pair is checked in validate() with a field-named error

    def validate(self, attrs):
        project = attrs.get("project", getattr(self.instance, "project", None))
        user = attrs.get("user", getattr(self.instance, "user", None))
        if self.instance is not None and project != self.instance.project:
            raise serializers.ValidationError({"project": "A membership cannot move to another project."})
        clash = Membership.objects.filter(project=project, user=user)
        if self.instance is not None:
            clash = clash.exclude(pk=self.instance.pk)
        if clash.exists():
            raise serializers.ValidationError({"user": "This user is already a member of the project."})
        return attrs
