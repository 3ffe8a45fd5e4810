"""Keeping link tokens out of every log line.

A session's, a retest's, an invitation's and a personal link's token is the
whole of its access control: whoever reads it in a log can open the page.
Django's request logger names the path of every 4xx and 5xx answer
("Conflict: /sessions/<token>/"), gunicorn names it when a request fails,
so the access log being off is not enough. MaskTokens rewrites a record's
message (its arguments merged in) and its traceback text before any handler
formats it; `configure` installs it on every handler there is, root's,
Django's own and gunicorn's included.

What is masked:
- the segment after each prefix that routes a token (TOKEN_ROUTES: the
  platform's own and allauth's e-mail confirmation and password reset), if
  it has eight characters or more (every token has 16 or more; the words of
  other routes under the same prefix, such as `sessions/start/`, have fewer
  and stay readable), and
- as a net for routes added later, any path segment of 20 or more url-safe
  characters that mixes upper case, lower case and digits, as
  `secrets.token_urlsafe` writes them. Longer names in ordinary paths
  (`django_celery_beat`, `site-packages`) lack the mix and stay readable;
- a personal API token wherever it stands (a header quoted in a traceback, a
  script's URL): its secret starts with API_SECRET_PREFIX.
"""

from __future__ import annotations

import logging
import logging.config
import re

MASK = "[token]"

# The routes whose next path segment is a secret (surveys/urls.py and
# allauth's account URLs). `take/<code>` is a study's public link code:
# public by design, but it lets anyone start sessions, so it stays out too.
TOKEN_ROUTES = (
    "sessions",
    "retest",
    "invitations",
    "take",
    "p",  # take/<code>/p/<personal token>/
    "confirm-email",
    "key",  # accounts/password/reset/key/<uidb36>-<key>/
)
_ROUTES = "|".join(map(re.escape, TOKEN_ROUTES))
_AFTER_PREFIX = re.compile(rf"(?P<prefix>/(?:{_ROUTES})/)(?P<token>[^/\s?#'\"<>]{{8,}})")
_TOKEN_LIKE = re.compile(r"(?<=/)[A-Za-z0-9_-]{20,}(?=[/?#\s'\"<>]|$)")
# api/tokens.py writes its secrets so; spelled here too, since the platform's
# floor imports no app.
API_SECRET_PREFIX = "shs_"
_API_SECRET = re.compile(rf"{API_SECRET_PREFIX}[A-Za-z0-9_-]{{20,}}")


def _looks_random(segment: str) -> bool:
    return (
        any(c.isdigit() for c in segment)
        and any(c.isupper() for c in segment)
        and any(c.islower() for c in segment)
    )


def mask_tokens(text: str) -> str:
    """`text` with every token-bearing path segment and API secret replaced by MASK."""
    if API_SECRET_PREFIX in text:
        text = _API_SECRET.sub(MASK, text)
    if "/" not in text:
        return text
    text = _AFTER_PREFIX.sub(lambda match: match["prefix"] + MASK, text)
    return _TOKEN_LIKE.sub(lambda m: MASK if _looks_random(m[0]) else m[0], text)


class MaskTokens(logging.Filter):
    """Masks tokens in a record's message, arguments and traceback; drops nothing."""

    _formatter = logging.Formatter()

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a broken format string: leave it to the handler to report
            return True
        masked = mask_tokens(message)
        if masked != message or record.args:
            # The message as formatted, so that no argument is formatted again
            # later with the token in it.
            record.msg, record.args = masked, None
        if record.exc_info and not record.exc_text:
            record.exc_text = self._formatter.formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = mask_tokens(record.exc_text)
        if record.stack_info:
            record.stack_info = mask_tokens(record.stack_info)
        return True


def install(token_filter: logging.Filter | None = None) -> None:
    """Add the filter to every handler of the root logger and of every logger so far."""
    token_filter = token_filter or MaskTokens()
    loggers = [logging.getLogger()] + [
        logger
        for logger in logging.Logger.manager.loggerDict.values()
        if isinstance(logger, logging.Logger)
    ]
    for logger in loggers:
        for handler in logger.handlers:
            if not any(isinstance(existing, MaskTokens) for existing in handler.filters):
                handler.addFilter(token_filter)


def configure(config: dict) -> None:
    """settings.LOGGING_CONFIG: Django's dictConfig, then the filter on every handler
    (Django's defaults and handlers set up before Django, such as gunicorn's).

    A Celery worker sets up its own handlers on the root logger, before or after
    Django's setup depending on the command: they are masked once they exist.
    """
    logging.config.dictConfig(config)
    install()
    from celery.signals import after_setup_logger, after_setup_task_logger

    after_setup_logger.connect(_install_on_signal, weak=False)
    after_setup_task_logger.connect(_install_on_signal, weak=False)


def _install_on_signal(**kwargs) -> None:
    install()
