"""Swaps: an optic or a cable replaced on the floor (services: `optic_swap`, `cable_swap`), sent back through
verification, and its RMA moving on (`swap_rma_update`); with its pages, its API and its panels on the pages of
cables and optics."""
