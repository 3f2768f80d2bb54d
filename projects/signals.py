"""A person's API token (DRF authtoken) dies with the password it was obtained with: whatever changes the
stored password (the admin's password form, `changepassword`, set_password and save anywhere) deletes the
user's token, so whoever held it must sign in again (POST /api/token/ gives a new one).

Compared in pre_save against the stored hash, so no path that saves a user can skip it. One exception:
Django re-hashes a password whose hash is outdated (a newer hasher or cost) when its owner signs in; the
password is the same, so the token stays (otherwise every Django upgrade would cut off every script)."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.hashers import get_hasher, identify_hasher
from django.db.models.signals import post_save, pre_save
from django.dispatch import receiver
from rest_framework.authtoken.models import Token

CHANGED = "_bringup_password_changed"


def _is_rehash(user, stored: str, update_fields) -> bool:
    """Django's check_password saves a re-hashed password with update_fields=["password"] after dropping the
    raw password, and only when the stored hash is due for it."""
    if getattr(user, "_password", None) is not None or update_fields is None or set(update_fields) != {"password"}:
        return False
    try:
        hasher = identify_hasher(stored)
    except ValueError:
        return False
    preferred = get_hasher()  # what django.contrib.auth.hashers.check_password asks, in its order
    return hasher.algorithm != preferred.algorithm or preferred.must_update(stored)


@receiver(pre_save, sender=settings.AUTH_USER_MODEL, dispatch_uid="bringup-password-change-seen")
def password_change_seen(sender, instance, update_fields=None, raw=False, **kwargs):
    setattr(instance, CHANGED, False)
    if raw or instance.pk is None or (update_fields is not None and "password" not in update_fields):
        return
    stored = sender._default_manager.filter(pk=instance.pk).values_list("password", flat=True).first()
    if stored is not None and stored != instance.password and not _is_rehash(instance, stored, update_fields):
        setattr(instance, CHANGED, True)


@receiver(post_save, sender=settings.AUTH_USER_MODEL, dispatch_uid="bringup-password-change-rotates-token")
def api_token_dropped_on_password_change(sender, instance, raw=False, **kwargs):
    if getattr(instance, CHANGED, False):
        Token.objects.filter(user=instance).delete()
        setattr(instance, CHANGED, False)
