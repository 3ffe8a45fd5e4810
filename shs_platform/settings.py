"""One settings module, driven by the environment.

With no environment at all the platform runs on a SQLite file with tasks
executed in-process, so `make run` needs no services. Production sets
DEBUG=0, SECRET_KEY, ALLOWED_HOSTS, DATABASE_URL and REDIS_URL.
"""

import os
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured
from django.utils.translation import gettext_lazy as _

from shs_platform.environment import database_from_url, envbool, envint, envlist
from shs_platform.key_variables import key_variables

BASE_DIR = Path(__file__).resolve().parent.parent

DEBUG = envbool("DEBUG", "1")

SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off")
    SECRET_KEY = "insecure-development-key-only-for-debug-mode"

ALLOWED_HOSTS = envlist("ALLOWED_HOSTS", "127.0.0.1,localhost" if DEBUG else "")
CSRF_TRUSTED_ORIGINS = envlist("CSRF_TRUSTED_ORIGINS")
SITE_URL = os.environ.get("SITE_URL", "http://127.0.0.1:8000").rstrip("/")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "allauth",
    "allauth.account",
    "allauth.mfa",
    "audit",
    "surveys",
    "scoring",
    "exports",
    "criterion",
    "validation",
    "simulation",
    "api",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "shs_platform.middleware.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Before the session middleware, which looks its cookie up in the database.
    "surveys.middleware.RefuseNulCharactersMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "allauth.account.middleware.AccountMiddleware",
    "surveys.middleware.SecondFactorRequiredMiddleware",
]

ROOT_URLCONF = "shs_platform.urls"
WSGI_APPLICATION = "shs_platform.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# Database: SQLite file in the project unless DATABASE_URL says otherwise.
DATABASE_URL = os.environ.get("DATABASE_URL", "")
if DATABASE_URL:
    DATABASES = {"default": database_from_url(DATABASE_URL)}
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": BASE_DIR / "var" / "db.sqlite3",
            # Writers wait instead of failing at once when two requests overlap,
            # and a transaction takes the write lock when it begins, so two
            # sessions started at the same moment are allocated one after the other.
            "OPTIONS": {"timeout": 20, "transaction_mode": "IMMEDIATE"},
        }
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# The session, user and evaluation lookups of every participant request are
# compiled once per thread (surveys/prepared.py), and the autosave and the
# step change are written as SQL (surveys/protocol/statements.py); 0 runs
# them through the ORM, compiled anew each time.
PREPARED_LOOKUPS = envbool("PREPARED_LOOKUPS", "1")
PROTOCOL_STATEMENTS = envbool("PROTOCOL_STATEMENTS", "1")

AUTH_USER_MODEL = "surveys.User"
AUTHENTICATION_BACKENDS = [
    "surveys.auth_backends.ModelBackend",
    "surveys.auth_backends.AuthenticationBackend",
]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "account_login"
LOGIN_REDIRECT_URL = "surveys:study_list"

# django-allauth: staff log in with e-mail and password; nobody signs up.
ACCOUNT_ADAPTER = "surveys.adapters.StaffOnlyAccountAdapter"
ACCOUNT_LOGIN_METHODS = {"email"}
ACCOUNT_SIGNUP_FIELDS = ["email*", "password1*", "password2*"]
ACCOUNT_USER_MODEL_USERNAME_FIELD = None
ACCOUNT_EMAIL_VERIFICATION = "none"
ACCOUNT_UNIQUE_EMAIL = True
ACCOUNT_FORMS = {"add_email": "surveys.forms.StaffAddEmailForm"}
ACCOUNT_LOGOUT_ON_PASSWORD_CHANGE = False
ACCOUNT_LOGIN_ON_PASSWORD_RESET = False
ACCOUNT_PASSWORD_RESET_BY_CODE_ENABLED = False
# Failed logins count per account (allauth's key, the e-mail address), five in
# five minutes, and per client address with room for a lab behind one address
# (TRUSTED_PROXY_COUNT): one person's typos lock only their own account, and
# guessing across accounts is still stopped. Without Redis they fail open.
ACCOUNT_RATE_LIMITS = {
    "login_failed": "20/5m/ip,5/5m/key",
    "reset_password": "20/m/ip,5/m/key",
}
# The public link of a remote study (docs/design/remote.md §11.3), per client and
# window: sessions started (a lab or a household may share an address), and
# wrong participant codes entered (a code is 39 random bits; this stops guessing).
REMOTE_STARTS_PER_WINDOW = envint("REMOTE_STARTS_PER_WINDOW", 10)
REMOTE_CODE_ATTEMPTS_PER_WINDOW = envint("REMOTE_CODE_ATTEMPTS_PER_WINDOW", 10)
REMOTE_LIMIT_WINDOW_SECONDS = envint("REMOTE_LIMIT_WINDOW_SECONDS", 600)
MFA_SUPPORTED_TYPES = ["totp", "recovery_codes"]
MFA_TOTP_ISSUER = "SHS Study Platform"

