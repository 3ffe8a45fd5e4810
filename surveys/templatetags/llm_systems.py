"""Whether a connected system's API key is there, without ever showing it."""

import os

from django import template
from django.utils.translation import gettext as _

register = template.Library()


@register.simple_tag
def api_key_status(system) -> str:
    """For the coordinator: is the variable the system names set on this server?"""
    if not system.api_key_env:
        return _("no key needed")
    if os.environ.get(system.api_key_env):
        return _("key variable %(name)s is set") % {"name": system.api_key_env}
    return _("key variable %(name)s is NOT set on this server") % {"name": system.api_key_env}
