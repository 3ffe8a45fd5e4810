"""The OpenAPI schema's word for the personal token: a bearer token. Loaded
by ApiConfig.ready, which registers it with drf-spectacular."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class PersonalTokenScheme(OpenApiAuthenticationExtension):
    target_class = "api.authentication.PersonalTokenAuthentication"
    name = "personalToken"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A personal API token, created on your account page (shs_...).",
        }
