"""The production settings docs/operations.md documents make `check --deploy` clean, and the embedded default
is safe: debug off, a secret key of its own kept under var/."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRODUCTION = {
    "DJANGO_DEBUG": "false",
    "DJANGO_SECRET_KEY": "k3y-for-the-deploy-check-only-7f1c9a2be4d84c0f9e6a1b3c5d7e9f10a2b4c6d8",
    "DJANGO_ALLOWED_HOSTS": "bringup.example.com",
    "DJANGO_CSRF_TRUSTED_ORIGINS": "https://bringup.example.com",
    "DJANGO_SECURE_SSL_REDIRECT": "true",
    "DJANGO_SECURE_HSTS_SECONDS": "31536000",
    "DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS": "true",
    "DJANGO_SECURE_HSTS_PRELOAD": "true",
    "DJANGO_SESSION_COOKIE_SECURE": "true",
    "DJANGO_CSRF_COOKIE_SECURE": "true",
    "DJANGO_SECURE_PROXY_SSL_HEADER": "HTTP_X_FORWARDED_PROTO,https",
}


def run(env_extra: dict, *args, var_dir: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")}
    env |= {"BRINGUP_VAR_DIR": str(var_dir), "DJANGO_SETTINGS_MODULE": "bringup.settings", **env_extra}
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)


def test_check_deploy_is_clean_with_the_documented_production_settings(tmp_path):
    result = run(PRODUCTION, "check", "--deploy", "--fail-level", "WARNING", var_dir=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_check_deploy_warns_without_them(tmp_path):
    """The check itself can fail: without the TLS settings it reports them."""
    result = run({"DJANGO_SECRET_KEY": PRODUCTION["DJANGO_SECRET_KEY"]}, "check", "--deploy", "--fail-level",
                 "WARNING", var_dir=tmp_path)
    assert result.returncode != 0
    assert "security.W004" in result.stdout + result.stderr  # HSTS


def test_the_embedded_default_has_debug_off_and_a_key_of_its_own(tmp_path):
    show = "from django.conf import settings; print(settings.DEBUG, len(settings.SECRET_KEY))"
    first = run({}, "shell", "-v", "0", "-c", show, var_dir=tmp_path)
    assert first.stdout.split() == ["False", str(len((tmp_path / "secret_key").read_text().strip()))]
    assert (tmp_path / "secret_key").stat().st_mode & 0o077 == 0  # its owner's only
    key = (tmp_path / "secret_key").read_text()
    run({}, "shell", "-v", "0", "-c", show, var_dir=tmp_path)
    assert (tmp_path / "secret_key").read_text() == key  # kept, not made again
