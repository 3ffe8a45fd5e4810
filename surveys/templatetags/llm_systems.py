"""Whether a connected system's API key is there, without ever showing it."""

import os

from django import template
from django.utils.translation import gettext as _

from llm.keys import is_allowed
from surveys.llm_policy import call_policy

register = template.Library()


@register.simple_tag
def api_key_status(system) -> str:
    """For the coordinator: may the system use the variable it names, and is it set?

    Whether a variable is set is told only for a name the operator allows this
    study: otherwise this page would tell a coordinator which of the server's
    variables exist (SECRET_KEY, another study's key)."""
    name = system.api_key_env
    if not name:
        return _("no key needed")
    if not is_allowed(name, system.study.slug, policy=call_policy()):
        return _("key variable %(name)s is not allowed by the server's configuration") % {
            "name": name
        }
    if os.environ.get(name):
        return _("key variable %(name)s is set") % {"name": name}
    return _("key variable %(name)s is NOT set on this server") % {"name": name}


@register.simple_tag
def connected_systems(systems) -> list:
    """The connected ones of a study's systems, already read for the page."""
    return [system for system in systems if system.is_connected]
