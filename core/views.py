"""Views every app's pages build on."""

from __future__ import annotations

from django.db.models import QuerySet
from django.views.generic import ListView

PAGE_SIZE = 50


class FilteredListView(ListView):
    """A list page filtered by the same FilterSet the API uses, then paginated. Combine it with the
    project mixin of projects.access (which resolves the project and checks the role) before it:
    `class RackListView(ProjectViewMixin, FilteredListView)`."""

    filterset_class: type
    paginate_by = PAGE_SIZE

    def base_queryset(self) -> QuerySet:
        raise NotImplementedError

    def get_queryset(self):
        self.filterset = self.filterset_class(self.request.GET or None, queryset=self.base_queryset())
        return self.filterset.qs

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["filterset"] = self.filterset
        return context
