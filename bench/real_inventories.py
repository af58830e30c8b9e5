#!/usr/bin/env python3
"""Real public inventories for the bench, fetched at bench time and never committed.

    python bench/real_inventories.py fetch [--mirror-root DIR]   # clone, pin, assemble
    python bench/real_inventories.py run [--format yaml] [--repeat 3]
    python bench/real_inventories.py instructions [--format yaml]   # callgrind, reclass-ng
    python bench/real_inventories.py run --compiled   # reclass-ng as `pip install .` builds it

`fetch` clones each source at a pinned commit into bench/.work/real/src (from GitHub, or
from local mirrors: DIR/<owner>+<name>/repo, as this machine's fetch tool leaves them),
assembles the inventories under bench/.work/real/inventories and records every commit and
licence in bench/.work/real/SOURCES.json. `run` renders each inventory whole with reclass-ng
and kapicorp-reclass as whole processes (default YAML output, as users run them), checks
the outputs are the same (bench/compare.py) and prints CPU and wall times and their ratios.
By default reclass-ng runs from the checkout as pure Python; `--compiled` measures this
checkout as `pip install .` builds it where a C compiler is present (the hot modules compiled
with Cython, bench/.ng/venv, as bench/run.py measures it), and fails when nothing compiled.
reclass-rs is left out: it needs the inventories in its own layout and lacks ignore-free
parsing of some of these files (not measured here).

Each Salt/MCP model is its cluster classes, the reclass-system-salt-model its submodule pins
(or that it holds, or, for Mirantis/mk-lab-salt-model, two commits of the same month overlaid:
the model refers to classes from both sides of a rename) and the metadata of the salt-formulas
it uses. Their repositories hold the salt masters (cfg01) only; Salt's reclass.storage state
writes the other nodes from `reclass:storage:node`, and so does `fetch`, as that state's
template does (`repeat` nodes included). A formula is found the way kapicorp-reclass finds it
missing: each node is rendered, and a missing `service.<formula>` class brings that formula in
at its last commit before the model's date. Nodes that kapicorp-reclass cannot render are left
out and listed in SOURCES.json.
Standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from compare import compare_outputs  # noqa: E402
from implementations import BENCH_DIR, PEERS_VENV, compiled_python  # noqa: E402
from measure import describe_failure, run_measured  # noqa: E402

WORK = BENCH_DIR / ".work" / "real"
SYSTEM_REPO = "Mirantis/reclass-system-salt-model"  # every model's classes/system submodule
# mk-lab's formulas, each at its last commit before 2017-02-01, the month of the model.
MK_LAB_FORMULAS = {
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


@dataclass(frozen=True)
class SaltModel:
    """A public Salt/MCP cluster model at a pinned commit, and where its other classes come from."""

    repo: str
    commit: str
    # reclass-system-salt-model commits overlaid in order (the later one's files win); empty:
    # the model's own classes/system, a tree or a submodule's pinned commit.
    system: tuple[str, ...] = ()
    # Formulas at pinned commits; the others its classes name are taken at their last commit
    # before `formulas_before` (the day after its system classes' commit).
    formulas: dict[str, str] = field(default_factory=dict)
    formulas_before: str | None = None


SALT_MODELS = {
    # The system classes: 8dd5952f (2017-01-31) over 706bab75 (before a22f666a removed classes
    # the model's fuel clusters still use).
    "mk-lab-salt-model": SaltModel(
        "Mirantis/mk-lab-salt-model", "f07706a1d79f71ffdc0e34bada1d6566284cdca9",
        system=("706bab75f447d7ba49dee9081a3822499ddca894",
                "8dd5952ff9f7bef59f11091bb671f7addea828ea"),
        formulas=MK_LAB_FORMULAS),
    # Four clusters (k8s_calico, mk22-lab-basic/advanced/dvr), system a07b9a33 (2017-04-07).
    "stacklight-salt-model": SaltModel(
        "Mirantis/stacklight-salt-model", "b0f0c8d80dc3037691b9513f18b6b04955f62955",
        formulas_before="2017-04-08"),
    # Holds its system classes (2017-01-15) in its own tree.
    "mk-packet-salt-model": SaltModel(
        "tlichten/mk-packet-salt-model", "4349e8fb6a6326b0eaf5c09d1b1c748f23adb6a4",
        formulas_before="2017-01-16"),
    # The largest system classes (826daee0, 2018-08-03: about 1,800 files); `repeat` nodes.
    "training-lab-salt-model": SaltModel(
        "Mirantis/training-lab-salt-model", "e5f8cf3a35956dd9d7cad0c6ade447138e694106",
        formulas_before="2018-08-04"),
}
# kapicorp-reclass's message for a class it cannot find; a `service.` class names a formula.
MISSING_FORMULA = re.compile(r"Class service\.([A-Za-z0-9_-]+)\S* not found")
KAPITAN_REFERENCE = ("kapicorp/kapitan-reference", "1e555f8784855d80170a98396507c9a3f6f4f4dc")
KAPITAN = ("kapicorp/kapitan", "272577becb478863deaf2988bcec6a270db9eaed")
# examples/terraform is left out: it needs the class_mappings of its reclass-config.yml, which
# kapicorp-reclass's command line does not read.
KAPITAN_EXAMPLES = ("kubernetes",)
# Other public Kapitan inventories: (repository, commit, the inventory's path in it).
KAPITAN_INVENTORIES = {
    "kapitan-mindwm": ("metacoma/mindwm", "e1325557c827e9ec92319cb72913060e9d019495",
                       "inventory"),
}


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

    def clone(self, repo: str) -> Path:
        """A bare clone of `repo` (made once)."""
        target = self.src / (repo.replace("/", "+") + ".git")
        if not target.is_dir():
            subprocess.run(["git", "clone", "--quiet", "--bare", self.origin(repo), str(target)],
                           check=True, timeout=1800)
        return target

    def commit_before(self, repo: str, date: str) -> str | None:
        """The last commit of `repo`'s default branch before `date`, or None."""
        done = subprocess.run(["git", "--git-dir", str(self.clone(repo)), "rev-list", "-1",
                               f"--before={date}", "HEAD"],
                              capture_output=True, text=True, check=True, timeout=600)
        return done.stdout.strip() or None

    def checkout(self, repo: str, commit: str) -> Path:
        """A bare clone of `repo` holding `commit`; the commit and licence are recorded."""
        target = self.clone(repo)
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
def assemble_salt_model(sources: Sources, model: SaltModel, out: Path, kapicorp: Path) -> dict:
    """The model's masters, the nodes they declare, and the classes both need; what renders."""
    if out.exists():
        shutil.rmtree(out)
    sources.extract(model.repo, model.commit, "nodes", out / "nodes")
    sources.extract(model.repo, model.commit, "classes/cluster", out / "classes" / "cluster")
    system = out / "classes" / "system"
    for commit in model.system:  # the later commit last: its files win
        sources.extract(SYSTEM_REPO, commit, "", system)
    if not model.system:
        pinned = _submodule_commit(sources.checkout(model.repo, model.commit), model.commit,
                                   "classes/system")
        if pinned is None:
            sources.extract(model.repo, model.commit, "classes/system", system)
        else:
            sources.extract(SYSTEM_REPO, pinned, "", system)
    for formula, commit in model.formulas.items():
        sources.extract(f"salt-formulas/salt-formula-{formula}", commit, "metadata/service",
                        out / "classes" / "service" / formula)
    formulas = _FormulaFinder(sources, model, out / "classes" / "service")
    masters = sorted(path.stem for path in (out / "nodes").rglob("*.yml"))
    dropped = {name: reason for name in masters
               if (reason := formulas.renders(kapicorp, out, name)) is not None}
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
        reason = formulas.renders(kapicorp, out, path.stem)
        if reason is not None:
            dropped[path.stem] = reason
            path.unlink()
    return {"masters": len(masters), "generated": generated, "dropped": dropped,
            "formulas": len(list((out / "classes" / "service").iterdir()))}