# E-mail: console in development, SMTP from the environment in production.
EMAIL_BACKEND = os.environ.get(
    "EMAIL_BACKEND",
    "django.core.mail.backends.console.EmailBackend"
    if DEBUG or not os.environ.get("EMAIL_HOST")
    else "django.core.mail.backends.smtp.EmailBackend",
)
EMAIL_HOST = os.environ.get("EMAIL_HOST", "localhost")
EMAIL_PORT = envint("EMAIL_PORT", 587)
EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = envbool("EMAIL_USE_TLS", "1")
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "SHS Study Platform <noreply@localhost>")

# Languages of the UI and of the instrument.
LANGUAGE_CODE = "en"
LANGUAGES = [("en", _("English")), ("de", _("German")), ("fr", _("French"))]
LOCALE_PATHS = [BASE_DIR / "locale"]
USE_I18N = True
TIME_ZONE = os.environ.get("TIME_ZONE", "Europe/Vienna")
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
# /favicon.ico at the site's root, by WhiteNoise (docs/design/deployment.md §12.1).
WHITENOISE_ROOT = BASE_DIR / "static" / "root"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if not DEBUG
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}
# Export files live outside any URL-served folder and go out only through a
# permission-checked view.
PRIVATE_STORAGE_ROOT = Path(os.environ.get("PRIVATE_STORAGE_ROOT", BASE_DIR / "var" / "private"))
EXPORT_RETENTION_DAYS = envint("EXPORT_RETENTION_DAYS", 7)
# A running export whose heartbeat is older than this lost its worker and is
# queued again, at most EXPORT_MAX_ATTEMPTS times in all.
EXPORT_STALE_AFTER_SECONDS = envint("EXPORT_STALE_AFTER_SECONDS", 300)
EXPORT_MAX_ATTEMPTS = envint("EXPORT_MAX_ATTEMPTS", 3)
# Deleting a participant's data waits for exports reading the study at most this
# long, then refuses (and deletes nothing): within a web request's time limit.
DELETION_WAIT_SECONDS = envint("DELETION_WAIT_SECONDS", 20)
# Uploads to the calculator and API are small by nature; refuse big bodies.
DATA_UPLOAD_MAX_MEMORY_SIZE = envint("DATA_UPLOAD_MAX_MEMORY_SIZE", 2_621_440)
FILE_UPLOAD_MAX_MEMORY_SIZE = DATA_UPLOAD_MAX_MEMORY_SIZE

# Cache: Redis when configured (shared by all web processes, so login rate
# limits hold across gunicorn workers), process memory otherwise.
REDIS_URL = os.environ.get("REDIS_URL", "")
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "shs_platform.cache.ResilientRedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": "shs",
            "OPTIONS": {"socket_connect_timeout": 2, "socket_timeout": 2},
        }
    }
    # Session reads come from Redis; writes still reach the database, so a
    # restarted Redis logs nobody out.
    SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

# Celery: Redis broker and result backend when REDIS_URL is set; otherwise
# tasks run in-process so the app works with no services.
CELERY_BROKER_URL = REDIS_URL or "memory://localhost/"
CELERY_RESULT_BACKEND = REDIS_URL or "cache+memory://"
CELERY_TASK_ALWAYS_EAGER = not REDIS_URL
# A separate queue name lets test runs and several deployments share one Redis.
CELERY_TASK_DEFAULT_QUEUE = os.environ.get("CELERY_QUEUE", "celery")
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
# A task is acknowledged only after it finished, and a task whose worker died
# goes back to the queue: no export or scoring is lost with a worker.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Publishing must fail fast when Redis is down so that a request never hangs;
# periodic sweeps pick up whatever could not be queued.
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": envint("CELERY_VISIBILITY_TIMEOUT", 3600),
    "socket_connect_timeout": 2,
    "socket_timeout": 5,
    "max_retries": 1,
    "interval_start": 0,
    "interval_step": 0.2,
    "interval_max": 0.5,
}
CELERY_TASK_PUBLISH_RETRY = False
CELERY_TIMEZONE = TIME_ZONE
CELERY_BEAT_SCHEDULE = {
    "score-pending-evaluations": {
        "task": "surveys.tasks.score_pending_evaluations",
        "schedule": 60.0,
    },
    "mark-abandoned-sessions": {
        "task": "surveys.tasks.mark_abandoned_sessions",
        "schedule": 300.0,
    },
    "purge-panel-ids": {
        "task": "surveys.tasks.purge_panel_ids",
        "schedule": 3600.0,
    },
    "resume-stalled-exports": {
        "task": "exports.tasks.resume_stalled_jobs",
        "schedule": 120.0,
    },
    "delete-expired-exports": {
        "task": "exports.tasks.delete_expired_files",
        "schedule": 3600.0,
    },
}
# The demo (`make run`) has no broker and so no beat: with this on, runserver
# runs the schedule above in a thread of its own (shs_platform/scheduler.py).
DEMO_SCHEDULER = envbool("DEMO_SCHEDULER", "0")

