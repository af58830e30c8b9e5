"""The inventory in the editor: `reclass-ng lsp`, a Language Server Protocol server.

- roots.py: finding the inventories of a workspace.
- live.py: one inventory kept current with the editor's unsaved buffers.
- documents.py: what is where in one buffer (keys, class names, references).
- diagnostics.py: the problems of one file, from the engine's errors and lint.
- answers.py: hover, definition, references, completion, symbols.
- server.py: the pygls server wiring them to LSP requests.

See doc/editor.rst. Uses only public engine APIs (load's Inventory, provenance, errors' places).
"""
