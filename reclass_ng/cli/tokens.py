"""`reclass-ng tokens add FILE --name N --role R`: a new token for `reclass-ng serve --tokens-file`.

The token is printed once and only its SHA-256 is stored, so a copy of the file (a backup, a
configuration repository) gives away no token.
"""

from __future__ import annotations

import argparse
import os
import sys

import yaml

from reclass_ng.errors import ConfigError, UsageError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="tokens_action", metavar="ACTION")
    actions.required = True
    add = actions.add_parser("add", help="make a token, store its hash, print it once")
    add.add_argument("file", help="the tokens file (created when missing)")
    add.add_argument("--name", required=True, help="who or what the token is for")
    add.add_argument("--role", required=True, choices=("viewer", "operator", "admin"))
    add.add_argument("--group", metavar="ID",
                     help="limit the token to this group and its descendants")
    add.add_argument("--permission", action="append", choices=("classify", "facts"),
                     default=[], help="also allow classifying nodes / writing their facts "
                                      "(repeatable)")
    add.add_argument("--token-stdin", action="store_true",
                     help="read the token from stdin (UTF-8) instead of generating one")


def run(args: argparse.Namespace) -> int:
    import secrets

    from reclass_ng.classifier.atomic_files import atomic_write_text
    from reclass_ng.classifier.groups import is_uuid
    from reclass_ng.server.auth import MAX_TOKENS_FILE_BYTES, read_tokens_file, token_digest
    from reclass_ng.storage.regular_file import read_regular_file

    if args.group is not None and not is_uuid(args.group):
        raise UsageError(f"--group: expected a group id (UUID), got {args.group!r}")
    existing = read_tokens_file(args.file) if os.path.exists(args.file) else []
    if any(entry.principal.name == args.name for entry in existing):
        raise UsageError(f"{args.file}: a token named {args.name!r} exists already")
    if args.token_stdin:
        token = sys.stdin.buffer.read().decode("utf-8").strip()
        if len(token) < 16:
            raise UsageError("--token-stdin: a token needs at least 16 characters")
    else:
        token = secrets.token_urlsafe(32)
    entry: dict[str, object] = {"name": args.name,
                                "sha256": token_digest(token.encode("utf-8")).hex(),
                                "role": args.role}
    if args.group:
        entry["group"] = args.group
    if args.permission:
        entry["permissions"] = sorted(set(args.permission))
    try:
        data = yaml.safe_load(read_regular_file(args.file, MAX_TOKENS_FILE_BYTES)[0]) or {}
    except FileNotFoundError:
        data = {}
    except OSError as err:
        raise ConfigError(f"{args.file}: {err.strerror}") from err
    data.setdefault("tokens", []).append(entry)
    text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
    atomic_write_text(args.file, text)
    os.chmod(args.file, 0o600)
    read_tokens_file(args.file)  # the file as written must load
    if not args.token_stdin:
        print(token)
    return 0
