"""The floor: the technician's tablet pages (worklists per rack, network and plane; scan to rack a
device, seat an optic, confirm a cable's ends), usable offline."""
