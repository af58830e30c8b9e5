"""An edit to an open buffer, in process (reclass_ng.lsp.live): what it reads and prepares
again, and that the nodes it renders again equal a fresh render of the edited files."""

from __future__ import annotations

from pathlib import Path

import pytest

import reclass_ng
from reclass_ng.lsp.live import EditedInventory
from reclass_ng.lsp.roots import find_inventory_roots
from reclass_ng.prepare import EntityPreparer
from reclass_ng.storage import yaml_fs

EDITED = "classes:\n  - .base\nparameters:\n  server: caddy\n  port: ${site}\n"


@pytest.fixture
def live(inventory: Path) -> EditedInventory:
    found = EditedInventory(find_inventory_roots([str(inventory)])[0])
    found.render_all()
    return found


def test_an_edit_walks_no_directory_and_renders_what_a_fresh_load_renders(
        inventory: Path, live: EditedInventory, monkeypatch: pytest.MonkeyPatch) -> None:
    web = inventory / "inv/classes/app/web.yml"
    walks = []
    real_walk = yaml_fs._walk_dirs
    monkeypatch.setattr(yaml_fs, "_walk_dirs", lambda *args: walks.append(args)
                        or real_walk(*args))
    rendered = live.set_buffer(str(web), EDITED.encode())
    assert rendered == ["web1", "web2"]
    assert walks == []  # the listing is the last generation's: an edit changes no name
    web.write_text(EDITED)
    fresh = reclass_ng.load(str(inventory / "inv"))
    for name in ("web1", "web2", "db1"):
        expected = fresh.nodeinfo(name)
        info = live.nodes[name].info
        assert info is not None
        assert info["parameters"] == expected["parameters"], name
        assert info["classes"] == expected["classes"], name


def test_an_edit_prepares_only_the_edited_files_entity_again(
        inventory: Path, live: EditedInventory, monkeypatch: pytest.MonkeyPatch) -> None:
    prepared = []
    real_entity = EntityPreparer.entity
    monkeypatch.setattr(EntityPreparer, "entity", lambda self, raw, source, name: prepared.append(
        source.path) or real_entity(self, raw, source, name))
    web = inventory / "inv/classes/app/web.yml"
    live.set_buffer(str(web), EDITED.encode())
    assert [Path(path).name for path in prepared if path] == ["web.yml"]
