#!/usr/bin/env python3
"""Real public inventories for the bench, fetched at bench time and never committed.

    python bench/real_inventories.py fetch [--mirror-root DIR]   # clone, pin, assemble
    python bench/real_inventories.py run [--format yaml] [--repeat 3]

`fetch` clones each source at a pinned commit into bench/.work/real/src (from GitHub, or
from local mirrors: DIR/<owner>+<name>/repo, as this machine's fetch tool leaves them),
assembles the inventories under bench/.work/real/inventories and records every commit and
licence in bench/.work/real/SOURCES.json. `run` renders each inventory whole with reclass-ng
and kapicorp-reclass as whole processes (default YAML output, as users run them), checks
the outputs are the same (bench/compare.py) and prints CPU and wall times and their ratios.
reclass-rs is left out: it needs the inventories in its own layout and lacks ignore-free
parsing of some of these files (not measured here).

The Salt/MCP model is Mirantis/mk-lab-salt-model (2017): its cluster classes, the
reclass-system-salt-model of the same month (two commits overlaid: the model refers to
classes from both sides of a rename) and the metadata of the salt-formulas it uses. Its
repository holds the salt masters (cfg01) only; Salt's reclass.storage state writes the other
nodes from `reclass:storage:node`, and so does `fetch`, as that state's template does. Nodes
that kapicorp-reclass cannot render are left out and listed in SOURCES.json.
Standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from compare import compare_outputs  # noqa: E402
from implementations import BENCH_DIR, PEERS_VENV  # noqa: E402
from measure import describe_failure, run_measured  # noqa: E402

WORK = BENCH_DIR / ".work" / "real"
MK_LAB = ("Mirantis/mk-lab-salt-model", "f07706a1d79f71ffdc0e34bada1d6566284cdca9")
# The system classes: 8dd5952f (2017-01-31) over 706bab75 (before a22f666a removed classes
# the model's fuel clusters still use).
SYSTEM = ("Mirantis/reclass-system-salt-model",
          ("706bab75f447d7ba49dee9081a3822499ddca894", "8dd5952ff9f7bef59f11091bb671f7addea828ea"))
# Each formula at its last commit before 2017-02-01, the month of the model.
FORMULAS = {
    "galera": "9e43e6cd3ebe18de38a4e66b48dc8167cc6220c2",
    "keepalived": "ea2c1b1a204308aba17a00c046e20a57ec99a19d",
    "haproxy": "33b24734f772cc3c4d94c375d59e6e92b37c8532",
    "ceilometer": "1f68d52ed26a0060aeeed4881f9adc9cca59f1ea",
    "git": "581f2b2d509e8ef9c6a873184cedd2b00a75ac49",
    "heka": "0c99daa5c122ee112ef4ae41bf298f837c2dcac4",
    "opencontrail": "cfee967685c31a8e6161f65a06c1002c223d76eb",
    "nginx": "c9195dc007731cdbe316824bf02b24aecd88c03a",
    "glusterfs": "585b31c09e6eeb9d4ccfe2fc768132757978da42",
    "rabbitmq": "2a973e3aa6c05bd2a279d927e52e1ff0f5a1cb46",
    "neutron": "871f5e23ebf051f662c5445488e2c5c3a8ee2ab7",
    "grafana": "885c5fc79c2c28c525715fd33b777729ac3f97f7",
    "sensu": "5ba4a45d7dcbefbff693e8a15772a79165e5f6b5",
    "nova": "2a9b1c2b4c49c31cc000a00f5d5e1f9070075437",
    "memcached": "f2415f74af955a95d67f5858746c1699288b2f22",
    "horizon": "94e7b45cd94f887a1e0f577e62dd77c93f7ae720",
    "collectd": "83c8b5bf5b154011e65aa844fa597f2195a355bf",
    "supervisor": "0b60da4bf2fdcfe65253da3ddf2828e2de6b93f3",
    "salt": "f1d189df7424b422a0e034eccececc20c558f438",
    "elasticsearch": "daf1e51fbe9b9e58e294a4db985207a72f88588a",
    "cinder": "f2b7a81f17a29d761d7e0bbf8b2064c1f6a349b6",
    "redis": "eb45a26d86b2c06c5af09d2fb46b371e629bda5b",
    "python": "02c4bdc1a9a0770f452345a2c17f0e3b7a2c7d05",
    "postgresql": "b422c8bce30fc0a68aa56290b13facceceed3bc1",
    "nagios": "65a5c6010cd78f00b52f0f5b7e556997568381be",
    "kibana": "f6fc6bc3d5a345634ee863d5a0ea05029c653d56",
    "keystone": "64cd3543a9a8b7fc746aa0db5e0c14365d4aee90",
    "java": "949691fb471180874ffcf321e9ef0bc5a9964ed0",
    "heat": "56c27cd2c7f284502f997a326179b65e99525b59",
    "graphite": "601a8cce805433c647ccd3c1d34bf2b55314ce91",
    "glance": "5eaeda98cbee021ae0ba153241e8731d12e27a2b",
    "aodh": "bd809d861e407b50787134861935a4d6609af4dc",
    "sphinx": "876c415d8d652db61e6c4129cdf901e652670cda",
    "rsyslog": "aa65470e52e1be6793576dfdfb6824d9268a3d99",
    "reclass": "9de94831034ac72681a0ad2c0af35abc22790c85",
    "openssh": "2b975925245eb575dca92032f4b4f5a5298b2506",
    "ntp": "4bd8c47634d2c8e5992d62484c081ebb73b9983f",
    "mongodb": "3365e58a179abb96199d4355ada3767a087f4ce0",
    "linux": "de88aebf521d0f36361fd5e4614c786204ab8181",
    "libvirt": "8a48f662a03de43eaf722e8db71e6c55f408eb73",
    "influxdb": "fdf84c6da37e8daad7f41231133f62f99dd62122",
    "billometer": "7b7a229bfdfe65315d1aa86d10cd85e3c341727a",
    "apache": "e0e02a2ff3a41cff5beb68dcd475e5865447b2e3",
}
KAPITAN_REFERENCE = ("kapicorp/kapitan-reference", "1e555f8784855d80170a98396507c9a3f6f4f4dc")
KAPITAN = ("kapicorp/kapitan", "272577becb478863deaf2988bcec6a270db9eaed")
# examples/terraform is left out: it needs the class_mappings of its reclass-config.yml, which
# kapicorp-reclass's command line does not read.
KAPITAN_EXAMPLES = ("kubernetes",)


class Sources:
    """Clones at pinned commits, from GitHub or a directory of mirrors; records each one."""

    def __init__(self, work: Path, mirror_root: Path | None) -> None:
        self.src = work / "src"
        self.mirror_root = mirror_root
        self.record: dict[str, dict] = {}

    def origin(self, repo: str) -> str:
        if self.mirror_root is not None:
            base = self.mirror_root / repo.replace("/", "+") / "repo"
            return str(base / ".git" if (base / ".git").is_dir() else base)
        return f"https://github.com/{repo}.git"

    def checkout(self, repo: str, commit: str) -> Path:
        """A bare clone of `repo` holding `commit`; the commit and licence are recorded."""
        target = self.src / (repo.replace("/", "+") + ".git")
        if not target.is_dir():
            subprocess.run(["git", "clone", "--quiet", "--bare", self.origin(repo), str(target)],
                           check=True, timeout=1800)
        licence = _licence(target, commit)
        self.record[repo] = {"commit": commit, "licence": licence, "origin": self.origin(repo)}
        return target

    def extract(self, repo: str, commit: str, path: str, into: Path) -> None:
        """The tree `path` of `repo` at `commit`, written into `into`."""
        git_dir = self.checkout(repo, commit)
        into.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile() as archive:
            subprocess.run(["git", "--git-dir", str(git_dir), "archive", f"{commit}:{path}"
                            if path else commit], stdout=archive, check=True, timeout=600)
            archive.seek(0)
            with tarfile.open(fileobj=archive) as tar:
                tar.extractall(into, filter="data")


def _licence(git_dir: Path, commit: str) -> str:
    names = subprocess.run(["git", "--git-dir", str(git_dir), "ls-tree", "--name-only", commit],
                           capture_output=True, text=True, check=True).stdout.split()
    for name in names:
        if name.upper().startswith(("LICENSE", "LICENCE", "COPYING")):
            text = subprocess.run(["git", "--git-dir", str(git_dir), "show", f"{commit}:{name}"],
                                  capture_output=True, text=True).stdout
            first = next((line.strip() for line in text.splitlines() if line.strip()), "")
            return f"{name}: {first[:80]}"
    return "no licence file: read here at bench time only, never committed or redistributed"


# -- assembling ------------------------------------------------------------------------------
def assemble_mk_lab(sources: Sources, out: Path, kapicorp: Path) -> dict:
    if out.exists():
        shutil.rmtree(out)
    sources.extract(MK_LAB[0], MK_LAB[1], "nodes", out / "nodes")
    sources.extract(MK_LAB[0], MK_LAB[1], "classes/cluster", out / "classes" / "cluster")
    for commit in SYSTEM[1]:  # the later commit last: its files win
        sources.extract(SYSTEM[0], commit, "", out / "classes" / "system")
    for formula, commit in FORMULAS.items():
        sources.extract(f"salt-formulas/salt-formula-{formula}", commit, "metadata/service",
                        out / "classes" / "service" / formula)
    masters = sorted(path.stem for path in (out / "nodes").rglob("*.yml"))
    dropped = {name: reason for name in masters
               if (reason := _renders(kapicorp, out, name)) is not None}
    for name in dropped:
        next((out / "nodes").rglob(f"{name}.yml")).unlink()
    generated = 0
    for name in masters:
        if name in dropped:
            continue
        info = json.loads(subprocess.run(
            [str(kapicorp), "-b", str(out), "--nodeinfo", name, "-o", "json"],
            capture_output=True, text=True, check=True, timeout=600).stdout)
        declared = info["parameters"].get("reclass", {}).get("storage", {}).get("node", {})
        for node in declared.values():
            generated += _write_storage_node(out / "nodes" / "_generated", node)
    for path in sorted((out / "nodes" / "_generated").glob("*.yml")):
        reason = _renders(kapicorp, out, path.stem)
        if reason is not None:
            dropped[path.stem] = reason
            path.unlink()
    return {"masters": len(masters), "generated": generated, "dropped": dropped}


def _write_storage_node(directory: Path, node: dict) -> int:
    # As salt-formula-reclass's storage/node.yml template writes a node of reclass:storage:node.
    directory.mkdir(parents=True, exist_ok=True)
    name = f"{node['name']}.{node['domain']}"
    lines = ["classes:"] + [f"- {klass}" for klass in node.get("classes", [])]
    lines += ["parameters:", "  _param:"]
    lines += [f"    {key}: {json.dumps(value)}" for key, value in node.get("params", {}).items()]
    lines += ["  linux:", "    system:", f"      name: {node['name']}",
              f"      domain: {node['domain']}", ""]
    (directory / f"{name}.yml").write_text("\n".join(lines), encoding="utf-8")
    return 1


def _renders(kapicorp: Path, inventory: Path, node: str) -> str | None:
    done = subprocess.run([str(kapicorp), "-b", str(inventory), "--nodeinfo", node, "-o", "json"],
                          capture_output=True, text=True, timeout=600)
    lines = done.stderr.strip().splitlines()
    return None if done.returncode == 0 else (lines[-1].strip() if lines else "failed")


def assemble_kapitan(sources: Sources, repo: tuple[str, str], path: str, out: Path) -> dict:
    if out.exists():
        shutil.rmtree(out)
    sources.extract(repo[0], repo[1], path, out)
    return {"targets": len(list((out / "targets").rglob("*.yml")))}


def fetch(work: Path, mirror_root: Path | None, kapicorp: Path) -> dict:
    sources = Sources(work, mirror_root)
    inventories = work / "inventories"
    built = {"mk-lab-salt-model": {"args": [], **assemble_mk_lab(
        sources, inventories / "mk-lab-salt-model", kapicorp)}}
    kapitan_args = ["-u", "targets", "-c", "classes"]
    built["kapitan-reference"] = {"args": kapitan_args, **assemble_kapitan(
        sources, KAPITAN_REFERENCE, "inventory", inventories / "kapitan-reference")}
    for example in KAPITAN_EXAMPLES:
        built[f"kapitan-{example}"] = {"args": kapitan_args, **assemble_kapitan(
            sources, KAPITAN, f"examples/{example}/inventory",
            inventories / f"kapitan-{example}")}
    record = {"sources": sources.record, "inventories": built}
    (work / "SOURCES.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return record


# -- running ---------------------------------------------------------------------------------
def run(work: Path, implementations: dict[str, Path], fmt: str, repeat: int,
        envs: dict[str, dict[str, str] | None]) -> list[dict]:
    """Whole-inventory renders of every inventory by every implementation: the rows."""
    record = json.loads((work / "SOURCES.json").read_text())
    rows = []
    outputs = work / "outputs"
    outputs.mkdir(parents=True, exist_ok=True)
    for name, built in record["inventories"].items():
        inventory = work / "inventories" / name
        row: dict = {"inventory": name}
        texts = {}
        for label, script in implementations.items():
            command = [str(script), "-b", str(inventory), *built["args"], "--inventory",
                       "-o", fmt]
            output = outputs / f"{name}.{label}.{fmt}"
            samples = [run_measured(command, inventory, output, env=envs.get(label))
                       for _ in range(repeat)]
            failed = next((s for s in samples if not s.ok), None)
            if failed is not None:
                row[label] = {"error": describe_failure(failed)}
                continue
            row[label] = {"cpu": min(s.cpu_seconds for s in samples),
                          "wall": min(s.seconds for s in samples)}
            texts[label] = output
        if len(texts) == len(implementations):
            row["same"] = _same_outputs([texts[label] for label in implementations], fmt)
        rows.append(row)
    return rows


def _same_outputs(paths: list[Path], fmt: str) -> bool:
    loaded = []
    for path in paths:
        text = path.read_text(encoding="utf-8")
        if fmt == "json":
            loaded.append(json.loads(text))
        else:
            import yaml  # the runner's PyYAML (the bench venv or the project's)

            loaded.append(yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))
    return all(not compare_outputs(loaded[0], other)[0] for other in loaded[1:])


def table(rows: list[dict], labels: list[str]) -> str:
    """Markdown: CPU seconds per implementation, ratio of the first peer to reclass-ng."""
    head = "| inventory | " + " | ".join(f"{label} CPU s" for label in labels) + \
        " | ratio (CPU) | ratio (wall) | outputs |"
    lines = [head, "|" + "---|" * (len(labels) + 4)]
    sums = dict.fromkeys(labels, 0.0)
    walls = dict.fromkeys(labels, 0.0)
    for row in rows:
        cells = []
        for label in labels:
            figures = row.get(label, {})
            if "cpu" in figures:
                sums[label] += figures["cpu"]
                walls[label] += figures["wall"]
            cells.append(f"{figures['cpu']:.2f}" if "cpu" in figures else "failed")
        ratio = wall = ""
        first, peer = row.get(labels[0], {}), row.get(labels[-1], {})
        if "cpu" in first and "cpu" in peer:
            ratio = f"{peer['cpu'] / first['cpu']:.1f}x"
            wall = f"{peer['wall'] / first['wall']:.1f}x"
        same = {True: "identical", False: "DIFFER"}.get(row.get("same"), "-")
        lines.append(f"| {row['inventory']} | " + " | ".join(cells) +
                     f" | {ratio} | {wall} | {same} |")
    total = " | ".join(f"{sums[label]:.2f}" for label in labels)
    lines.append(f"| **sum** | {total} | {sums[labels[-1]] / sums[labels[0]]:.1f}x | "
                 f"{walls[labels[-1]] / walls[labels[0]]:.1f}x | |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("fetch", "run"))
    parser.add_argument("--work", type=Path, default=WORK)
    parser.add_argument("--mirror-root", type=Path,
                        help="directory of local mirrors (<owner>+<name>/repo) to clone from")
    parser.add_argument("--kapicorp", type=Path, default=PEERS_VENV / "bin" / "reclass",
                        help="kapicorp-reclass's reclass script")
    parser.add_argument("--reclass-ng", type=Path, default=BENCH_DIR.parent / ".venv" / "bin"
                        / "reclass", help="reclass-ng's reclass script")
    parser.add_argument("--checkout", type=Path, default=BENCH_DIR.parent,
                        help="the reclass-ng source tree put first on PYTHONPATH (another "
                        "worktree measures another version)")
    parser.add_argument("--format", choices=("yaml", "json"), default="yaml")
    parser.add_argument("--repeat", type=int, default=3, help="runs each; the fastest counts")
    args = parser.parse_args(argv)
    if args.command == "fetch":
        record = fetch(args.work, args.mirror_root, args.kapicorp)
        for name, built in record["inventories"].items():
            print(f"{name}: {json.dumps({k: v for k, v in built.items() if k != 'dropped'})}"
                  f", dropped {len(built.get('dropped', {}))}")
        return 0
    implementations = {"reclass-ng": args.reclass_ng, "kapicorp": args.kapicorp}
    # This checkout first on the path: the project's venv script then runs this code.
    checkout = dict(os.environ, PYTHONPATH=str(args.checkout))
    rows = run(args.work, implementations, args.format, args.repeat, {"reclass-ng": checkout})
    print(table(rows, list(implementations)))
    return 0 if all(row.get("same", False) for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
