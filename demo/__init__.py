"""The demo projects (DEMO-72, LAB-8) and their walk through a delivery, built through the services of every app.
Sandboxes only: the simulated cluster's results never count as evidence of a real project."""
