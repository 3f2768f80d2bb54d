"""Files people use on the floor, built from the database rows: the cut sheet (Excel), the label sheet
(PDF) and the fabric view (SVG)."""
