"""Who may do what: tokens with roles, stored hashed, compared in constant time.

Two sources of tokens, usable together:

* the single token of earlier versions (`RECLASS_NG_TOKEN` or `--token-file`): an admin;
* a roles file (`--tokens-file`), YAML, kept next to the inventory (not in it), re-read when it
  changes (its content, compared by hash)::

      tokens:
        - name: web-team
          sha256: 5e884898da28047151d0e56f8dc62927...   # of the token's UTF-8 bytes
          role: operator                                 # viewer | operator | admin
          group: b0f03a26-d797-4a9c-aa99-dbe317af6331    # optional: only this subtree
          permissions: [classify, facts]                 # optional extras

A **viewer** reads; an **operator** reads and changes groups; an **admin** may do everything
(node files, imports, class syncs, tokens' permissions included). `group` limits a viewer or
operator to that group and its descendants: other groups are left out of lists and are 403.
`classify` lets a token classify nodes (which records check-ins) and `facts` lets it write
nodes' observed facts. Only SHA-256 digests are stored: tokens are long random strings (`reclass-ng
tokens add` makes them), for which a fast hash is as safe as a slow one and keeps a request
cheap.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import yaml

from reclass_ng.classifier.groups import ROOT_GROUP_ID, is_uuid
from reclass_ng.classifier.hierarchy import GroupTree
from reclass_ng.errors import ConfigError
from reclass_ng.storage.regular_file import UnreadableFile, read_regular_file

VIEWER, OPERATOR, ADMIN = "viewer", "operator", "admin"
ROLES = (VIEWER, OPERATOR, ADMIN)
CLASSIFY, FACTS = "classify", "facts"
PERMISSIONS = (CLASSIFY, FACTS)


@attrs.frozen
class Principal:
    """The caller: a token's name, role, subtree (None: all groups) and extra permissions."""

    name: str
    role: str
    group: str | None = None
    permissions: frozenset[str] = frozenset()

    def may(self, permission: str) -> bool:
        return self.role == ADMIN or permission in self.permissions

    def may_write_groups(self) -> bool:
        return self.role in (OPERATOR, ADMIN)

    def sees_group(self, tree: GroupTree | None, group_id: str) -> bool:
        """True when the group is in the principal's subtree (always, without a subtree)."""
        if self.group is None or self.role == ADMIN:
            return True
        if tree is None:
            return False
        group = tree.get(group_id)
        if group is None:
            return False
        return any(g.id == self.group for g in tree.chain(group))


ANONYMOUS_READER = Principal("anonymous", VIEWER, None, frozenset({CLASSIFY}))


@attrs.frozen
class TokenEntry:
    principal: Principal
    digest: bytes


def token_digest(token: bytes) -> bytes:
    """SHA-256 of a token's bytes (what the roles file stores, hex-encoded)."""
    return hashlib.sha256(token).digest()


def _entry(data: Any, where: str) -> TokenEntry:
    if not isinstance(data, Mapping):
        raise ConfigError(f"{where}: expected a mapping with name, sha256 and role")
    unknown = sorted(set(data) - {"name", "sha256", "role", "group", "permissions"})
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)}")
    name, digest, role = data.get("name"), data.get("sha256"), data.get("role")
    if not isinstance(name, str) or not name:
        raise ConfigError(f"{where}: `name` must be a non-empty string")
    if not isinstance(digest, str) or len(digest) != 64:
        raise ConfigError(f"{where} ({name}): `sha256` must be the 64 hex digits of the token's "
                          "SHA-256 (never the token itself)")
    try:
        raw = bytes.fromhex(digest)
    except ValueError:
        raise ConfigError(f"{where} ({name}): `sha256` is not hexadecimal") from None
    if role not in ROLES:
        raise ConfigError(f"{where} ({name}): `role` must be one of {', '.join(ROLES)}, "
                          f"got {role!r}")
    group = data.get("group")
    if group is not None and not is_uuid(group):
        raise ConfigError(f"{where} ({name}): `group` must be a group id (UUID), got {group!r}")
    permissions = data.get("permissions") or []
    if not isinstance(permissions, list) or not set(permissions) <= set(PERMISSIONS):
        raise ConfigError(f"{where} ({name}): `permissions` must be a list of "
                          f"{', '.join(PERMISSIONS)}")
    group = group.lower() if group and group.lower() != ROOT_GROUP_ID else None
    return TokenEntry(Principal(name, role, group, frozenset(permissions)), raw)


def read_tokens_file(path: str | os.PathLike[str]) -> list[TokenEntry]:
    """The entries of a roles file; ConfigError naming the file and entry when one is wrong."""
    return parse_tokens_file(_tokens_file_bytes(path), path)


def _tokens_file_bytes(path: str | os.PathLike[str]) -> bytes:
    """The bytes of a roles file: a regular file of at most MAX_TOKENS_FILE_BYTES."""
    try:
        return read_regular_file(path, MAX_TOKENS_FILE_BYTES)[0]
    except OSError as err:
        if isinstance(err, UnreadableFile) and err.too_large:
            raise ConfigError(f"tokens file {path}: larger than {MAX_TOKENS_FILE_BYTES} bytes"
                              ) from None
        raise ConfigError(f"tokens file {path}: cannot read: {err.strerror}") from err


