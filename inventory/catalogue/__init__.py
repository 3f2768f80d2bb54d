"""The hardware catalogue as data: one device-type YAML file per hardware model in `data/`, in the format of
NetBox's community device-type library plus a few keys of ours under `bringup:` (what NetBox cannot say:
the kind of hardware, NICs, breakout lanes, networks). `reader` turns such a file, ours or any from the
community library, into plain data with every refusal placed by file, line and field;
`inventory.services.catalogue_load` writes it."""

from pathlib import Path

DATA_DIR = Path(__file__).resolve().parent / "data"


def shipped_files() -> list[Path]:
    """The catalogue files shipped with Bringup, in a stable order."""
    return sorted(DATA_DIR.glob("*.yaml"))
