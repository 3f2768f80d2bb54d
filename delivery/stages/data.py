"""The default stage template as data (the data migration and `stage_template_default` load it): the nine
stages of a GPU cluster delivery (docs/domain), their gates, what starting each starts, and their order
and dependencies. Pure data: changing the flow is editing this list (or a template in the admin), not code."""

DEFAULT_TEMPLATE_NAME = "GPU cluster delivery"
DEFAULT_TEMPLATE_DESCRIPTION = (
    "Site readiness, racking, cabling, OS and drivers, network configuration, link checks, benchmarks, "
    "soak and acceptance, each verified by its gate before the stages after it start."
)

DEFAULT_STAGES = [
    {"key": "site_readiness", "title": "Site readiness", "gate": "inventory.site_readiness", "depends_on": []},
    {"key": "racking", "title": "Racking", "gate": "inventory.racking", "depends_on": ["site_readiness"]},
    {"key": "cabling", "title": "Cabling", "gate": "validation.cabling", "depends_on": ["racking"],
     "work": "topology"},
    {"key": "os_drivers", "title": "OS and drivers", "gate": "validation.os_drivers", "depends_on": ["racking"],
     "work": "node_inventory"},
    {"key": "network_config", "title": "Network configuration", "gate": "checklist", "depends_on": ["cabling"],
     "checklist": [
         "InfiniBand subnet manager running (primary and standby)",
         "Adaptive routing enabled on every switch",
         "SHARP aggregation manager running",
         "RoCE storage network lossless: PFC and ECN set on every port",
         "In-band management network up (NFS, Slurm, user access)",
         "Out-of-band network reaches every BMC, switch and PDU",
     ]},
    {"key": "link_checks", "title": "Link checks", "gate": "validation.link_checks",
     "depends_on": ["cabling", "network_config"], "work": "link_health"},
    {"key": "benchmarks", "title": "Benchmarks", "gate": "validation.benchmarks",
     "depends_on": ["link_checks", "os_drivers"], "work": "benchmarks"},
    {"key": "soak", "title": "Soak", "gate": "validation.soak", "depends_on": ["benchmarks"], "work": "soak"},
    {"key": "acceptance", "title": "Acceptance", "gate": "delivery.acceptance_signed", "depends_on": ["soak"]},
]
