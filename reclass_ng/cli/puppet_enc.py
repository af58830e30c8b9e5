"""`reclass-puppet [-b DIR] NODE`: Puppet external node classifier.

puppet.conf (on the Puppet server, or the node for `puppet apply`)::

    [server]
    node_terminus = exec
    external_nodes = /usr/local/bin/reclass-puppet -b /srv/reclass

Puppet appends the node name. With `--server URL` the node is classified by a running
`reclass-ng serve` instead (its cached facts are posted there; the token comes from
$RECLASS_NG_TOKEN or --token-file)::

    external_nodes = /usr/local/bin/reclass-puppet --server http://127.0.0.1:1261

An unknown node or a broken inventory exits non-zero with the
message on stderr and nothing on stdout, which Puppet reports as "Failed to find NODE via exec".
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from reclass_ng.storage.yaml_import import pyyaml

# Every run prints YAML through PyYAML: imported here the deferred way (storage/yaml_import.py,
# patterns compiled on first use) before adapters.puppet's own `import yaml` finds it.
pyyaml()

from reclass_ng.adapters import puppet  # noqa: E402
from reclass_ng.cli.adapter_options import (  # noqa: E402
    adapter_parser,
    inventory_from_args,
    run_command,
)
from reclass_ng.cli.serve import TOKEN_VARIABLE, read_token  # noqa: E402
from reclass_ng.errors import UsageError  # noqa: E402


def build_parser() -> argparse.ArgumentParser:
    parser = adapter_parser(
        "reclass-puppet",
        "Puppet external node classifier: print the ENC YAML (classes, parameters, "
        "environment) of NODE from a reclass-ng inventory.")
    parser.add_argument("node", metavar="NODE", help="the node (certname) Puppet asks about")
    enc = parser.add_argument_group("classification")
    enc.add_argument(
        "--class-parameters", choices=puppet.CLASS_PARAMETER_RULES,
        default=puppet.DEFAULT_CLASS_PARAMETER_RULE,
        help="where application classes get their parameters: 'subtree' (default) passes the "
             "parameter of the same name as the class when it is a mapping, 'none' declares "
             "every class without parameters")
    enc.add_argument(
        "--facts-dir", metavar="DIR", default=puppet.DEFAULT_FACTS_DIR,
        help="Puppet's YAML fact cache (DIR/NODE.yaml), read when the inventory has node "
             f"groups (default: {puppet.DEFAULT_FACTS_DIR})")
    enc.add_argument(
        "--no-groups", dest="use_groups", action="store_false",
        help="classify by reclass alone even when the inventory has a groups/ directory")
    enc.add_argument(
        "--no-environment", dest="environment", action="store_false",
        help="leave the environment to the agent instead of setting the node's reclass "
             "environment")
    client = parser.add_argument_group("client mode (classify through `reclass-ng serve`)")
    client.add_argument(
        "--server", metavar="URL",
        help="ask the classifier service at URL (e.g. http://127.0.0.1:1261) instead of reading "
             "the inventory: the node's cached facts (--facts-dir) are posted to "
             "URL/v1/classified/nodes/NODE")
    client.add_argument(
        "--token-file", metavar="FILE",
        help=f"file holding the service's API token (else ${TOKEN_VARIABLE}; sent as "
             "X-Authentication)")
    client.add_argument("--timeout", metavar="SECONDS", type=float, default=30.0,
                        help="how long to wait for the service (default: 30)")
    return parser


def classify_with_server(args: argparse.Namespace) -> str:
    if args.class_parameters != puppet.DEFAULT_CLASS_PARAMETER_RULE or not args.use_groups:
        raise UsageError("--class-parameters none and --no-groups cannot be used with --server: "
                         "the service classifies by its node groups")
    data = puppet.classify_with_server(
        args.server, args.node, facts_dir=args.facts_dir, token=read_token(args.token_file),
        include_environment=args.environment, timeout=args.timeout)
    return "---\n" + puppet.enc_yaml(data)


def classify(args: argparse.Namespace) -> str:
    if args.server:
        return classify_with_server(args)
    data = puppet.classify(
        inventory_from_args(args), args.node, class_parameter_rule=args.class_parameters,
        include_environment=args.environment, use_groups=args.use_groups,
        facts_dir=args.facts_dir)
    return "---\n" + puppet.enc_yaml(data)


def main(argv: Sequence[str] | None = None) -> int:
    return run_command(build_parser(), classify, argv)


if __name__ == "__main__":
    sys.exit(main())
