"""The staff member's own e-mail addresses: allauth's page, with the login
address changing only to an address its owner has confirmed."""

from allauth.account.models import EmailAddress
from allauth.account.views import email as allauth_email
from django.contrib import messages
from django.shortcuts import redirect
from django.utils.translation import gettext as _


def email_addresses(request):
    # allauth lets an unconfirmed address become the login address as long as
    # the account has no confirmed one, which is the case of every staff
    # account made from an invitation or in the admin.
    if (
        request.method == "POST"
        and "action_primary" in request.POST
        and request.user.is_authenticated
        and EmailAddress.objects.filter(
            user=request.user, email__iexact=request.POST.get("email", ""), verified=False
        ).exists()
    ):
        messages.error(
            request,
            _(
                "Confirm this address first with the link e-mailed to it. Until then you "
                "log in with your current address."
            ),
        )
        return redirect("account_email")
    return allauth_email(request)
