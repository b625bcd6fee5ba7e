"""The ledger of the seeds' claims, and each one's fate on a machine.

paper/claims/<seed>.yaml lists every statement of the five seeds that a re-execution can confirm
or refute (read line by line; its quote verbatim, the seed's values, the regime it was made in, the
statistic and the rule that decide it, the experiment that measures it and what a machine needs to
judge it). A claim that an experiment here decides also names what decides it (`measured_by`):

    measured_by: {experiment: reader_comparison, macro: RcJavaVsCpp}
        the figure the section prints (with its interval: throughput.report.paper.Printed, filed
        beside the macros by write_macros), judged by the claim's rule;
    measured_by: {experiment: memory_bandwidth, state: MbwPlateauState,
                  confirmed: [met], refuted: [missed], value: MbwPlateauGHz}
        a verdict the section already words, its states mapped to the claim's fate (a state
        listed under `notmeasured`: one the configuration cannot decide, too few particle types
        read for a rank test; any other: open, more rounds would narrow it).
    measured_by: {experiment: reader_comparison, macro: RcColumnarNsNano, reciprocal: 1000}
        a figure printed as the reciprocal of the claim's (ns per value, the claim in MHz),
        turned by k / x before the rule (`scale: k` multiplies instead).
    measured_by: {experiment: memory_bandwidth, macros: [MbwOptInplaceOZeroOverOThree, ...]}
        a claim on several figures at once ("in place and immutable"), each judged by the rule:
        confirmed when every one is, refuted when any one is, undecided otherwise.

`decide` gives each claim its state on this machine: confirmed, refuted, or undecided with the
reason, computed: not measured by any experiment here, not measured on this machine (what it
lacks: a GPU, a Xeon Phi, N cores...), measured but its interval holds the rule's bound (too few
rounds: the rounds that would decide it at the spread observed), or tied to an experiment none of
whose figures decides it yet. Numbers and states here, words in paper/sections/claims.tex; the
ledger is also exported as CSV and JSON (`export`) and as a HEPData submission (`hepdata`) beside
the PDF, and two exported ledgers compare claim by claim (`compare`,
`python -m throughput.report.ledger A.json B.json`).
"""
from __future__ import annotations

import contextlib
import csv
import json
import math
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

import yaml

from ..core import intervals
from ..setup import paths
from ..setup.config import SAFE_LOADER
from . import paper, seeds

CLAIMS_DIR = paths.REPO / "paper" / "claims"
FIELDS = ("id", "seed", "where", "quote", "claim", "values", "regime", "statistic", "rule", "experiment",
          "needs", "headline")
EXPERIMENTS = ("reader_comparison", "memory_bandwidth", "gpu_bandwidth", "writing", "rdataframe", "none")
RULES = {"at_least": 1, "at_most": 1, "within": 2, "faster": 2, "ratio_close": 2, "trend": 1, "qualitative": 0}
CONFIRMED, REFUTED, UNDECIDED = "confirmed", "refuted", "undecided"
# why a claim is undecided here (words: paper/sections/claims.tex)
NO_EXPERIMENT, NOT_HERE, ROUNDS, NO_INTERVAL, NOT_WIRED, NOT_MEASURED = (
    "noexperiment", "nothere", "rounds", "nointerval", "notwired", "notmeasured")


class LedgerError(ValueError):
    """A claims file that does not say what the ledger needs, named with the claim."""


@dataclass(frozen=True)
class Claim:
    id: str
    seed: str
    where: str
    quote: str
    claim: str
    values: dict[str, Any]
    regime: str
    statistic: str
    rule: str
    experiment: str
    needs: str
    headline: bool
    measured_by: dict[str, Any] | None = None

    @property
    def rule_name(self) -> str:
        return self.rule.split()[0]

    @property
    def rule_arguments(self) -> list[str]:
        return self.rule.split()[1:]


