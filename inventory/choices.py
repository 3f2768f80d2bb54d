from django.db import models


class RackStatus(models.TextChoices):
    PLANNED = "planned", "Planned"
    INSTALLED = "installed", "Installed"
    POWERED = "powered", "Powered"
    ACTIVE = "active", "Active"


class HardwareKind(models.TextChoices):
    GPU_SERVER = "gpu_server", "GPU server"
    STORAGE_SERVER = "storage_server", "Storage server"
    IB_SWITCH = "ib_switch", "InfiniBand switch"
    ETH_SWITCH = "eth_switch", "Ethernet switch"
    MGMT_SWITCH = "mgmt_switch", "Management switch"
    PDU = "pdu", "PDU"
    OTHER = "other", "Other"


class PortKind(models.TextChoices):
    INFINIBAND = "infiniband", "InfiniBand"
    ETHERNET = "ethernet", "Ethernet"
    BMC = "bmc", "BMC / management Ethernet"
    POWER = "power", "Power"
    CONSOLE = "console", "Console"


class Network(models.TextChoices):
    COMPUTE = "compute", "Compute (training fabric)"
    STORAGE = "storage", "Storage"
    INBAND = "inband", "In-band management"
    OOB = "oob", "Out-of-band management"


class Face(models.TextChoices):
    FRONT = "front", "Front"
    REAR = "rear", "Rear"


class DeviceStatus(models.TextChoices):
    PLANNED = "planned", "Planned"
    RECEIVED = "received", "Received"
    RACKED = "racked", "Racked"
    POWERED = "powered", "Powered"
    READY = "ready", "Ready"


class PortStatus(models.TextChoices):
    PLANNED = "planned", "Planned"
    CONNECTED = "connected", "Connected"
    UP = "up", "Up"
    DOWN = "down", "Down"
    DISABLED = "disabled", "Disabled"


class OpticStatus(models.TextChoices):
    IN_STOCK = "in_stock", "In stock"
    INSTALLED = "installed", "Installed"
    FAULTY = "faulty", "Faulty"
    RMA = "rma", "RMA"


class FormFactor(models.TextChoices):
    OSFP = "osfp", "OSFP"
    QSFP112 = "qsfp112", "QSFP112"
    QSFP_DD = "qsfp_dd", "QSFP-DD"
    QSFP56 = "qsfp56", "QSFP56"
    QSFP28 = "qsfp28", "QSFP28"
    SFP28 = "sfp28", "SFP28"
    SFP_PLUS = "sfp_plus", "SFP+"
    RJ45 = "rj45", "RJ45"


class DeviceRole(models.TextChoices):
    GPU_NODE = "gpu_node", "GPU node"
    STORAGE_NODE = "storage_node", "Storage node"
    LEAF = "leaf", "Leaf switch"
    SPINE = "spine", "Spine switch"
    SUPER_SPINE = "super_spine", "Super-spine switch"
    MGMT_SWITCH = "mgmt_switch", "Management switch"
    HEAD_NODE = "head_node", "Head / login node"
    PDU = "pdu", "PDU"
    OTHER = "other", "Other"


class ImportKind(models.TextChoices):
    """What one sheet (or one CSV file) of a bulk import holds, in the order they are applied."""

    RACKS = "racks", "Racks"
    DEVICES = "devices", "Devices"
    NICS = "nics", "NICs"
    OPTICS = "optics", "Optics"


class ImportAction(models.TextChoices):
    """What one checked row of an import will do."""

    CREATE = "create", "Create"
    UPDATE = "update", "Update"
    UNCHANGED = "unchanged", "Unchanged"