def _submodule_commit(git_dir: Path, commit: str, path: str) -> str | None:
    """The commit a submodule at `path` is pinned to, or None where `path` is a tree."""
    entry = subprocess.run(["git", "--git-dir", str(git_dir), "ls-tree", commit, path],
                           capture_output=True, text=True, check=True).stdout.split()
    return entry[2] if entry and entry[1] == "commit" else None


class _FormulaFinder:
    """Brings in the formula of each `service.` class kapicorp-reclass reports missing."""

    def __init__(self, sources: Sources, model: SaltModel, service: Path) -> None:
        self.sources = sources
        self.model = model
        self.service = service
        self.unavailable: set[str] = set()

    def renders(self, kapicorp: Path, inventory: Path, node: str) -> str | None:
        """None when kapicorp-reclass renders `node`, else its last line of error."""
        while True:
            reason = _renders(kapicorp, inventory, node)
            missing = MISSING_FORMULA.search(reason or "")
            if missing is None or not self._bring(missing[1]):
                return reason

    def _bring(self, formula: str) -> bool:
        # False: no formula to bring (not dated, brought before, not public, younger).
        into = self.service / formula
        if self.model.formulas_before is None or into.exists() or formula in self.unavailable:
            return False
        repo = f"salt-formulas/salt-formula-{formula}"
        try:
            commit = self.sources.commit_before(repo, self.model.formulas_before)
            if commit is not None:
                self.sources.extract(repo, commit, "metadata/service", into)
                return True
        except subprocess.CalledProcessError:
            pass
        self.unavailable.add(formula)
        return False