def load(folder: str | Path = CLAIMS_DIR) -> list[Claim]:
    """Every claim of every seed's file, checked: its keys, a unique id, a known seed, experiment and
    rule (with its arguments), and a `measured_by` that names its experiment and a macro or a state."""
    claims, problems = [], []
    for path in sorted(Path(folder).glob("*.yaml")):
        for entry in yaml.load(path.read_text(), Loader=SAFE_LOADER) or []:
            name = f"{path.name}: {entry.get('id', '?')}"
            missing = [k for k in FIELDS if k not in entry]
            unknown = sorted(set(entry) - set(FIELDS) - {"measured_by"})
            if missing or unknown:
                problems.append(f"{name}: missing keys {missing}, unknown keys {unknown}")
                continue
            claim = Claim(**{k: entry[k] for k in FIELDS}, measured_by=entry.get("measured_by"))
            problems += [f"{name}: {p}" for p in _problems(claim)]
            claims.append(claim)
    ids = [c.id for c in claims]
    problems += [f"claim id {i} given twice" for i in sorted({i for i in ids if ids.count(i) > 1})]
    if problems:
        raise LedgerError("the ledger of claims (paper/claims/):\n  " + "\n  ".join(problems))
    return claims


def _problems(claim: Claim) -> list[str]:
    problems = []
    if claim.seed not in seeds.FILES:
        problems.append(f"seed {claim.seed!r} is none of {sorted(seeds.FILES)}")
    if claim.experiment not in EXPERIMENTS:
        problems.append(f"experiment {claim.experiment!r} is none of {EXPERIMENTS}")
    if claim.rule_name not in RULES or len(claim.rule_arguments) < RULES.get(claim.rule_name, 0):
        problems.append(f"rule {claim.rule!r}: not one of {sorted(RULES)} with its arguments")
    by = claim.measured_by
    if by is not None:
        if by.get("experiment") != claim.experiment:
            problems.append(f"measured_by names experiment {by.get('experiment')!r}, the claim {claim.experiment!r}")
        if sum(key in by for key in ("macro", "macros", "state")) != 1:
            problems.append("measured_by names either a macro or macros (judged by the rule) or a state (mapped)")
        if "macros" in by and not (isinstance(by["macros"], list) and len(by["macros"]) >= 2
                                   and all(isinstance(m, str) for m in by["macros"])):
            problems.append(f"measured_by macros {by['macros']!r} is not a list of two or more macro names")
        if ("macro" in by or "macros" in by) and claim.rule_name not in ("at_least", "at_most", "within",
                                                                          "ratio_close", "faster"):
            problems.append(f"a macro is judged by a numeric rule, not {claim.rule_name!r}")
        if "reciprocal" in by and not (isinstance(by["reciprocal"], (int, float)) and by["reciprocal"] > 0):
            problems.append(f"measured_by reciprocal {by['reciprocal']!r} is not a positive number")
        if "state" in by and not (by.get("confirmed") or by.get("refuted")):
            problems.append("a state needs the states that confirm or refute the claim")
        mapped = [state for key in ("confirmed", "refuted", "notmeasured") for state in by.get(key, ())]
        if len(mapped) != len(set(mapped)):
            problems.append(f"measured_by maps a state twice: {mapped}")
    return problems


# --- what a machine must have -------------------------------------------------------------------

@dataclass(frozen=True)
class Machine:
    """What the ledger needs to know of a machine: its label, usable cores, whether a GPU measured."""

    label: str
    cores: int
    gpu: bool


def lacks(claim: Claim, machine: Machine) -> str | None:
    """What `machine` lacks to judge `claim`, read from its `needs` (None: nothing it can tell)."""
    needs = claim.needs.lower()
    if re.search(r"\b(gpu|p100|cuda)\b", needs) and not machine.gpu:
        return "a GPU"
    if re.search(r"xeon phi|\bknl\b|mcdram", needs):
        return "a Xeon Phi (KNL)"
    if re.search(r"the seed's (machine|gpu models)", needs):  # an absolute figure of the seed's own hardware
        return "the seed's own hardware"
    if re.search(r"\bfull-size real\b", needs):  # the real files here are test files of a few hundred events
        return "a full-size real data file"
    counts = [int(n) for n in re.findall(r"(\d+)\s*(?:cores|threads|processes|c/)", needs)]
    if counts and max(counts) > machine.cores:
        return f"{max(counts)} cores or threads ({machine.cores} here)"
    return None


# --- the decision ---------------------------------------------------------------------------------

