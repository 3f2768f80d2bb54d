"""Settings, all read from the environment. The defaults are the embedded set-up of `make run`:
SQLite under var/, tasks run eagerly in-process, debug on, files under var/media/."""

import os
from pathlib import Path

import dj_database_url

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("BRINGUP_VAR_DIR", BASE_DIR / "var"))


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


def embedded_secret_key() -> str:
    """The embedded default's secret key: made once, kept in var/secret_key (readable by its owner
    only), so sessions survive a restart and no key is shared between installations."""
    import secrets

    path = VAR_DIR / "secret_key"
    if not path.exists():
        VAR_DIR.mkdir(parents=True, exist_ok=True)
        draft = VAR_DIR / f".secret_key.{os.getpid()}"
        descriptor = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w") as handle:
            handle.write(secrets.token_urlsafe(50))
        try:  # link, not rename: of two processes starting at once, the first key stays for both
            os.link(draft, path)
        except FileExistsError:
            pass
        finally:
            draft.unlink()
    return path.read_text().strip()


# Debug is off by default, even on the embedded set-up: a debug page would show an outsider every URL
# and setting. Static files are served by WhiteNoise either way.
DEBUG = env_bool("DJANGO_DEBUG", False)
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY") or embedded_secret_key()
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost")
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS")

# Behind a TLS proxy (docs/operations.md, "Settings"): all off by default, so the embedded set-up works over plain
# http on 127.0.0.1; `manage.py check --deploy` is clean with the documented production values.
SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", False)
SECURE_HSTS_SECONDS = int(os.environ.get("DJANGO_SECURE_HSTS_SECONDS", "0"))
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("DJANGO_SECURE_HSTS_PRELOAD", False)
SESSION_COOKIE_SECURE = env_bool("DJANGO_SESSION_COOKIE_SECURE", False)
CSRF_COOKIE_SECURE = env_bool("DJANGO_CSRF_COOKIE_SECURE", False)
# "HTTP_X_FORWARDED_PROTO,https": the header the proxy sets, and its value for a TLS request.
_proxy_header = env_list("DJANGO_SECURE_PROXY_SSL_HEADER")
SECURE_PROXY_SSL_HEADER = tuple(_proxy_header) if len(_proxy_header) == 2 else None

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_filters",
    "simple_history",
    "axes",
    "import_export",
    "core",
    "projects",
    "inventory",
    "cabling",
    "validation",
    "delivery",
    "demo",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # An API request declaring a body over API_BODY_MAX_BYTES: a 413 before anything reads it.
    "core.api.middleware.DeclaredLengthMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "simple_history.middleware.HistoryRequestMiddleware",
    # Last, as django-axes asks: it turns a locked-out login into its lockout response.
    "axes.middleware.AxesMiddleware",
]

AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]

ROOT_URLCONF = "bringup.urls"
WSGI_APPLICATION = "bringup.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL", f"sqlite:///{VAR_DIR / 'bringup.sqlite3'}"),
        conn_max_age=int(os.environ.get("DATABASE_CONN_MAX_AGE", "0")),
    )
}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # The embedded default holds a small team: readers never wait for the writer (WAL); a writer waits up
    # to 20 s for another instead of failing at once (timeout); and a transaction takes the write lock
    # when it begins (IMMEDIATE), so two read-then-write transactions queue one after the other instead of
    # the second failing halfway with "database is locked".
    DATABASES["default"].setdefault("OPTIONS", {}).update({
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL",
        "transaction_mode": "IMMEDIATE",
        "timeout": 20,
    })
elif DATABASES["default"]["ENGINE"].endswith("postgresql") and os.environ.get("DATABASE_PREPARED", "1") != "0":
    # Prepared statements: the parameters travel apart from the SQL (server-side binding), so a statement
    # sent again has the same text, and psycopg prepares it on its second use; PostgreSQL then parses and
    # plans it once per connection instead of every time. That halves the database's CPU per scan (the
    # floor's 200 scans a second, bench/bench_scan.py). DATABASE_PREPARED=0 turns it off, e.g. behind
    # PgBouncer in transaction mode before 1.21, which cannot keep a statement prepared per client.
    DATABASES["default"].setdefault("OPTIONS", {})
    DATABASES["default"]["OPTIONS"].setdefault("server_side_binding", True)
    DATABASES["default"]["OPTIONS"].setdefault("prepare_threshold", 2)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "delivery:project-list"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = os.environ.get("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT", VAR_DIR / "static"))
