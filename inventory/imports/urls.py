app_name = "imports"
urlpatterns = []
