"""Handing the as-built over to the customer's own DCIM: NetBox bulk-import files and a push to a live
NetBox through its REST API. Its task registers with delivery's (delivery.tasks)."""
