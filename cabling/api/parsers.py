"""A JSON parser whose refusals are all 400s: nesting deep enough to exhaust Python's recursion (an
array opened a hundred thousand times) is bad input like any other, not a 500."""

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser


class BoundedJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError as exc:
            raise ParseError("JSON parse error - nested too deep.") from exc
