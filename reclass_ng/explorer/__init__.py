"""The read-only web explorer served at /ui/ by `reclass-ng serve` (and `reclass-ng ui`).

Pages are rendered on the server from the engine's data and the existing tools (explain, diff,
the classifier); a small stylesheet and script are shipped as package data, with no build step
and nothing fetched from elsewhere. The service mounts it (`reclass_ng.server.explorer_routes`):
the explorer is a tool and never imports the server.
"""
