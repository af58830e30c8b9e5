"""Finding and reading node and class files."""

from reclass_ng.storage.yaml_fs import YamlFsStorage

__all__ = ["YamlFsStorage"]
