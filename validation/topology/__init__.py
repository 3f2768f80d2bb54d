"""The fabric as the switches and hosts see it, against the plan: miswires found from the live fabric.

Pure Python, no Django (fast, and tested on their own):
    naming    how a site's fabric names our devices and ports (node descriptions, OS port names)
    model     the plain data: the inventory with its indexes, planned links, observed links
    reading   a tool output (a file, a check's output) to a Source: tool detected, parsed, its host told
    mapping   Sources to an Observation: every end mapped to our ports, GUIDs and MACs learned
    compare   the plan against the Observation, link by link (ok, missing, miswired, unplanned, degraded)

With the database:
    store     a project's inventory and planned links as that plain data (a fixed number of queries)
    services  a comparison kept as a job row (TopologyComparison): files, results, what changed, cables moved
    selectors the pages' reads, scoped, with constant queries

This package's __init__ imports nothing, so importing a pure module never pulls Django in.
"""
