"""The session engine when Redis is configured: Django's cached_db (reads
from Redis, every write reaching the database too, so a restarted Redis logs
nobody out), with the write of an existing session as one UPDATE.

Django's database store saves a changed session through the ORM inside a
transaction of its own: BEGIN, UPDATE, COMMIT. A participant's submission
changes the device's session (the hand-back flag), so that was three of its
fourteen statements (issue 17). One UPDATE is atomic by itself; a session
whose row is gone fails as Django's does (UpdateError: the middleware
answers SessionInterrupted).
"""

import logging

from django.contrib.sessions.backends import cached_db
from django.contrib.sessions.backends.base import UpdateError
from django.db import connections, router

logger = logging.getLogger("django.contrib.sessions")


class SessionStore(cached_db.SessionStore):
    def save(self, must_create=False):
        if must_create or self.session_key is None:
            return super().save(must_create)
        self._update_row()
        try:
            self._cache.set(self.cache_key, self._session, self.get_expiry_age())
        except Exception:
            logger.exception("Error saving to cache (%s)", self._cache)

    def _update_row(self) -> None:
        connection = connections[router.db_for_write(self.model)]
        table = connection.ops.quote_name(self.model._meta.db_table)
        expires = connection.ops.adapt_datetimefield_value(self.get_expiry_date())
        with connection.cursor() as cursor:
            cursor.execute(
                f'UPDATE {table} SET "session_data" = %s, "expire_date" = %s '
                f'WHERE "session_key" = %s',
                [self.encode(self._get_session()), expires, self.session_key],
            )
            if cursor.rowcount != 1:
                raise UpdateError
