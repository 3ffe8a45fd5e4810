"""The operator's list of API key variables (settings.LLM_KEYS), read from the
environment; apart from the settings module so that it stays short."""

from django.core.exceptions import ImproperlyConfigured


def key_variables(value: str, prefix: str) -> dict[str, tuple[str, ...]]:
    """`NAME=slug,slug;NAME=*` as {NAME: (slug, ...)}; a malformed entry stops
    the start, so that a typo never leaves a key open to every study."""
    keys = {}
    for entry in filter(None, (part.strip() for part in value.split(";"))):
        variable, _sep, slugs = (piece.strip() for piece in entry.partition("="))
        studies = tuple(slug.strip() for slug in slugs.split(",") if slug.strip())
        if not (variable.startswith(prefix) and variable[len(prefix) :] and studies):
            raise ImproperlyConfigured(
                f"LLM_KEYS: {entry!r} must be {prefix}NAME=study-slug,... (or =*)"
            )
        keys[variable] = studies
    return keys
