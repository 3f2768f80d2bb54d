"""delivery's roof: what reads every domain app at once (the project home, the demo; later the
workflow stages, dashboards and reports). It may import inventory, cabling and validation; nothing
below it imports it (the floors are in docs/architecture.md and checked by import-linter)."""
