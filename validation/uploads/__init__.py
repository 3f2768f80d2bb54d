"""Tool outputs that arrive as files: uploaded on the page by a technician or posted by a node to the API,
parsed by a task and filed as check results matched to the project's devices and ports."""
