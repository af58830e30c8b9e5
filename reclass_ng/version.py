"""Version of reclass-ng and of the kapicorp-reclass release it reproduces."""

__version__ = "0.1.0"
# `reclass --version` answers as the reference does, so tools that parse it keep working.
COMPATIBLE_RECLASS_VERSION = "2.0.0"
