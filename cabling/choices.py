from django.db import models


class CableType(models.TextChoices):
    DAC = "dac", "Passive copper (DAC)"
    ACC = "acc", "Active copper (ACC/AEC)"
    AOC = "aoc", "Active optical cable"
    FIBER = "fiber", "Fiber with transceivers"
    CAT6 = "cat6", "Cat6 copper"


class CableStatus(models.TextChoices):
    PLANNED = "planned", "Planned"
    INSTALLED = "installed", "Installed"
    VERIFIED = "verified", "Verified"  # both ends scanned where the plan says, or the link seen ok in the fabric
    FAULTY = "faulty", "Faulty"


class FabricState(models.TextChoices):
    """What the latest topology comparison saw of a planned cable (blank: no comparison has seen it yet)."""

    OK = "ok", "Seen ok"
    MISSING = "missing", "Missing (down or absent)"
    MISWIRED = "miswired", "Miswired"
    DEGRADED = "degraded", "Degraded (lower speed or width)"


class ScanAction(models.TextChoices):
    """What a technician meant a scan for."""

    LOOKUP = "lookup", "Look up"  # what is this code? (the search box, the first scan of a flow)
    RACK = "rack", "Rack a device"
    OPTIC = "optic", "Seat an optic"
    CABLE_END = "cable_end", "Confirm a cable end"


class ScanResult(models.TextChoices):
    ACCEPTED = "accepted", "Accepted"  # recorded what the scan said (a device racked, an end confirmed)
    REFUSED = "refused", "Refused"  # does not match the plan or the rules: nothing changed, the reason says why
    CONFLICT = "conflict", "Conflict"  # someone else did it first, at the same moment or before
    FOUND = "found", "Found"  # a lookup that resolved the code


class ScanSource(models.TextChoices):
    PAGE = "page", "Floor page"
    OFFLINE = "offline", "Floor page, sent when the network came back"
    API = "api", "API (script or scanner app)"


class Side(models.TextChoices):
    A = "A", "A"
    B = "B", "B"


# A cable in one of these states is physically in place: a re-plan never removes it silently.
PHYSICAL_CABLE_STATUSES = frozenset({CableStatus.INSTALLED, CableStatus.VERIFIED, CableStatus.FAULTY})


class FabricPlanSource(models.TextChoices):
    FORM = "form", "Plan page"
    API = "api", "API"
    COMMAND = "command", "plan_fabric command"
    DEMO = "demo", "seed_demo"


class LabelScope(models.TextChoices):
    """What a label sheet export prints: every cable end of the project, the ends in one rack, or both
    ends of every cable of one network."""

    ALL = "all", "The whole fabric"
    RACK = "rack", "One rack"
    NETWORK = "network", "One network"


class LabelStockName(models.TextChoices):
    """The label stocks the sheet is laid out for (cabling.exports.labels_pdf.STOCKS has their geometry)."""

    L7651 = "L7651", "Avery L7651 (A4, 65 per sheet)"
    THERMAL_2X1 = "thermal-2x1", "Thermal roll, 2 x 1 in"


class SwapKind(models.TextChoices):
    """What a swap replaced on the floor."""

    OPTIC = "optic", "Optic"
    CABLE = "cable", "Cable"


class RmaState(models.TextChoices):
    """Where the returned part stands with its vendor, in the order an RMA usually goes. Blank-free: "none"
    is a part scrapped or kept without a return (a cable cut to length, an optic the site keeps as spare)."""

    NONE = "none", "No RMA"
    OPEN = "open", "Case opened, awaiting the vendor's RMA number"
    TO_SHIP = "to_ship", "Authorised, to ship back"
    SHIPPED = "shipped", "Shipped to the vendor"
    REPLACED = "replaced", "Replaced by the vendor"
    CREDITED = "credited", "Credited by the vendor"
    REJECTED = "rejected", "Rejected by the vendor (no fault found)"


# Where the vendor has had its last word: nothing more is expected of the case.
CLOSED_RMA_STATES = frozenset({RmaState.REPLACED, RmaState.CREDITED, RmaState.REJECTED})
# Past the first step an RMA has the vendor's case number.
RMA_STATES_NEEDING_CASE = frozenset(RmaState.values) - {RmaState.NONE, RmaState.OPEN}
