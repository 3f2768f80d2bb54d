"""Integers sent to PostgreSQL as bound parameters are checked against their column's range.

With server-side binding (settings: prepared statements on PostgreSQL), Django hands an IntegerField's value
to psycopg as `Int4` (SmallIntegerField `Int2`, BigIntegerField `Int8`), and psycopg's binary dumpers for
those pack the low bits only: 2**40 into an integer column arrives as 0, silently, where the same value
sent as text is refused by the database ("out of range"). A hostile or broken figure must be refused, never
stored wrapped, so every PostgreSQL connection that binds on the server gets these dumpers instead: the
same bytes for a value in range, PostgreSQL's own error (a DataError) for one out of it."""

from __future__ import annotations

from psycopg import errors
from psycopg.adapt import Dumper
from psycopg.postgres import types as pg_types
from psycopg.pq import Format
from psycopg.types.numeric import Int2, Int4, Int8


class _CheckedIntBinaryDumper(Dumper):
    format = Format.BINARY
    type_name = ""
    size = 0

    def __init__(self, cls, context=None):
        super().__init__(cls, context)
        self.oid = pg_types[self.type_name].oid

    def dump(self, obj) -> bytes:
        try:
            return int(obj).to_bytes(self.size, "big", signed=True)
        except OverflowError:
            raise errors.NumericValueOutOfRange(f"value {int(obj)} is out of range for type {self.type_name}") from None


class CheckedInt2BinaryDumper(_CheckedIntBinaryDumper):
    type_name, size = "int2", 2


class CheckedInt4BinaryDumper(_CheckedIntBinaryDumper):
    type_name, size = "int4", 4


class CheckedInt8BinaryDumper(_CheckedIntBinaryDumper):
    type_name, size = "int8", 8


CHECKED_DUMPERS = ((Int2, CheckedInt2BinaryDumper), (Int4, CheckedInt4BinaryDumper), (Int8, CheckedInt8BinaryDumper))


def integer_dumpers_checked(sender, connection, **kwargs) -> None:
    """connection_created receiver: on a PostgreSQL connection that binds on the server, the checked
    dumpers replace psycopg's for this connection only."""
    if connection.vendor != "postgresql" or not connection.settings_dict.get("OPTIONS", {}).get("server_side_binding"):
        return
    for wrapper, dumper in CHECKED_DUMPERS:
        connection.connection.adapters.register_dumper(wrapper, dumper)
