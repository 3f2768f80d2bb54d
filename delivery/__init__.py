"""The delivery of one cluster, on the top floor: it reads inventory, cabling and validation, and nothing below
it imports it (the floors are in docs/architecture.md and checked by import-linter)."""
