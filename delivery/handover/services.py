"""NetBox pushes: starting one (a job row with the API token sealed on it) and running one (the task's body).

Where the token lives, and why there: the push runs as a job (a Celery task fills a NetBoxPush row), and a
Celery message sits in Redis, readable by anyone with the broker, for as long as it waits; so the message
carries the row's id only. The token waits on the row, encrypted (Fernet: AES with an HMAC) with a key
derived from SECRET_KEY, never in clear in the database, the broker or a log line; the run wipes it as the
job settles, whatever happened, and refuses one sealed more than TOKEN_TTL ago (a job no worker ever took
holds only a token that no longer opens). Nobody can read it back: the page only ever asks for a new one.
"""

from __future__ import annotations

import base64
import hashlib
import ipaddress
import logging
import re
from datetime import timedelta
from urllib.parse import urlsplit

from cryptography.fernet import Fernet, InvalidToken
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from core.choices import ACTIVE_JOB_STATUSES, JobStatus
from core.jobs import enqueue_on_commit
from delivery.handover.push import Pusher, PushError, connect
from delivery.models import NetBoxPush
from projects.models import Project

logger = logging.getLogger(__name__)

# Sent by name (core.jobs): tasks.py imports this module, so importing the task back would be a cycle.
PUSH_TASK = "delivery.handover.tasks.netbox_push"
TOKEN_TTL = 6 * 3600  # seconds a sealed token opens: a queue that long is a stuck worker, not a busy one
TOKEN_MAX = 256
TOKEN_CHARS = re.compile(r"^[\x21-\x7e]+$")  # printable ASCII, no spaces: v1 hex keys and v2 nbt_ tokens


class TokenUnavailable(Exception):
    """The sealed token cannot be opened (gone, expired, or sealed under another SECRET_KEY)."""


def _fernet() -> Fernet:
    digest = hashlib.sha256(b"bringup.netbox-push-token\x00" + settings.SECRET_KEY.encode()).digest()
    return Fernet(base64.urlsafe_b64encode(digest))


def token_seal(token: str) -> str:
    return _fernet().encrypt(token.encode()).decode()


def token_unseal(sealed: str) -> str:
    if not sealed:
        raise TokenUnavailable("The API token is no longer stored: start the push again with the token.")
    try:
        return _fernet().decrypt(sealed.encode(), ttl=TOKEN_TTL).decode()
    except InvalidToken:
        raise TokenUnavailable(
            "The API token kept for this job expired or cannot be opened: start the push again with the token."
        ) from None


def netbox_url_errors(url: str) -> list[str]:
    """What is wrong with a NetBox URL: http(s), a host, no credentials in it (the URL is kept in clear)."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        return ["Not a URL: give NetBox's address, e.g. https://netbox.example.com."]
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return ["Give NetBox's address with http:// or https://, e.g. https://netbox.example.com."]
    if parts.username or parts.password:
        return ["Leave user names and passwords out of the URL: the API token is the only credential needed."]
    if parts.query or parts.fragment:
        return ["Give NetBox's root address, without ?query or #fragment."]
    if _link_local(parts.hostname):  # a cloud's metadata service lives there; NetBox never does
        return ["That address is link-local (169.254.x.x or fe80::): give NetBox's address."]
    return []


def _link_local(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_link_local
    except ValueError:
        return False  # a name: resolved by the push itself


def _token_errors(token: str) -> list[str]:
    if not token:
        return ["Paste an API token of the customer's NetBox (write-enabled for an apply)."]
    if len(token) > TOKEN_MAX or not TOKEN_CHARS.match(token):
        return [f"An API token is at most {TOKEN_MAX} printable characters without spaces."]
    return []


@transaction.atomic
def netbox_push_start(*, project: Project, user, url: str, token: str, apply: bool = False) -> NetBoxPush:
    """Queue a push of the project's as-built to NetBox at `url`: a dry run, or with `apply` the real thing.
    The token is sealed on the row for the job's life only (module docstring)."""
    url, token = (url or "").strip(), (token or "").strip()
    errors = {}
    if url_errors := netbox_url_errors(url):
        errors["netbox_url"] = url_errors
    if token_errors := _token_errors(token):
        errors["token"] = token_errors
    if errors:
        raise ValidationError(errors)
    _forget_stale_tokens(project)
    push = NetBoxPush(project=project, requested_by=user, netbox_url=url, apply=apply, status=JobStatus.QUEUED,
                      token_sealed=token_seal(token))
    push.full_clean()
    push.save()
    enqueue_on_commit(PUSH_TASK, push.pk)
    return push