# WhiteNoise serves static files from the app and project folders too, so `make run` needs no
# collectstatic; behind a proxy in production, `collectstatic` still fills STATIC_ROOT for it.
WHITENOISE_USE_FINDERS = True
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # WhiteNoise warns on every start when it is missing
MEDIA_URL = "media/"
MEDIA_ROOT = Path(os.environ.get("MEDIA_ROOT", VAR_DIR / "media"))

# Celery: Redis broker when configured; otherwise every task runs eagerly in the web process so a
# newcomer needs nothing but Python. Long work keeps its own status row, so no result backend.
CELERY_TASK_ALWAYS_EAGER = not os.environ.get("CELERY_BROKER_URL")
# An eager set-up never talks to a broker; an in-memory one (with a host, or kombu warns that it has
# none) keeps anything that opens a connection anyway quiet.
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL") or "memory://localhost/"
CELERY_TASK_EAGER_PROPAGATES = True
# A recompute of the stage gates asked for by new evidence waits this long on the broker, so a burst of scans
# (200 a second on the floor) coalesces into one recompute every few seconds instead of a worker recomputing a
# 1,024-server project back to back (0.6-0.8 s each). With no broker it runs at once.
GATES_RECOMPUTE_DELAY_S = float(os.environ.get("GATES_RECOMPUTE_DELAY_S", "5"))
# A recompute asked for longer ago than this and never run (its task lost: a broker restarted without its
# data) no longer blocks the next request.
GATES_RECOMPUTE_STALE_S = float(os.environ.get("GATES_RECOMPUTE_STALE_S", "600"))
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# With acks_late, Redis hands a task that is still unacknowledged after the visibility timeout to another
# worker. It must outlast the longest a task may legitimately run: a check command's timeout is at most
# 4 hours (validation.services.MAX_COMMAND_TIMEOUT_S; NCCL's default is 1 hour). A redelivery within a
# target's lease is refused by its claim anyway; this keeps it from happening at all.
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": int(os.environ.get("CELERY_VISIBILITY_TIMEOUT_S", str(6 * 3600))),
}
# The queue tasks are sent to and a worker consumes by default ("celery"): a second deployment (or a
# test's worker) on the same Redis keeps its tasks apart with its own.
CELERY_TASK_DEFAULT_QUEUE = os.environ.get("CELERY_TASK_DEFAULT_QUEUE", "celery")

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # First: `Bearer bnt_...` node tokens (scoped, expiring; a refused one is a 401), then people.
        "projects.api.node_tokens.NodeTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
        "projects.api.node_tokens.PersonTokenAuthentication",  # DRF's TokenAuthentication, cheaper
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    # DjangoFilterBackend with the numbers of every FilterSet bounded (core/api/filters.py).
    "DEFAULT_FILTER_BACKENDS": ["core.api.filters.FilterBackend"],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 100,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # JSON bounded in size and depth (core/api/parsers.py): hostile nesting is a 400, never a 500.
    "DEFAULT_PARSER_CLASSES": [
        "core.api.parsers.BoundedJSONParser",
        "rest_framework.parsers.FormParser",
        "core.api.parsers.BoundedMultiPartParser",
    ],
    # One error shape for every endpoint (core/api/exceptions.py), documented in the schema.
    "EXCEPTION_HANDLER": "core.api.exceptions.exception_handler",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Bringup API",
    "DESCRIPTION": "GPU cluster delivery: projects, inventory, cabling, validation.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # The schema names every endpoint and field: for signed-in users only, like everything else.
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    # Serve the docs page's JavaScript from our own static files: nothing outside is reachable.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "core.api.schema.add_error_responses",
    ],
}

# Login throttling (django-axes): lock a username+IP pair out after repeated failures.
AXES_FAILURE_LIMIT = int(os.environ.get("AXES_FAILURE_LIMIT", "5"))
AXES_COOLOFF_TIME = float(os.environ.get("AXES_COOLOFF_HOURS", "0.25"))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True

# Rack power rule: a rack whose devices' maximum power leaves less than this share of its
# budget free is flagged (DOMAIN.md: at least 20% headroom).
RACK_POWER_HEADROOM = float(os.environ.get("RACK_POWER_HEADROOM", "0.20"))