@dataclass
class Decision:
    """One claim's fate on one machine: `state` (confirmed, refuted, undecided), `reason` (why it is
    undecided, one of the reasons above; empty when decided), `detail` (what it lacks, the rounds it
    needs), the figure it was judged by (`value`, `low`, `high`, `rounds`, `tex`)."""

    claim: str
    machine: str
    state: str
    reason: str = ""
    detail: str = ""
    value: float = math.nan
    low: float = math.nan
    high: float = math.nan
    rounds: int = 0
    tex: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def _bounds(claim: Claim) -> tuple[float, float]:
    """The interval of values a claim's numeric rule accepts (log-symmetric for ratio_close; for
    faster A B, whose figure is A's rate over B's, above 1)."""
    if claim.rule_name == "faster":
        return 1.0, math.inf
    args = [float(a) for a in claim.rule_arguments[:2]]
    if claim.rule_name == "at_least":
        return args[0], math.inf
    if claim.rule_name == "at_most":
        return -math.inf, args[0]
    if claim.rule_name == "within":
        return args[0], args[1]
    value, tolerance = args
    return value / (1 + tolerance), value * (1 + tolerance)


def judge(claim: Claim, value: float, low: float, high: float) -> str:
    """By the whole interval: inside the accepted range confirms, wholly outside refutes, anything
    else (the interval straddles a bound) leaves the claim undecided."""
    lo, hi = _bounds(claim)
    if low >= lo and high <= hi:
        return CONFIRMED
    if high < lo or low > hi:
        return REFUTED
    return UNDECIDED


def rounds_needed(claim: Claim, value: float, low: float, high: float, rounds: int) -> int | None:
    """The rounds that would decide `claim` at the spread observed: the interval's half-width (on the
    log scale, where it is symmetric) shrinks as 1/sqrt(rounds), and it must fit between the value
    and the rule's nearest bound. None where the value sits on a bound (no number of rounds decides)
    or nothing is known."""
    if not (rounds >= 2 and value > 0 and low > 0 and high > 0):
        return None
    half = math.log(high / low) / 2
    distances = [abs(math.log(value / b)) for b in _bounds(claim) if math.isfinite(b) and b > 0]
    distance = min(distances, default=math.nan)
    if not (distance > 0):
        return None
    return max(rounds + 1, math.ceil(rounds * (half / distance) ** 2))