def _forget_stale_tokens(project: Project) -> None:
    """Tokens of the project's pushes that settled without wiping theirs (a crash) or waited too long."""
    stale = timezone.now() - timedelta(seconds=TOKEN_TTL)
    (NetBoxPush.objects.filter(project=project).exclude(token_sealed="")
     .exclude(status__in=ACTIVE_JOB_STATUSES, created_at__gte=stale).update(token_sealed=""))


@transaction.atomic
def netbox_push_record(*, project: Project, url: str, apply: bool, user=None) -> NetBoxPush:
    """A push row for a push run in this process with a token it holds itself (the netbox_push command):
    nothing sealed, nothing enqueued."""
    if url_errors := netbox_url_errors(url):
        raise ValidationError({"netbox_url": url_errors})
    push = NetBoxPush(project=project, requested_by=user, netbox_url=url.strip(), apply=apply,
                      status=JobStatus.QUEUED)
    push.full_clean()
    push.save()
    return push


def netbox_push_run(*, push_id: int, token: str | None = None) -> NetBoxPush:
    """Run a push (the task's body): compare, and apply when asked; the outcome, the summary per kind of
    object, and why it failed, on the row. `token` is given by a caller that holds it (the command);
    otherwise it is the one sealed on the row. Safe to run twice: a push that is over is left alone. The
    sealed token is wiped whatever happens."""
    push = NetBoxPush.objects.select_related("project").get(pk=push_id)
    if push.status not in ACTIVE_JOB_STATUSES:
        return push
    try:
        if not (push.start(step="connecting") or push.status == JobStatus.RUNNING):
            return push  # another worker took it between the read and the start
        _run(push, token)
    finally:
        NetBoxPush.objects.filter(pk=push.pk).exclude(token_sealed="").update(token_sealed="")
        push.token_sealed = ""
    return push


def _run(push: NetBoxPush, token: str | None) -> None:
    try:
        token = token if token is not None else token_unseal(push.token_sealed)
    except TokenUnavailable as exc:
        push.fail(str(exc), token_sealed="")
        return
    mode = "apply" if push.apply else "dry run"
    push.append_log(f"{mode} against {push.netbox_url}")
    pusher = Pusher(push.project, connect(push.netbox_url, token), apply=push.apply,
                    report=lambda done, total, step: push.advance(done, total=total, step=step))
    try:
        steps = pusher.run()
    except PushError as exc:
        _fail(push, pusher, exc.messages)
        return
    except Exception as exc:  # whatever went wrong, the row says so rather than stay "running"
        logger.exception("NetBox push %s failed", push.pk)
        _fail(push, pusher, [f"The push failed: {exc.__class__.__name__}: {exc}"])
        return
    push.append_log(_totals_line(steps))
    push.finish(summary={"steps": steps, "applied": push.apply}, netbox_version=pusher.version[:20],
                token_sealed="")


def _fail(push: NetBoxPush, pusher: Pusher, messages: list[str]) -> None:
    """Fail with the steps finished before the failure kept: an apply that stopped half-way says what it
    already wrote (a second apply finds those and goes on)."""
    if push.apply and pusher.results:
        messages = [*messages, "What the steps before this one wrote stays in NetBox; once fixed, apply again: "
                                "it finds what is there and goes on."]
    push.append_log(f"failed: {messages[0]}")
    push.fail(messages, summary={"steps": pusher.results, "applied": push.apply},
              netbox_version=pusher.version[:20], token_sealed="")


def _totals_line(steps: list[dict]) -> str:
    totals = {key: sum(step[key] for step in steps) for key in ("create", "update", "unchanged")}
    return f"{totals['create']} to create, {totals['update']} to update, {totals['unchanged']} unchanged"
