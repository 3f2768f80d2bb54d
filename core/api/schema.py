"""The OpenAPI schema documents the one error shape (core.api.exceptions) on every operation."""

from __future__ import annotations

ERROR = {
    "type": "object",
    "description": "Any client error but a 400: what went wrong, in words.",
    "properties": {"detail": {"type": "string"}},
    "required": ["detail"],
}
VALIDATION_ERROR = {
    "type": "object",
    "description": "A 400: each field at fault under its name, everything else under non_field_errors.",
    "properties": {"non_field_errors": {"type": "array", "items": {"type": "string"}}},
    "additionalProperties": {"type": "array", "items": {"type": "string"}},
}
_REF = {"Error": {"$ref": "#/components/schemas/Error"},
        "ValidationError": {"$ref": "#/components/schemas/ValidationError"}}
_RESPONSES = {
    "400": ("ValidationError", "Bad input: the fields at fault, by name."),
    "401": ("Error", "Not signed in."),
    "403": ("Error", "Your role in the project does not allow this."),
    "404": ("Error", "Not found, or in a project you are not a member of."),
}


def add_error_responses(result, generator, request, public):
    """POSTPROCESSING_HOOKS entry: the two error components, and the responses that use them on every
    operation that does not describe its own."""
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    schemas.setdefault("Error", ERROR)
    schemas.setdefault("ValidationError", VALIDATION_ERROR)
    for path in result.get("paths", {}).values():
        for method, operation in path.items():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            for code, (component, description) in _RESPONSES.items():
                if code == "400" and method == "get" and not operation.get("parameters"):
                    continue  # a plain read takes no input to be wrong about
                operation["responses"].setdefault(
                    code, {"description": description, "content": {"application/json": {"schema": _REF[component]}}}
                )
            if method == "delete":  # a row others still use is kept, and the answer names them
                operation["responses"].setdefault("409", {
                    "description": "Still in use: the answer names what uses it.",
                    "content": {"application/json": {"schema": _REF["Error"]}},
                })
    return result
