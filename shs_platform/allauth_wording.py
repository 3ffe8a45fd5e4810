"""German wording of allauth's pages that this project translates itself.

allauth's German catalogue says "du" in places; the platform says "Sie". Our
catalogue (LOCALE_PATHS) takes precedence, and listing the strings here keeps
`makemessages` from dropping them as obsolete. Nothing imports this module.
"""

from django.utils.translation import gettext_noop

ALLAUTH_STRINGS_IN_SIE_FORM = (
    gettext_noop("Please type your current password."),
    gettext_noop("Too many failed login attempts. Try again later."),
    gettext_noop("Be patient, you are sending too many requests."),
    gettext_noop("You must type the same password each time."),
    gettext_noop("Thank you for using %(site_name)s!\n%(site_domain)s"),
    gettext_noop("Your password has been changed."),
    gettext_noop(
        "You're receiving this email because you or someone else has requested a password "
        "reset for your user account.\n"
        "It can be safely ignored if you did not request a password reset. Click the link "
        "below to reset your password."
    ),
    gettext_noop("In case you forgot, your username is %(username)s."),
    gettext_noop("Are you sure you want to sign out?"),
    gettext_noop("You have signed out."),
    gettext_noop(
        "Forgotten your password? Enter your email address below, and we'll send you an "
        "email allowing you to reset it."
    ),
    gettext_noop("Please contact us if you have any trouble resetting your password."),
    gettext_noop(
        "We have sent you an email. If you have not received it please check your spam "
        "folder. Otherwise contact us if you do not receive it in a few minutes."
    ),
    gettext_noop(
        "The password reset link was invalid, possibly because it has already been used.  "
        'Please request a <a href="%(passwd_reset_url)s">new password reset</a>.'
    ),
    gettext_noop("Your password is now changed."),
    gettext_noop("You are already logged in as %(user_display)s."),
    gettext_noop("You are about to generate a new set of recovery codes for your account."),
    gettext_noop(
        "You are about to deactivate authenticator app based authentication. Are you sure?"
    ),
)