# Running checks on nodes (validation runners). SSH keys and known_hosts are files on the worker.
VALIDATION_SSH_USER = os.environ.get("VALIDATION_SSH_USER", "")
VALIDATION_SSH_PORT = int(os.environ.get("VALIDATION_SSH_PORT", "22"))
VALIDATION_SSH_KEY_FILES = [f for f in os.environ.get("VALIDATION_SSH_KEY_FILES", "").split(",") if f]
VALIDATION_SSH_KNOWN_HOSTS = os.environ.get("VALIDATION_SSH_KNOWN_HOSTS", "")
VALIDATION_SSH_CONNECT_TIMEOUT = float(os.environ.get("VALIDATION_SSH_CONNECT_TIMEOUT", "10"))
# Transient runner errors (connection refused, time-outs) retry with exponential backoff.
VALIDATION_MAX_RETRIES = int(os.environ.get("VALIDATION_MAX_RETRIES", "3"))
VALIDATION_RETRY_BASE_S = float(os.environ.get("VALIDATION_RETRY_BASE_S", "5"))
VALIDATION_RETRY_MAX_S = float(os.environ.get("VALIDATION_RETRY_MAX_S", "300"))
# Targets one task claims and runs one after another (simulated runner only; see validation.services.rounds),
# and what a claim's lease adds to its commands' timeouts (the worker's own work).
VALIDATION_CHUNK_SIZE = int(os.environ.get("VALIDATION_CHUNK_SIZE", "50"))
VALIDATION_LEASE_MARGIN_S = float(os.environ.get("VALIDATION_LEASE_MARGIN_S", "120"))
# What a simulated runner's command counts for in a lease, instead of its timeout (it answers in ms).
VALIDATION_SIM_COMMAND_S = float(os.environ.get("VALIDATION_SIM_COMMAND_S", "1"))

# Uploaded tool outputs (page or node post): the largest file accepted.
UPLOAD_MAX_BYTES = int(os.environ.get("UPLOAD_MAX_BYTES", str(20 * 1024 * 1024)))
# The largest JSON body an API endpoint reads (a tool output posted as JSON text included).
API_JSON_MAX_BYTES = UPLOAD_MAX_BYTES + 64 * 1024
# The largest body any API request may declare (an upload with its form fields): checked on Content-Length
# before the body is read (core/api/middleware.py, core/api/parsers.py). DATA_UPLOAD_MAX_MEMORY_SIZE
# (Django's 2.5 MiB) still bounds the form fields held in memory, FILE_UPLOAD_MAX_MEMORY_SIZE (2.5 MiB)
# what of an uploaded file stays in memory before it goes to a temporary file.
API_BODY_MAX_BYTES = UPLOAD_MAX_BYTES + 64 * 1024
# Soak: a window's default length and how often its link counters are read. How often Celery beat looks
# for windows due a reading is SOAK_TICK_SECONDS (default 60), read by bringup/celery.py.
SOAK_DURATION_HOURS = float(os.environ.get("SOAK_DURATION_HOURS", "72"))
SOAK_SAMPLE_INTERVAL_MINUTES = float(os.environ.get("SOAK_SAMPLE_INTERVAL_MINUTES", "15"))

# The acceptance report (delivery/reports/): who delivers the cluster, as the cover and the sign-off name
# them, in English and Chinese (the report is bilingual where the project's names are).
INTEGRATOR_NAME = os.environ.get("INTEGRATOR_NAME", "Bringup Integration")
INTEGRATOR_NAME_ZH = os.environ.get("INTEGRATOR_NAME_ZH", "布林集成")
# Checking a file against the report versions reads it in 1 MiB chunks to hash it; beyond this size it is
# refused (no report file comes near it). Through the API the request body limit (API_BODY_MAX_BYTES)
# applies first: a larger file is checked by sending its SHA-256 instead.
REPORT_MATCH_MAX_BYTES = int(os.environ.get("REPORT_MATCH_MAX_BYTES", str(512 * 1024 * 1024)))

# The site's own address, put before the paths of the links in notification emails (empty: paths only).
SITE_URL = os.environ.get("SITE_URL", "")

# Email (stage regressions to the project's managers): printed to the console unless a backend is set,
# e.g. EMAIL_BACKEND=django.core.mail.backends.smtp.EmailBackend with EMAIL_HOST.
EMAIL_BACKEND = os.environ.get("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
EMAIL_HOST = os.environ.get("EMAIL_HOST", "localhost")
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "bringup@localhost")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "WARNING")},
}
