"""The session engine when Redis is configured: Django's cached_db (reads
from Redis, every write reaching the database too, so a restarted Redis logs
nobody out), with the write of an existing session as one UPDATE.

Django's database store saves a changed session through the ORM inside a
transaction of its own: BEGIN, UPDATE, COMMIT. A participant's submission
changes the device's session (the hand-back flag), so that was three of its
fourteen statements. One UPDATE is atomic by itself; a session
whose row is gone fails as Django's does (UpdateError: the middleware
answers SessionInterrupted).
"""

import logging

from django.contrib.sessions.backends import cached_db
from django.contrib.sessions.backends.base import UpdateError
from django.db import DatabaseError

from surveys.direct_writes import save_fields

logger = logging.getLogger("django.contrib.sessions")


class SessionStore(cached_db.SessionStore):
    def save(self, must_create=False):
        if must_create or self.session_key is None:
            return super().save(must_create)
        row = self.create_model_instance(self._get_session())
        try:
            save_fields(row, ["session_data", "expire_date"])
        except DatabaseError as error:
            raise UpdateError from error
        try:
            self._cache.set(self.cache_key, self._session, self.get_expiry_age())
        except Exception:
            logger.exception("Error saving to cache (%s)", self._cache)
