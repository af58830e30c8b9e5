"""Markdown tables of benchmark results."""

from __future__ import annotations

from dataclasses import dataclass, field

from measure import Samples


@dataclass
class ImplResult:
    """Everything measured for one implementation on one inventory."""

    key: str
    label: str
    full: Samples = field(default_factory=Samples)
    nodeinfo: Samples = field(default_factory=Samples)
    render_seconds: list[float] = field(default_factory=list)   # API-internal time, if known
    skipped: str = ""             # why it did not run (unavailable, budget, unsupported)
    failed: str = ""              # why a run failed
    mismatch: list[str] = field(default_factory=list)   # first differing paths vs the reference
    mismatch_nodes: list[str] = field(default_factory=list)
    known_differences: dict[str, str] = field(default_factory=dict)

    @property
    def measured(self) -> bool:
        return bool(self.full.runs) and not self.failed


@dataclass
class CaseResult:
    """One inventory (shape and size, or the reclass-rs test inventory)."""

    title: str
    nodes: int
    description: str
    node: str                     # the node used for --nodeinfo
    floor_seconds: float | None = None
    floor_cpu_seconds: float | None = None
    impls: list[ImplResult] = field(default_factory=list)
    reference: str = "kapicorp"


def _seconds(value: float) -> str:
    return f"{value:.2f} s" if value < 10 else f"{value:.1f} s"


def _millis(value: float) -> str:
    return f"{value * 1000:.1f} ms" if value < 0.1 else f"{value * 1000:.0f} ms"


def _ratio(numerator: float, denominator: float) -> str:
    return f"{numerator / denominator:.2f}x" if numerator / denominator < 10 \
        else f"{numerator / denominator:.0f}x"


def case_table(case: CaseResult) -> str:
    """One markdown section: description, table and the output check."""
    lines = [f"### {case.title}", "", case.description, ""]
    by_key = {impl.key: impl for impl in case.impls}
    kapicorp = by_key.get("kapicorp")
    rs = by_key.get("rs")
    lines.append("| implementation | full render | CPU | per node | `--nodeinfo` | peak RSS "
                 "| speed-up vs kapicorp | speed-up vs reclass-rs | x YAML floor | runs |")
    lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for impl in case.impls:
        if not impl.measured:
            reason = impl.skipped or f"failed: {impl.failed.splitlines()[0][:100]}"
            lines.append(f"| {impl.label} | {reason} | | | | | | | | |")
            continue
        full = impl.full.median_seconds
        cells = [impl.label, _seconds(full), _seconds(impl.full.median_cpu_seconds),
                 _millis(full / case.nodes)]
        cells.append(_millis(impl.nodeinfo.median_seconds) if impl.nodeinfo.runs else "n/a")
        cells.append(f"{impl.full.peak_rss_mb:.0f} MB")
        for peer in (kapicorp, rs):
            if peer is None or not peer.measured or peer is impl:
                cells.append("n/a" if peer is None or not peer.measured else "1")
            else:
                cells.append(_ratio(peer.full.median_seconds, full))
        cells.append(_ratio(full, case.floor_seconds) if case.floor_seconds else "n/a")
        cells.append(str(len(impl.full.runs)))
        lines.append("| " + " | ".join(cells) + " |")
    if case.floor_seconds is not None:
        cpu = _seconds(case.floor_cpu_seconds) if case.floor_cpu_seconds is not None else ""
        lines.append(f"| YAML floor (PyYAML CSafeLoader, every file once, in-process) | "
                     f"{_seconds(case.floor_seconds)} | {cpu} | "
                     f"{_millis(case.floor_seconds / case.nodes)} | | | | | 1 | |")
    lines.append("")
    lines.extend(check_lines(case))
    lines.append("")
    return "\n".join(lines)


def check_lines(case: CaseResult) -> list[str]:
    """The identical-output check, one bullet per implementation compared with the reference."""
    reference = next((i for i in case.impls if i.key == case.reference and i.measured), None)
    if reference is None:
        return [f"- Output check: not possible, {case.reference} did not produce output."]
    lines = []
    for impl in case.impls:
        if impl is reference or not impl.measured:
            continue
        if impl.mismatch:
            lines.append(f"- **MISMATCH** {impl.label} vs {reference.label}: "
                         f"{len(impl.mismatch_nodes)} node(s) differ; first differences:")
            lines.extend(f"  - `{text}`" for text in impl.mismatch)
        elif impl.known_differences:
            known = ", ".join(f"{node} ({why})" for node, why in impl.known_differences.items())
            lines.append(f"- {impl.label}: identical to {reference.label} except the documented "
                         f"differences: {known}")
        else:
            lines.append(f"- {impl.label}: output identical to {reference.label}")
    return lines


def targets_section(checks: list[tuple[str, str, bool | None]]) -> str:
    """The issue's targets: (target, measured value, met or None when not measurable)."""
    lines = ["### Targets", "", "| target | measured | met |", "|---|---|---|"]
    for target, measured, met in checks:
        verdict = "n/a" if met is None else ("yes" if met else "**no**")
        lines.append(f"| {target} | {measured} | {verdict} |")
    return "\n".join(lines) + "\n"
