"""The customer's acceptance report: the frozen snapshot (snapshot.py), its two renderers (pdf.py,
excel.py), report versions with their files and hashes, signing and checking a file against them."""
