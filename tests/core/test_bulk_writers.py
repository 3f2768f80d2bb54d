"""The bulk writers write rows around the ORM (core.rows, core.bulk_history, and the apps' sql modules), so two
things the ORM would otherwise keep true are held here instead:

- Rows written around the ORM send no model signal. A receiver connected later to one of the models they
  write (a post_save on Cable or Port) would silently not fire for scans, plan applies, imports or topology
  comparisons: none may listen, simple_history's own receivers excepted (the writers write its history rows
  themselves). The models are core.bulk_history.BULK_WRITTEN_MODELS, and every writer refuses another.
- A history row is written by the writers' own INSERTs, their columns named from simple_history's tracked
  fields: a simple_history upgrade that adds or renames a column of the historical tables must fail here,
  not in production."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest
from django.apps import apps
from django.db.models import signals
from django.utils import timezone
from simple_history.models import HistoricalRecords

from core import rows
from core.bulk_history import BULK_WRITTEN_MODELS, bulk_written, history_columns, history_insert_from

MODEL_SIGNALS = ("pre_init", "post_init", "pre_save", "post_save", "pre_delete", "post_delete")
# simple_history's receivers, which keep its history on the ORM's writes: the bulk writers write those rows.
HISTORY_RECEIVERS = {"post_save", "pre_delete", "post_delete"}


def bulk_written_models() -> list:
    return [apps.get_model(label) for label in BULK_WRITTEN_MODELS]


def _is_historys_own(receiver, model, signal_name: str) -> bool:
    owner = getattr(receiver, "__self__", None)
    return (isinstance(owner, HistoricalRecords) and owner.cls is model and signal_name in HISTORY_RECEIVERS
            and receiver.__func__.__name__ == signal_name)


def listeners(model) -> list[str]:
    """Every receiver connected to a model signal of `model` (or of the through model of one of its
    many-to-many fields) but simple_history's own, as "signal: receiver"."""
    found = []
    for name in MODEL_SIGNALS:
        sync, asynchronous = getattr(signals, name)._live_receivers(model)
        found += [f"{name}: {receiver!r}" for receiver in [*sync, *asynchronous]
                  if not _is_historys_own(receiver, model, name)]
    for field in model._meta.many_to_many:
        sync, asynchronous = signals.m2m_changed._live_receivers(field.remote_field.through)
        found += [f"m2m_changed of {field.name}: {receiver!r}" for receiver in [*sync, *asynchronous]]
    return found


def test_nothing_listens_to_a_model_written_around_the_orm():
    heard = {model._meta.label: listeners(model) for model in bulk_written_models()}
    heard = {label: found for label, found in heard.items() if found}
    assert not heard, (
        "Rows of these models are written around the ORM (core.rows, core.bulk_history, the apps' sql modules: "
        "scans, plan applies, imports, topology comparisons) and send no model signal, so these receivers would "
        f"silently miss those writes: {heard}. Do the work in the service that writes, not in a receiver.")


def test_a_receiver_on_one_of_them_is_caught():
    from cabling.models import Cable

    def planted(sender, instance, **kwargs):
        pass

    signals.post_save.connect(planted, sender=Cable)
    try:
        assert [found for found in listeners(Cable) if "planted" in found]
    finally:
        signals.post_save.disconnect(planted, sender=Cable)
    assert not listeners(Cable)


def test_the_writers_refuse_a_model_nobody_checked():
    from projects.models import Project

    assert [bulk_written(model) for model in bulk_written_models()] == bulk_written_models()
    with pytest.raises(TypeError, match="BULK_WRITTEN_MODELS"):
        bulk_written(Project)


# --- the historical tables' columns ------------------------------------------------------------------------


def recorded_models() -> list:
    return [model for model in bulk_written_models() if hasattr(model, "history")]


def column_drift(model) -> list[str]:
    """How the columns the writers give a history row of `model` differ from its historical table's."""
    historical = model.history.model
    copied, own = history_columns(model)
    written = [*copied, *own]
    table = [field.column for field in historical._meta.concrete_fields if field is not historical._meta.pk]
    drift = [f"not written: {column}" for column in table if column not in written]
    drift += [f"written but not a column: {column}" for column in written if column not in table]
    drift += [f"written twice: {column}" for column in {c for c in written if written.count(c) > 1}]
    source = {field.column for field in model._meta.concrete_fields}
    drift += [f"copied but not a column of {model._meta.db_table}: {column}" for column in copied
              if column not in source]
    return drift


def test_the_writers_history_columns_are_the_historical_tables():
    assert {model._meta.label for model in recorded_models()} >= {
        "cabling.Cable", "cabling.CableEnd", "inventory.Port", "inventory.Device"}
    drift = {model._meta.label: column_drift(model) for model in recorded_models()}
    assert not {label: found for label, found in drift.items() if found}, drift


def test_the_statements_name_those_columns():
    """history_insert_from (history_copy, update_recorded, the apps' CTEs) and core.rows (a scan's writes) build
    their INSERTs from history_columns: each names exactly those columns, in that order."""
    for model in recorded_models():
        copied, own = history_columns(model)
        expected = [*copied, *own]
        insert, _ = history_insert_from(model, "x", user=SimpleNamespace(pk=1), reason="r", at=timezone.now())
        assert _insert_columns(insert) == expected, model
        for statement in (rows._tracked_update_sql(model, ("id",)).history_head,
                          rows._tracked_update_sql(model, ("id",)).history):
            assert _insert_columns(statement) == expected, model


def _insert_columns(statement: str) -> list[str]:
    listed = re.match(r'\s*INSERT INTO "?[\w.]+"? \(([^)]*)\)', statement).group(1)
    return [name.strip().strip('"') for name in listed.split(",")]


def test_a_column_simple_history_adds_is_caught(monkeypatch):
    from cabling.models import Cable

    meta = Cable.history.model._meta
    added = SimpleNamespace(column="history_relation_id", name="history_relation")
    monkeypatch.setattr(meta, "concrete_fields", (*meta.concrete_fields, added))
    assert column_drift(Cable) == ["not written: history_relation_id"]
