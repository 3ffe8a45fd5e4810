from allauth.account.adapter import DefaultAccountAdapter


class StaffOnlyAccountAdapter(DefaultAccountAdapter):
    """Staff accounts come from invitations or the admin; nobody signs up."""

    def is_open_for_signup(self, request) -> bool:
        return False
