from allauth.account.adapter import DefaultAccountAdapter


class StaffOnlyAccountAdapter(DefaultAccountAdapter):
    """Staff accounts come from invitations or the admin; nobody signs up."""

    def is_open_for_signup(self, request) -> bool:
        return False

    def can_delete_email(self, email_address) -> bool:
        """The login address stays until a confirmed address has replaced it:
        removing it would make another, perhaps unconfirmed, address the login."""
        if email_address.email.lower() == email_address.user.email.lower():
            return False
        return super().can_delete_email(email_address)
