"""GET /api/search/?project=CODE&q=...: every object of the project a code names (serial, asset tag, device
name, cable label, end code, port, end tag, GUID, MAC), through the one resolver the scan field uses
(cabling.search.resolve_code), then what starts with or contains the text (cabling.search.search_text: the
header's suggestions as people type), exact matches first, at most 20. A list like any other: a project the
user cannot see, or nothing typed, simply has no matches; a code no label could hold (over 512 characters) is a 400."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import permissions, serializers, viewsets
from rest_framework.response import Response

from projects.access import visible_projects

from ..codes import MAX_CODE_LENGTH, CodeError
from ..search import search_text
from .serializers import SearchAnswerSerializer, TextField


class SearchQuerySerializer(serializers.Serializer):
    project = TextField(max_length=50, required=False, allow_blank=True)
    q = TextField(max_length=MAX_CODE_LENGTH, trim_whitespace=False, required=False, allow_blank=True)


class SearchViewSet(viewsets.ViewSet):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        parameters=[
            OpenApiParameter("project", OpenApiTypes.STR, description="Code of the project."),
            OpenApiParameter("q", OpenApiTypes.STR, description="The code, as scanned or typed."),
        ],
        responses={200: SearchAnswerSerializer},
    )
    def list(self, request):
        """What a code names in the project and what starts with or contains it, most specific first (nothing
        asked, nothing found)."""
        given = SearchQuerySerializer(data=request.query_params)
        given.is_valid(raise_exception=True)
        code, q = given.validated_data.get("project"), given.validated_data.get("q", "")
        project = visible_projects(request.user).filter(code=code).first() if code and q.strip() else None
        if project is None:
            return Response({"matches": []})
        try:
            matches = search_text(user=request.user, project=project, text=given.validated_data["q"])
        except CodeError as exc:
            raise serializers.ValidationError({"q": [str(exc)]}) from exc
        return Response({"matches": [
            {"kind": m.kind, "id": m.obj.pk, "label": m.label, "url": m.url(project), "how": m.how} for m in matches
        ]})