def _write_storage_node(directory: Path, node: dict) -> int:
    """The node files Salt's reclass.storage state writes for one entry: how many."""
    directory.mkdir(parents=True, exist_ok=True)
    repeat = node.get("repeat")
    if repeat is None:
        _write_node_file(directory, node["name"], node, node.get("params", {}))
        return 1
    # A `repeat` entry is `count` nodes, `<<count>>` in the name and in each repeated
    # parameter replaced by its number (from `start`, default 1, zero-filled to `digits`).
    def numbered(text: str, start: int, digits: int, index: int) -> str:
        return text.replace("<<count>>", str(start + index).rjust(digits, "0"))

    for index in range(repeat["count"]):
        params = dict(node.get("params", {}))
        for key, param in repeat.get("params", {}).items():
            params[key] = numbered(param["value"], param.get("start", 1),
                                   param.get("digits", 1), index)
        name = numbered(node["name"], repeat.get("start", 1), repeat.get("digits", 1), index)
        _write_node_file(directory, name, node, params)
    return repeat["count"]


def _write_node_file(directory: Path, name: str, node: dict, params: dict) -> None:
    # As salt-formula-reclass's storage/node.yml template (2017) writes a node.
    lines = ["classes:"] + [f"- {klass}" for klass in node.get("classes", [])]
    lines += ["parameters:", "  _param:"]
    lines += [f"    {key}: {json.dumps(value)}" for key, value in params.items()]
    lines += ["  linux:", "    system:", f"      name: {name}", f"      domain: {node['domain']}",
              ""]
    (directory / f"{name}.{node['domain']}.yml").write_text("\n".join(lines), encoding="utf-8")


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
    built = {name: {"args": [], **assemble_salt_model(sources, model, inventories / name,
                                                       kapicorp)}
             for name, model in SALT_MODELS.items()}
    kapitan_args = ["-u", "targets", "-c", "classes"]
    built["kapitan-reference"] = {"args": kapitan_args, **assemble_kapitan(
        sources, KAPITAN_REFERENCE, "inventory", inventories / "kapitan-reference")}
    for example in KAPITAN_EXAMPLES:
        built[f"kapitan-{example}"] = {"args": kapitan_args, **assemble_kapitan(
            sources, KAPITAN, f"examples/{example}/inventory",
            inventories / f"kapitan-{example}")}
    for name, (repo, commit, path) in KAPITAN_INVENTORIES.items():
        built[name] = {"args": kapitan_args, **assemble_kapitan(
            sources, (repo, commit), path, inventories / name)}
    record = {"sources": sources.record, "inventories": built}
    (work / "SOURCES.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return record


# -- running ---------------------------------------------------------------------------------
def installed_like(work: Path, checkout: Path) -> list[str]:
    """reclass-ng's `reclass` run as a `pip install` leaves it (bench/implementations.py): an
    interpreter whose site finds the checkout and the project venv's packages (PyYAML) by a
    plain .pth line, not through the development venv's editable-install hook, which costs
    every start about 27 M instructions (a sixth of a whole kapitan-kubernetes render) that no
    user's process and no kapicorp-reclass process pays."""
    venv = work / "ng-venv"
    project_venv = BENCH_DIR.parent / ".venv"
    if not (venv / "bin" / "python").exists():
        subprocess.run([str(project_venv / "bin" / "python"), "-m", "venv", "--without-pip",
                        str(venv)], check=True, timeout=600)
    packages = next(project_venv.glob("lib/python3*/site-packages"))
    site = next(venv.glob("lib/python3*/site-packages"))
    (site / "reclass-ng.pth").write_text(f"{checkout}\n{packages.resolve()}\n",
                                         encoding="utf-8")
    # pip compiles an installed package's bytecode; a checkout's .pyc files may be stale or
    # missing, and with PYTHONDONTWRITEBYTECODE set (as some shells and CI images do) every
    # run would then compile every module again: about 3x the instructions of a small model.
    subprocess.run([str(project_venv / "bin" / "python"), "-m", "compileall", "-q",
                    str(checkout / "reclass_ng"), str(checkout / "bin")],
                   check=True, timeout=600, stdout=subprocess.DEVNULL)
    return [str(venv / "bin" / "python"), str(checkout / "bin" / "reclass")]


def run(work: Path, implementations: dict[str, list[str]], fmt: str, repeat: int,
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
        commands = {label: [*script, "-b", str(inventory), *built["args"], "--inventory",
                            "-o", fmt] for label, script in implementations.items()}
        # The implementations take turns, a run each per round: this machine's speed drifts
        # by a tenth within minutes, and runs of one implementation after the other's would
        # put the drift into their ratio.
        taken: dict[str, list] = {label: [] for label in implementations}
        for _ in range(repeat):
            for label, command in commands.items():
                taken[label].append(run_measured(command, inventory,
                                                 outputs / f"{name}.{label}.{fmt}",
                                                 env=envs.get(label)))
        for label in implementations:
            output = outputs / f"{name}.{label}.{fmt}"
            samples = taken[label]
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


def _same_outputs(paths: list[Path], fmt: str) -> bool | str:
    """True when the outputs hold the same data, "D13" when they do but for the whitespace
    around tabs (deviation D13, doc/compatibility.rst: reclass-ng keeps a tab in a string
    holding a reference, which kapicorp-reclass expands to spaces), else False."""
    loaded = []
    for path in paths:
        text = path.read_text(encoding="utf-8")
        if fmt == "json":
            loaded.append(json.loads(text))
        else:
            import yaml  # the runner's PyYAML (the bench venv or the project's)

            loaded.append(yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))
    if all(not compare_outputs(loaded[0], other)[0] for other in loaded[1:]):
        return True
    folded = [_tabs_folded(data) for data in loaded]
    return "D13" if all(not compare_outputs(folded[0], other)[0] for other in folded[1:]) \
        else False


def _tabs_folded(data: object) -> object:
    # Every run of spaces and tabs in a string that holds a tab (on either side) as one space.
    if isinstance(data, dict):
        return {key: _tabs_folded(value) for key, value in data.items()}
    if isinstance(data, list):
        return [_tabs_folded(item) for item in data]
    if isinstance(data, str) and ("\t" in data or "        " in data):
        return " ".join(re.split(r"[ \t]+", data))
    return data


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
        same = {True: "identical", False: "DIFFER", "D13": "same but for D13 (tabs)"}.get(
            row.get("same"), "-")
        lines.append(f"| {row['inventory']} | " + " | ".join(cells) +
                     f" | {ratio} | {wall} | {same} |")
    total = " | ".join(f"{sums[label]:.2f}" for label in labels)
    lines.append(f"| **sum** | {total} | {sums[labels[-1]] / sums[labels[0]]:.1f}x | "
                 f"{walls[labels[-1]] / walls[labels[0]]:.1f}x | |")
    return "\n".join(lines)


def instructions(work: Path, script: list[str], fmt: str,
                 env: dict[str, str] | None) -> list[tuple[str, float]]:
    """(inventory, millions of instructions) of one whole `reclass --inventory` process of
    each inventory under callgrind: deterministic where CPU times on a shared machine are
    not (hash seed fixed; the outputs are not compared here, `run` does that)."""
    record = json.loads((work / "SOURCES.json").read_text())
    counted = []
    with tempfile.TemporaryDirectory() as scratch:
        for name, built in record["inventories"].items():
            inventory = work / "inventories" / name
            out = Path(scratch) / f"{name}.callgrind"
            subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                            *script, "-b", str(inventory), *built["args"], "--inventory",
                            "-o", fmt], cwd=inventory, env={**(env or os.environ),
                                                            "PYTHONHASHSEED": "0"},
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           check=True, timeout=1800)
            summary = next(line for line in out.read_text().splitlines()
                           if line.startswith("summary:"))
            counted.append((name, int(summary.split()[1]) / 1e6))
    return counted


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("fetch", "run", "instructions"))
    parser.add_argument("--work", type=Path, default=WORK)
    parser.add_argument("--mirror-root", type=Path,
                        help="directory of local mirrors (<owner>+<name>/repo) to clone from")
    parser.add_argument("--kapicorp", type=Path, default=PEERS_VENV / "bin" / "reclass",
                        help="kapicorp-reclass's reclass script")
    parser.add_argument("--reclass-ng", type=Path, default=None,
                        help="reclass-ng's reclass script (default: the checkout's, run as "
                        "installed, without the development venv's editable-install hook)")
    parser.add_argument("--checkout", type=Path, default=BENCH_DIR.parent,
                        help="the reclass-ng source tree put first on PYTHONPATH (another "
                        "worktree measures another version)")
    parser.add_argument("--compiled", action="store_true",
                        help="reclass-ng as `pip install .` of this bench's checkout builds it "
                        "(bench/.ng/venv, the hot modules compiled); not with --checkout")
    parser.add_argument("--format", choices=("yaml", "json"), default="yaml")
    parser.add_argument("--repeat", type=int, default=3, help="runs each; the fastest counts")
    args = parser.parse_args(argv)
    # The runs happen in each inventory's directory: a relative script would not be found.
    args.kapicorp, args.checkout, args.work = (
        path.absolute() for path in (args.kapicorp, args.checkout, args.work))
    if args.command == "fetch":
        record = fetch(args.work, args.mirror_root, args.kapicorp)
        for name, built in record["inventories"].items():
            print(f"{name}: {json.dumps({k: v for k, v in built.items() if k != 'dropped'})}"
                  f", dropped {len(built.get('dropped', {}))}")
        return 0
    if args.compiled:
        python, label = compiled_python(lambda message: print(message, file=sys.stderr))
        if python is None:
            print(f"compiled build: {label}", file=sys.stderr)
            return 1
        print(f"reclass-ng: {label}", file=sys.stderr)
        # the checkout's script, not pip's launcher (which imports `re`, bin/reclass says);
        # from bin/ the interpreter imports the installed, compiled reclass_ng
        reclass_ng, env = [str(python), str(BENCH_DIR.parent / "bin" / "reclass")], None
    elif args.reclass_ng is None:
        reclass_ng, env = installed_like(args.work, args.checkout), None
    else:
        # This checkout first on the path: the project's venv script then runs this code.
        reclass_ng = [str(args.reclass_ng.absolute())]
        env = dict(os.environ, PYTHONPATH=str(args.checkout))
    if args.command == "instructions":  # reclass-ng's only: kapicorp's take minutes each
        counted = instructions(args.work, reclass_ng, args.format, env)
        for name, millions in counted:
            print(f"{name:28} {millions:10.1f} M")
        print(f"{'sum':28} {sum(m for _, m in counted):10.1f} M")
        return 0
    implementations = {"reclass-ng": reclass_ng, "kapicorp": [str(args.kapicorp)]}
    rows = run(args.work, implementations, args.format, args.repeat, {"reclass-ng": env})
    print(table(rows, list(implementations)))
    return 0 if all(row.get("same", False) in (True, "D13") for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
