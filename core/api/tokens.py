"""The token endpoint (POST username and password, get the token), with the API's own parsers: DRF's
ObtainAuthToken names its parsers itself, so an unauthenticated request could reach the unbounded JSON
parser there."""

from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.settings import api_settings


class TokenView(ObtainAuthToken):
    parser_classes = api_settings.DEFAULT_PARSER_CLASSES


token_view = TokenView.as_view()