def decide(claim: Claim, machine: Machine, macros: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> Decision:
    """`claim` on `machine`, from the macros each experiment wrote ({experiment: {name: {tex, value,
    low, high, rounds}}}, write_macros' JSON)."""
    decision = Decision(claim.id, machine.label, UNDECIDED)
    if claim.experiment == "none":
        decision.reason, decision.detail = NO_EXPERIMENT, claim.needs
        return decision
    lacking = lacks(claim, machine)
    if lacking:
        decision.reason, decision.detail = NOT_HERE, lacking
        return decision
    by = claim.measured_by
    section = macros.get(claim.experiment)
    if by is None or section is None:
        decision.reason = NOT_WIRED if by is None else NOT_MEASURED
        decision.detail = "" if by is None else f"{claim.experiment} was not run"
        return decision
    if "state" in by:
        state = section.get(by["state"], {}).get("tex")
        shown = section.get(by.get("value", ""), {})
        decision.tex, decision.value = shown.get("tex", ""), float(shown.get("value", math.nan))
        decision.low, decision.high = float(shown.get("low", math.nan)), float(shown.get("high", math.nan))
        decision.rounds = int(shown.get("rounds", 0))
        if state is None or state == paper.NOT_MEASURED:
            decision.reason, decision.detail = NOT_MEASURED, f"{by['state']} is {state or 'not written'}"
        elif state in by.get("notmeasured", ()):  # what the run measured cannot decide it, however many rounds
            decision.reason = NOT_MEASURED
            decision.detail = f"{by['state']} is {state}: the configuration cannot decide it"
        elif state in by.get("confirmed", ()):
            decision.state = CONFIRMED
        elif state in by.get("refuted", ()):
            decision.state = REFUTED
        else:
            decision.reason = ROUNDS  # the section's verdict is open: more rounds narrow its interval
            decision.detail = f"{by['state']} is {state}: more rounds would narrow its interval"
        return decision
    if "macros" in by:
        return _decide_together(claim, machine, by, section)
    return _decide_figure(claim, machine, by, by["macro"], section)


# the order in which one figure's decision outweighs another's, in a claim on several at once
_WEIGHT = {(REFUTED, ""): 0, (UNDECIDED, NOT_MEASURED): 1, (UNDECIDED, NO_INTERVAL): 2, (UNDECIDED, ROUNDS): 3,
           (CONFIRMED, ""): 4}


def _decide_together(claim: Claim, machine: Machine, by: Mapping[str, Any],
                     section: Mapping[str, Mapping[str, Any]]) -> Decision:
    """A claim on several figures (`macros`): each judged alone, the claim takes the weightiest
    decision (_WEIGHT: one refuted figure refutes it, one not measured leaves it so, ...; all
    confirmed confirm it), the rounds it needs the most any undecided figure needs; its figure
    shown is that decision's (the first where several weigh the same), named in `detail`."""
    decisions = [_decide_figure(claim, machine, by, name, section) for name in by["macros"]]
    weightiest = min(decisions, key=lambda d: _WEIGHT[(d.state, d.reason)])
    needed = [d.extra["rounds_needed"] for d in decisions if d.extra.get("rounds_needed")]
    if weightiest.reason == ROUNDS and needed:
        weightiest.extra["rounds_needed"] = max(needed)
        weightiest.detail = f"about {max(needed)} rounds at the spread observed"
    names = ", ".join(by["macros"])
    weightiest.detail = f"{weightiest.detail} ({len(decisions)} figures judged together: {names})".lstrip()
    return weightiest


def _decide_figure(claim: Claim, machine: Machine, by: Mapping[str, Any], name: str,
                   section: Mapping[str, Mapping[str, Any]]) -> Decision:
    """`claim` judged by its rule on the figure macro `name` printed (scaled or turned as `by` says)."""
    decision = Decision(claim.id, machine.label, UNDECIDED)
    figure = section.get(name)
    if figure is None or not math.isfinite(float(figure.get("value", math.nan))):
        decision.reason, decision.detail = NOT_MEASURED, f"{name} was not measured"
        return decision
    value, low, high = (float(figure.get(k, math.nan)) for k in ("value", "low", "high"))
    scale = float(by.get("scale", 1.0))  # e.g. a percent printed where the rule is on a fraction
    value, low, high = value * scale, low * scale, high * scale
    if "reciprocal" in by:  # a time printed where the rule is on a rate (ns per value: 1000/ns MHz)
        k = float(by["reciprocal"])
        value, low, high = k / value, k / high, k / low
    decision.tex, decision.rounds = figure.get("tex", ""), int(figure.get("rounds", 0))
    decision.value, decision.low, decision.high = value, low, high
    if not (math.isfinite(low) and math.isfinite(high)):
        decision.reason, decision.detail = NO_INTERVAL, "one round: no interval"
        return decision
    decision.state = judge(claim, value, low, high)
    if decision.state == UNDECIDED:
        needed = rounds_needed(claim, value, low, high, decision.rounds)
        decision.reason = ROUNDS
        decision.detail = (f"about {needed} rounds at the spread observed" if needed
                           else "the value lies on the rule's bound")
        decision.extra["rounds_needed"] = needed
    return decision


def decide_all(claims: Iterable[Claim], machine: Machine,
               macros: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> list[Decision]:
    return [decide(claim, machine, macros) for claim in claims]


def looks_judge(claim: Claim, machine: Machine,
                figures: Callable[[Any, float], Mapping[str, intervals.Estimate]]) -> Callable[[Any, float], tuple[bool, int | None]]:
    """A judge for the claim's extra rounds (throughput.core.experiment.Deciding): `figures(rows,
    confidence)` gives the claim's macros from its group's rows at a level, as its section would
    print them; the claim is decided on them as the paper's ledger decides it. Returns whether it
    is settled (more rounds cannot change it) and the rounds that would decide it (None: none
    known)."""
    def judge(rows: Any, confidence: float) -> tuple[bool, int | None]:
        printed = {name: {"value": e.value, "low": e.low, "high": e.high, "rounds": e.processes}
                   for name, e in figures(rows, confidence).items()}
        decision = decide(claim, machine, {claim.experiment: printed})
        return decision.reason != ROUNDS, decision.extra.get("rounds_needed")
    return judge


def deciding(experiment: str, figures: Iterable[str], folder: str | Path = CLAIMS_DIR) -> list[Claim]:
    """The claims of `experiment` that only `figures` decide (its measured_by macro, or all its
    macros, among them): those its extra rounds may be given to."""
    figures = set(figures)
    found = []
    for claim in load(folder):
        by = claim.measured_by or {}
        names = set(by.get("macros", [])) or {by.get("macro")}
        if claim.experiment == experiment and names <= figures:
            found.append(claim)
    return found


# the macros looks_macros writes after its prefix
LOOKS_MACROS = ("MaxLooks", "LooksLevel", "DecideBudget", "DecidingClaims", "LooksState", "ExtendedClaims",
                "ExtraRounds", "ExtendedList")


def looks_macros(prefix: str, looks: Any, frame: Any, claims: list[Claim]) -> dict[str, str]:
    """The stopping rule of a section's extra rounds (throughput.core.experiment.Looks) and what it
    did, as <prefix>MaxLooks, LooksLevel, DecideBudget, DecidingClaims (its `claims`),
    LooksState (none or some; the section words each), ExtendedClaims, ExtraRounds, ExtendedList."""
    # each claim's extra rounds once (the rows of its look's runs and samples alike)
    extra = (frame[frame["look"].fillna(0) > 0].drop_duplicates(["extended_for", "round"])["extended_for"].tolist()
             if "look" in frame else [])
    return {f"{prefix}MaxLooks": str(looks.max_looks), f"{prefix}LooksLevel": paper.number(100 * looks.confidence, 3),
            f"{prefix}DecideBudget": paper.number(looks.budget_s, 3), f"{prefix}DecidingClaims": str(len(claims)),
            f"{prefix}LooksState": "some" if extra else "none",
            f"{prefix}ExtendedClaims": str(len(set(extra))), f"{prefix}ExtraRounds": str(len(extra)),
            f"{prefix}ExtendedList": paper.escape(", ".join(sorted(set(extra)))) or "--"}


def decide_archived(claims: list[Claim], macros: Mapping[str, Mapping[str, Mapping[str, Any]]],
                    cores: Mapping[str, int]) -> dict[str, list[Decision]]:
    """Every claim on each archived machine the sections print figures of (archived_sections), with
    its usable cores from its manifest (`cores`, by label); a machine the GPU section prints has a GPU."""
    return {label: decide_all(claims, Machine(label, int(cores.get(label, 0)), "gpu_bandwidth" in sections), sections)
            for label, sections in archived_sections(macros).items()}


def read_macros(paper_dir: str | Path) -> dict[str, dict[str, dict[str, Any]]]:
    """Each experiment's macros with their numbers (paper/generated/<experiment>/macros.json)."""
    found = {}
    for path in sorted(Path(paper_dir).glob("*/macros.json")):
        found[path.parent.name] = json.loads(path.read_text())
    return found


_ARCHIVED_LABEL = re.compile(r"(?P<prefix>[A-Z][a-z]+)(?P<infix>Arch[A-Z]+)Label")


def archived_sections(macros: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> dict[str, dict[str, dict[str, Any]]]:
    """Each archived machine's figures as its own `macros` ({label: {experiment: {name: figure}}}):
    a section prints an archived machine's figures under its prefix and Arch<letters> (GpubArchA...,
    with GpubArchALabel its label; throughput.experiments.*.report), which `decide` then finds
    under the names this machine's have (GpubArchARatioX -> GpubRatioX)."""
    found: dict[str, dict[str, dict[str, Any]]] = {}
    for experiment, section in macros.items():
        infixes = {}
        for name, figure in section.items():
            match = _ARCHIVED_LABEL.fullmatch(name)
            if match:
                infixes[match["prefix"] + match["infix"]] = (match["prefix"], figure.get("tex", ""))
        mine_by_start = {start: found.setdefault(label.replace("\\", ""), {}).setdefault(experiment, {})
                         for start, (_, label) in infixes.items()}  # the machines in the section's order
        claimed: set[str] = set()
        for start in sorted(infixes, key=len, reverse=True):  # GpubArchAB's names before GpubArchA's
            prefix, mine = infixes[start][0], mine_by_start[start]
            for name, figure in section.items():
                if name.startswith(start) and name[len(start):][:1].isupper() and name not in claimed:
                    mine[prefix + name[len(start):]] = figure
                    claimed.add(name)
    return found


# --- the paper and the exports ----------------------------------------------------------------------

def counts(claims: list[Claim], decisions: list[Decision]) -> dict[str, int]:
    """How many claims end in each state, and the undecided by their reason."""
    found = {CONFIRMED: 0, REFUTED: 0, UNDECIDED: 0}
    reasons = {r: 0 for r in (NO_EXPERIMENT, NOT_HERE, ROUNDS, NO_INTERVAL, NOT_WIRED, NOT_MEASURED)}
    for d in decisions:
        found[d.state] += 1
        if d.state == UNDECIDED:
            reasons[d.reason] += 1
    return {"claims": len(claims), "headline": sum(c.headline for c in claims), **found, **reasons}


def macros(claims: list[Claim], decisions: list[Decision],
           archived: Mapping[str, list[Decision]] | None = None) -> dict[str, str]:
    """The claims section's and the abstract's numbers (Ledger...), per state and reason, overall and
    for the headline claims, and the confirmed and refuted headline claims as lists of items; for
    the archived machines (`archived`: label -> its decisions), what each decided
    (LedgerArchivedList: \\ledgeron{label}{confirmed}{refuted} each, the section words it) and
    how many claims undecided here one of them decided (LedgerArchivedOnly)."""
    by_id = {c.id: c for c in claims}
    everything, headline = counts(claims, decisions), counts(
        [c for c in claims if c.headline], [d for d in decisions if by_id[d.claim].headline])
    names = {"claims": "Claims", "headline": "Headline", CONFIRMED: "Confirmed", REFUTED: "Refuted",
             UNDECIDED: "Undecided", NO_EXPERIMENT: "NoExperiment", NOT_HERE: "NotHere", ROUNDS: "Rounds",
             NO_INTERVAL: "NoInterval", NOT_WIRED: "NotWired", NOT_MEASURED: "NotMeasured"}
    out = {f"Ledger{names[k]}": str(v) for k, v in everything.items()}
    out |= {f"LedgerHeadline{names[k]}": str(v) for k, v in headline.items() if k not in ("claims", "headline")}
    decided = [d for d in decisions if d.state != UNDECIDED]
    out["LedgerDecided"] = str(len(decided))
    for state, name in ((CONFIRMED, "ConfirmedList"), (REFUTED, "RefutedList")):
        # the claim's sentence without its full stop: the list goes on after it
        items = [rf"\ledgeritem{{{paper.escape(by_id[d.claim].claim.rstrip('.'))}}}{{{d.claim}}}"
                 for d in decisions if d.state == state and by_id[d.claim].headline]
        out[f"LedgerHeadline{name}"] = "; ".join(items) if items else r"\ledgernone{}"
    archived = archived or {}
    here = {d.claim for d in decided}
    out["LedgerArchivedState"] = "some" if archived else "none"
    out["LedgerArchivedList"] = ", ".join(
        rf"\ledgeron{{{paper.escape(label)}}}{{{sum(d.state == CONFIRMED for d in theirs)}}}"
        rf"{{{sum(d.state == REFUTED for d in theirs)}}}" for label, theirs in archived.items())
    out["LedgerArchivedOnly"] = str(len({d.claim for theirs in archived.values() for d in theirs
                                         if d.state != UNDECIDED and d.claim not in here}))
    return out


def _reason_text(decision: Decision) -> str:
    words = {NO_EXPERIMENT: "no experiment here measures it", NOT_HERE: "needs", ROUNDS: "interval holds the bound",
             NO_INTERVAL: "no interval", NOT_WIRED: "no figure of its experiment decides it yet", NOT_MEASURED: "not measured"}
    text = words.get(decision.reason, "")
    return f"{text} {decision.detail}".strip() if decision.reason in (NOT_HERE, ROUNDS) else text


def table(claims: list[Claim], decisions: list[Decision], archived: Mapping[str, list[Decision]] | None = None) -> str:
    """The summary table near the start of the paper, as a longtable (it runs over pages): every
    headline claim and every claim decided here or on an archived machine, with the seed's values,
    today's figure with its interval, the state here (an undecided one with why) and the states
    the archived machines gave it."""
    by_id = {d.claim: d for d in decisions}
    elsewhere: dict[str, list[str]] = {}
    for label, theirs in (archived or {}).items():
        for d in theirs:
            if d.state != UNDECIDED:
                elsewhere.setdefault(d.claim, []).append(f"{paper.escape(label)}: {d.state} ({d.tex or '--'})")
    rows = []
    for claim in claims:
        d = by_id[claim.id]
        if not (claim.headline or d.state != UNDECIDED or claim.id in elsewhere):
            continue
        seed_values = ", ".join(f"{k} {v}" for k, v in claim.values.items() if not str(k).startswith("derived"))
        state = d.state + (rf" \ledgerwhy{{{paper.escape(_reason_text(d))}}}" if d.state == UNDECIDED else "")
        rows.append(" & ".join([rf"\ledgerclaim{{{paper.escape(claim.id)}}}{{{paper.escape(claim.claim)}}}",
                                paper.escape(seed_values or "--"), d.tex or "--", state,
                                "; ".join(elsewhere.get(claim.id, [])) or "--"]) + r" \\")
    header = r"claim & seed & this machine & state here & archived machines \\"
    column = r">{\raggedright\arraybackslash}p{%s\textwidth}"
    return "\n".join([r"\begin{longtable}{" + "".join(column % w for w in ("0.36", "0.12", "0.13", "0.14", "0.17")) + "}",
                      r"\caption{The seeds' headline claims and every claim decided on this machine or an "
                      r"archived one, by the whole \StudyConfidence\% interval of the figure that decides it "
                      r"(the ledger in full: \texttt{paper/build/claims.csv}).}\label{tab:ledger}\\",
                      r"\toprule", header, r"\midrule", r"\endfirsthead", r"\toprule", header, r"\midrule",
                      r"\endhead", *rows, r"\bottomrule", r"\end{longtable}", ""])


def export(claims: list[Claim], decisions: list[Decision], folder: str | Path) -> list[Path]:
    """The ledger beside the PDF: claims.csv (one row per claim and machine) and claims.json (the
    claims with their decisions), so that another group's run compares claim by claim."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    by_id = {c.id: c for c in claims}
    rows = [{**{k: v for k, v in asdict(by_id[d.claim]).items() if k not in ("values", "measured_by")},
             "values": json.dumps(by_id[d.claim].values), **{k: v for k, v in asdict(d).items() if k != "extra"},
             "rounds_needed": d.extra.get("rounds_needed")} for d in decisions]
    csv_path, json_path = folder / "claims.csv", folder / "claims.json"
    with open(csv_path, "w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=list(rows[0]) if rows else ["claim"])
        writer.writeheader()
        writer.writerows(rows)
    json_path.write_text(json.dumps({"claims": [asdict(c) for c in claims],
                                     "decisions": [asdict(d) for d in decisions]}, indent=1, allow_nan=True) + "\n")
    return [csv_path, json_path]


def hepdata(claims: list[Claim], decisions: list[Decision], folder: str | Path, full: Path | None = None) -> Path:
    """The ledger as a HEPData submission (hepdata_lib, which validates what it writes): one table
    per machine of the claims it measured a figure for, the claim ids as the independent variable,
    the figure with its interval (asymmetric, the study's confidence) and the state as dependent
    ones; `full` (claims.csv, every claim and machine) goes with it as a resource, where undecided
    claims without a figure (or with one from a single round, no interval) are; where no machine
    has a figure with an interval, one table of the states alone. Returns the upload,
    submission.tar.gz beside `folder`."""
    # hepdata_lib imports ROOT on import: only here, where the submission is written
    from hepdata_lib import Submission, Table, Uncertainty, Variable

    by_id = {c.id: c for c in claims}
    submission = Submission()
    if full is not None:  # absolute: the submission is written from beside `folder`
        submission.add_additional_resource("the whole ledger, every claim and machine", str(Path(full).resolve()),
                                           copy_file=True)
    machines = list(dict.fromkeys(d.machine for d in decisions))
    for machine in machines:
        # a figure with its interval only: one without (a single round) would read as exact here
        shown = [d for d in decisions if d.machine == machine
                 and all(math.isfinite(x) for x in (d.value, d.low, d.high))]
        if not shown:
            continue
        table = Table(f"Claims measured on {machine}")
        table.description = (f"The seeds' claims (paper/claims/) measured on {machine}: the figure that decides "
                             f"each, its {round(100 * intervals.CONFIDENCE)}% interval and its state by that interval.")
        table.location = "Table ledger (the seeds' claims and their fate)"
        claim = Variable("claim", is_independent=True, is_binned=False)
        claim.values = [d.claim for d in shown]
        figure = Variable("figure", is_independent=False, is_binned=False)
        figure.values = [d.value for d in shown]
        interval = Uncertainty(f"{round(100 * intervals.CONFIDENCE)}% interval", is_symmetric=False)
        interval.values = [(d.low - d.value, d.high - d.value) for d in shown]
        figure.add_uncertainty(interval)
        figure.add_qualifier("machine", machine)
        figure.add_qualifier("statistic", "see each claim's statistic in claims.csv")
        state = Variable("state", is_independent=False, is_binned=False)
        state.values = [d.state for d in shown]
        rule = Variable("rule", is_independent=False, is_binned=False)
        rule.values = [by_id[d.claim].rule for d in shown]
        for variable in (claim, figure, state, rule):
            table.add_variable(variable)
        submission.add_table(table)
    if not submission.tables:
        # HEPData takes no submission without a table: where no figure has an interval (every
        # machine measured in one round), the states alone, with no figure to read as exact
        table = Table("Claims and their states")
        table.description = ("The seeds' claims (paper/claims/) and their state on each machine; no figure is "
                             "given, none having an interval (each was measured in one round): see claims.csv.")
        table.location = "Table ledger (the seeds' claims and their fate)"
        for name, values in (("claim", [d.claim for d in decisions]), ("machine", [d.machine for d in decisions]),
                             ("state", [d.state for d in decisions])):
            variable = Variable(name, is_independent=name == "claim", is_binned=False)
            variable.values = values
            table.add_variable(variable)
        submission.add_table(table)
    folder = Path(folder).resolve()
    with contextlib.chdir(folder.parent):  # hepdata_lib writes its tarball, the upload, where it runs
        submission.create_files(folder.name, validate=True, remove_old=True)
    return folder.parent / "submission.tar.gz"


# --- two ledgers compared ---------------------------------------------------------------------------

def compare(first: Mapping[str, Any], second: Mapping[str, Any], machine_first: str = "this machine",
            machine_second: str = "this machine") -> list[dict[str, Any]]:
    """Two exported ledgers (claims.json) claim by claim, each on one of its machines: the claims
    whose state differs, then every claim both measured, by how far its figure moved (second over
    first, less one), largest first. A claim only one of them holds is listed with the other side
    empty."""
    def decisions(ledger: Mapping[str, Any], machine: str) -> dict[str, dict[str, Any]]:
        found = {d["claim"]: d for d in ledger.get("decisions", []) if d.get("machine") == machine}
        if not found:
            machines = sorted({d.get("machine") for d in ledger.get("decisions", [])})
            raise LedgerError(f"no decisions on machine {machine!r} (the ledger has {machines})")
        return found

    a, b = decisions(first, machine_first), decisions(second, machine_second)
    rows = []
    for claim in sorted(set(a) | set(b)):
        left, right = a.get(claim, {}), b.get(claim, {})
        value_a, value_b = float(left.get("value", math.nan)), float(right.get("value", math.nan))
        moved = value_b / value_a - 1 if value_a and math.isfinite(value_a) and math.isfinite(value_b) else math.nan
        rows.append({"claim": claim, "state_first": left.get("state", ""), "state_second": right.get("state", ""),
                     "value_first": value_a, "value_second": value_b, "moved": moved})
    changed = [r for r in rows if r["state_first"] != r["state_second"]]
    measured = sorted((r for r in rows if r not in changed and math.isfinite(r["moved"])),
                      key=lambda r: -abs(r["moved"]))
    return changed + measured


def main(argv: list[str] | None = None) -> int:
    import argparse

    import pandas as pd

    parser = argparse.ArgumentParser(prog="python -m throughput.report.ledger",
                                     description="Compare two ledgers of the seeds' claims (claims.json, written "
                                                 "beside the paper): which claims changed state, and by how much "
                                                 "their figures moved.")
    parser.add_argument("first", type=Path, help="a claims.json (paper/build/claims.json of one run)")
    parser.add_argument("second", type=Path, help="the claims.json to compare with it")
    parser.add_argument("--machine", default="this machine",
                        help="the machine of the first ledger to compare (default: the one that built it)")
    parser.add_argument("--second-machine", default=None, help="the second ledger's (default: --machine)")
    args = parser.parse_args(argv)
    loaded = []
    for path in (args.first, args.second):
        try:
            loaded.append(json.loads(path.read_text()))
        except (OSError, json.JSONDecodeError) as error:
            parser.error(f"{path}: not a readable claims.json ({error})")
    try:
        rows = compare(*loaded, args.machine, args.second_machine or args.machine)
    except LedgerError as error:
        parser.error(str(error))
    changed = [r for r in rows if r["state_first"] != r["state_second"]]
    print(f"{len(changed)} claims changed state; {len(rows) - len(changed)} measured in both kept theirs")
    if rows:
        frame = pd.DataFrame(rows)
        frame["moved"] = frame["moved"].map(lambda v: f"{100 * v:+.1f}%" if math.isfinite(v) else "")
        print(frame.to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