# Security. Production (DEBUG off) gets secure cookies, HSTS and HTTPS redirect
# by default; the health check stays reachable over plain HTTP for load
# balancers. PLAIN_HTTP=1 is the one switch for a local trial over plain HTTP
# with no TLS in front (never on a public network): it turns those defaults off,
# and `check --deploy` then warns, as it should.
PLAIN_HTTP = envbool("PLAIN_HTTP", "0")
_HTTPS_DEFAULT = "0" if DEBUG or PLAIN_HTTP else "1"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_HTTPONLY = True
SESSION_COOKIE_SECURE = envbool("SESSION_COOKIE_SECURE", _HTTPS_DEFAULT)
CSRF_COOKIE_SECURE = envbool("CSRF_COOKIE_SECURE", _HTTPS_DEFAULT)
SECURE_SSL_REDIRECT = envbool("SECURE_SSL_REDIRECT", _HTTPS_DEFAULT)
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
SECURE_HSTS_SECONDS = envint("SECURE_HSTS_SECONDS", 31_536_000 if _HTTPS_DEFAULT == "1" else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = envbool("SECURE_HSTS_INCLUDE_SUBDOMAINS", "1")
SECURE_HSTS_PRELOAD = envbool("SECURE_HSTS_PRELOAD", "1")
# Behind a reverse proxy of our own. The proxy terminates TLS and says so in
# X-Forwarded-Proto (SECURE_PROXY_SSL_HEADER=1; the proxy must overwrite any
# such header a client sends). Each proxy appends the address it was reached
# from to X-Forwarded-For: with TRUSTED_PROXY_COUNT=N the client's address is
# the N-th entry from the end, so entries a client wrote itself are ignored.
# With 0 (the default, for no proxy) the header is ignored and the address is
# that of the connection; behind a proxy that would make every user share the
# proxy's address. The address serves only the login rate limits
# (ACCOUNT_RATE_LIMITS) and is never stored.
if envbool("SECURE_PROXY_SSL_HEADER", "0"):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
ALLAUTH_TRUSTED_PROXY_COUNT = envint("TRUSTED_PROXY_COUNT", 0)
# Every script and style comes from our own static files; plots are inline
# data: images.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
    "object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'"
)

# Connected LLM systems (llm/, docs/design/systems.md §10.1). Plain http only to this
# machine (the shipped demo server, a local model server), on by default in
# development; private networks (a vLLM box in the lab) only when allowed.
LLM_ALLOW_HTTP_LOOPBACK = envbool("LLM_ALLOW_HTTP_LOOPBACK", "1" if DEBUG else "0")
LLM_ALLOW_PRIVATE_NETWORKS = envbool("LLM_ALLOW_PRIVATE_NETWORKS", "0")
# API keys only from variables named LLM_KEY_PREFIX... that the platform does
# not read itself; once LLM_KEYS lists any ("SHS_LLM_KEY_A=study-a,study-b;
# SHS_LLM_KEY_LAB=*"), only those, for the studies named (llm/keys.py).
LLM_KEY_PREFIX = os.environ.get("LLM_KEY_PREFIX") or "SHS_LLM_KEY_"
LLM_KEYS = key_variables(os.environ.get("LLM_KEYS", ""), LLM_KEY_PREFIX)
# The silence allowed while answering (a slow model that keeps sending is never
# cut off), the whole answer's time, its retries (llm/wire.py says when).
LLM_IDLE_TIMEOUT_SECONDS = envint("LLM_IDLE_TIMEOUT_SECONDS", 60)
LLM_ANSWER_TIMEOUT_SECONDS = envint("LLM_ANSWER_TIMEOUT_SECONDS", 600)
LLM_CONNECT_TIMEOUT_SECONDS = envint("LLM_CONNECT_TIMEOUT_SECONDS", 5)
LLM_MAX_RETRIES = envint("LLM_MAX_RETRIES", 1)

# Every handler, these and all others, masks link tokens (shs_platform/log_filters.py).
LOGGING_CONFIG = "shs_platform.log_filters.configure"
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"mask_tokens": {"()": "shs_platform.log_filters.MaskTokens"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "filters": ["mask_tokens"]}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {
        "django.db.backends": {"level": "WARNING"},
        # The openai client's HTTP library logs a line per call at INFO: one
        # per chat message, saying nothing the llm logger does not say on failure.
        "httpx2": {"level": "WARNING"},
        "httpcore2": {"level": "WARNING"},
    },
}

# The API (api/, docs/design/api.md §16): every view sets its own authentication,
# permissions and throttle (api/views/base.py), so nothing here opens a door.
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "UNAUTHENTICATED_USER": None,
}
API_CALLS_PER_MINUTE = envint("API_CALLS_PER_MINUTE", 120)
SPECTACULAR_SETTINGS = {
    "TITLE": "SHS study platform API",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
}