def parse_tokens_file(content: bytes, path: str | os.PathLike[str]) -> list[TokenEntry]:
    """The entries of a roles file's bytes; `path` names the file in the ConfigError."""
    try:
        data = yaml.safe_load(content.decode("utf-8"))
    except (UnicodeDecodeError, yaml.YAMLError) as err:
        raise ConfigError(f"tokens file {path}: cannot read: {err}") from err
    if data is None:
        return []
    if not isinstance(data, Mapping) or not isinstance(data.get("tokens") or [], list):
        raise ConfigError(f"tokens file {path}: expected `tokens:` with a list of entries")
    items = data.get("tokens") or []
    entries = [_entry(item, f"tokens file {path}: tokens[{i}]") for i, item in enumerate(items)]
    names = [e.principal.name for e in entries]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ConfigError(f"tokens file {path}: duplicate name(s) {', '.join(duplicates)}")
    return entries


# Largest roles file read: a few hundred bytes per token; more is not a roles file.
MAX_TOKENS_FILE_BYTES = 1 << 20
_log = logging.getLogger("reclass_ng.server")


@attrs.frozen
class TokensFileState:
    """What the server knows of its roles file, for the log and `GET /status`."""

    path: str
    tokens: int  # entries in force (the last good content)
    problem: str | None = None  # why the file on disk is not the one in force
    since: float | None = None  # when that problem was first seen (Unix time)

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {"path": self.path, "tokens": self.tokens,
                                "state": "ok" if self.problem is None else "stale"}
        if self.problem is not None:
            data["problem"] = self.problem
            data["since"] = self.since
        return data


class TokenStore:
    """The tokens a server accepts. The roles file is read again on every check, and parsed
    again when its content (SHA-256) changed, so tokens can be added and revoked without a
    restart, and an edit that keeps size and mtime (`cp -p`) is seen too.

    The file must exist and parse at start-up (ConfigError). Later, a file that is missing,
    unreadable or broken leaves the last good tokens in force, with a warning in the log and the
    problem in `state()`: a half-saved edit must not lock every client out, admins included."""

    def __init__(self, single_token: str | None, tokens_file: str | None) -> None:
        self._single = token_digest(single_token.encode("utf-8")) if single_token else None
        self._path = Path(tokens_file) if tokens_file else None
        self._lock = threading.Lock()
        self._digest = b""  # of the content in force
        self._entries: list[TokenEntry] = []
        self._problem: tuple[bytes, str, float] | None = None  # (content digest, why, since)
        if self._path is not None:
            content = _tokens_file_bytes(self._path)
            self._entries = parse_tokens_file(content, self._path)
            self._digest = token_digest(content)

    @property
    def configured(self) -> bool:
        return self._single is not None or self._path is not None

    def entries(self) -> Sequence[TokenEntry]:
        """The roles file's entries in force, after looking at the file again."""
        if self._path is None:
            return ()
        with self._lock:
            self._refresh(self._path)
            return self._entries

    def _refresh(self, path: Path) -> None:
        try:
            content = _tokens_file_bytes(path)
        except ConfigError as err:
            self._keep_last_good(b"", str(err))
            return
        digest = token_digest(content)
        if self._problem is not None and self._problem[0] == digest:
            return  # the same broken content as before: logged once already
        if digest != self._digest:
            try:
                self._entries = parse_tokens_file(content, path)
            except ConfigError as err:
                self._keep_last_good(digest, str(err))
                return
            self._digest = digest
        if self._problem is not None:
            _log.warning("tokens file %s: readable again, %d token(s) in force", path,
                         len(self._entries))
            self._problem = None

    def _keep_last_good(self, digest: bytes, why: str) -> None:
        if self._problem is not None and self._problem[:2] == (digest, why):
            return
        _log.warning("%s; the last good tokens (%d) stay in force until it is fixed",
                     why, len(self._entries))
        since = self._problem[2] if self._problem is not None else time.time()
        self._problem = (digest, why, since)

    def state(self) -> TokensFileState | None:
        """The roles file's state (after looking at it again); None without a roles file."""
        if self._path is None:
            return None
        with self._lock:
            self._refresh(self._path)
            problem = self._problem
            return TokensFileState(str(self._path), len(self._entries),
                                   problem[1] if problem else None,
                                   problem[2] if problem else None)

    def identify(self, presented: bytes) -> Principal | None:
        """The principal of a presented token, or None. Compares against every token with
        hmac.compare_digest and never stops early, so timing tells nothing about a match."""
        digest = token_digest(presented)
        found: Principal | None = None
        if self._single is not None and hmac.compare_digest(digest, self._single):
            found = Principal("token", ADMIN, None, frozenset(PERMISSIONS))
        for entry in self.entries():
            if hmac.compare_digest(digest, entry.digest) and found is None:
                found = entry.principal
        return found
