"""The ledger of the seeds' claims (paper/claims/, throughput.report.ledger): every claim quotes its seed
verbatim and is well formed; each is decided by the whole interval of its figure, or says why not."""
from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
import yaml

from throughput import REPO
from throughput.report import ledger, paper, seeds


@pytest.fixture(scope="module")
def claims():
    return ledger.load()


def _collapsed(text: str) -> str:
    return " ".join(text.split())


def test_every_claim_quotes_its_seed_verbatim(claims):
    texts = {seed: _collapsed((seeds.SEEDS_DIR / name).read_text()) for seed, name in seeds.FILES.items()}
    missing = [f"{c.id}: {c.quote[:60]!r}" for c in claims if _collapsed(c.quote) not in texts[c.seed]]
    assert not missing, "quotes not found in their seed:\n" + "\n".join(missing)


def test_the_ledger_covers_every_seed_and_names_its_headline_claims(claims):
    per_seed = {seed: [c for c in claims if c.seed == seed] for seed in seeds.FILES}
    assert all(len(found) >= 20 for found in per_seed.values()), {s: len(f) for s, f in per_seed.items()}
    assert all(any(c.headline for c in found) for found in per_seed.values())
    assert len({c.id for c in claims}) == len(claims)


def test_every_figure_a_claim_is_decided_by_is_written_by_its_experiment(claims):
    from test_paper import _producer_patterns  # the names a producer's code can write (tests/unit/test_paper.py)

    for claim in claims:
        by = claim.measured_by
        if by is None:
            continue
        package = REPO / "src/throughput/experiments" / by["experiment"]
        patterns = _producer_patterns([p.read_text() for p in package.rglob("*.py")])
        for name in filter(None, (by.get("macro"), by.get("state"), by.get("value"), *by.get("macros", ()))):
            assert any(p.fullmatch(name) for p in patterns), f"{claim.id}: no code of {by['experiment']} writes {name}"


def test_a_malformed_claim_is_named(tmp_path):
    (tmp_path / "000.yaml").write_text(
        "- {id: S000-x, seed: '000', where: l1, quote: q, claim: c, values: {}, regime: r, statistic: s,\n"
        "   rule: 'sometimes 3', experiment: writing, needs: n, headline: false}\n"
        "- {id: S000-x, seed: '009', where: l1, quote: q, claim: c, values: {}, regime: r, statistic: s,\n"
        "   rule: qualitative, experiment: nowhere, needs: n, headline: false,\n"
        "   measured_by: {experiment: writing, macro: WrtX}}\n"
        "- {id: S000-y, seed: '000', where: l1, quote: q, claim: c, values: {}, regime: r, statistic: s,\n"
        "   rule: at_least 1, experiment: writing, needs: n, headline: false,\n"
        "   measured_by: {experiment: writing, macro: WrtX, reciprocal: -1}}\n")
    with pytest.raises(ledger.LedgerError) as info:
        ledger.load(tmp_path)
    message = str(info.value)
    for expected in ("S000-x: rule 'sometimes 3'", "seed '009'", "experiment 'nowhere'",
                     "a macro is judged by a numeric rule", "claim id S000-x given twice",
                     "S000-y: measured_by reciprocal -1 is not a positive number"):
        assert expected in message, message


def _claim(rule: str, experiment: str = "reader_comparison", needs: str = "nothing special", **by) -> ledger.Claim:
    return ledger.Claim(id="S000-t", seed="000", where="l1", quote="q", claim="c", values={}, regime="r",
                        statistic="s", rule=rule, experiment=experiment, needs=needs, headline=True,
                        measured_by={"experiment": experiment, **by} if by else None)


HERE = ledger.Machine("this machine", cores=2, gpu=False)


def _printed(value, low=math.nan, high=math.nan, rounds=5):
    return {"X": {"tex": "x", "value": value, "low": low, "high": high, "rounds": rounds}}


@pytest.mark.parametrize("rule, figure, state", [
    ("ratio_close 4.0 0.25", (4.2, 3.8, 4.6), "confirmed"),   # inside [3.2, 5.0]
    ("ratio_close 4.0 0.25", (7.0, 6.0, 8.0), "refuted"),     # wholly above
    ("ratio_close 4.0 0.25", (7.0, 3.1, 10.9), "undecided"),  # holds the bound: more rounds
    ("within 100 1000", (73.4, 70.4, 76.4), "refuted"),
    ("at_least 0.25", (1.92, 1.8, 2.0), "confirmed"),
    ("within 20 30", (23.7, 21.9, 25.5), "confirmed"),
    ("faster columnar ttree_draw", (1.4, 1.2, 1.6), "confirmed"),  # A's rate over B's, above 1
    ("faster columnar ttree_draw", (0.7, 0.6, 0.8), "refuted"),
])
def test_a_numeric_claim_is_decided_by_the_whole_interval_of_its_figure(rule, figure, state):
    decision = ledger.decide(_claim(rule, macro="X"), HERE, {"reader_comparison": _printed(*figure)})
    assert decision.state == state and decision.value == figure[0] and decision.tex == "x"
    assert (decision.reason == ledger.ROUNDS) == (state == "undecided")


def test_a_figure_printed_as_the_reciprocal_of_the_claim_is_turned_before_the_rule():
    # 400 ns per value (380..420) is 2.5 MHz (2.38..2.63): inside within 0.18 3.0, outside at_least 3
    printed = {"reader_comparison": _printed(400.0, 380.0, 420.0)}
    inside = ledger.decide(_claim("within 0.18 3.0", macro="X", reciprocal=1000), HERE, printed)
    assert inside.state == "confirmed"
    assert (inside.value, inside.low, inside.high) == pytest.approx((2.5, 1000 / 420, 1000 / 380))
    assert ledger.decide(_claim("at_least 3", macro="X", reciprocal=1000), HERE, printed).state == "refuted"


def test_an_undecided_claim_says_how_many_rounds_would_decide_it():
    claim = _claim("ratio_close 4.0 0.25", macro="X")
    decision = ledger.decide(claim, HERE, {"reader_comparison": _printed(7.0, 3.1, 10.9, rounds=5)})
    needed = decision.extra["rounds_needed"]
    # the half-width (log scale) shrinks as 1/sqrt(rounds) until it fits between 7 and the bound 5
    half, distance = math.log(10.9 / 3.1) / 2, math.log(7.0 / 5.0)
    assert needed == math.ceil(5 * (half / distance) ** 2) and f"about {needed} rounds" in decision.detail
    one_round = ledger.decide(claim, HERE, {"reader_comparison": _printed(7.0)})
    assert (one_round.state, one_round.reason) == ("undecided", ledger.NO_INTERVAL)


def test_extra_rounds_judge_a_claim_as_the_ledger_does_and_say_what_they_did(tmp_path):
    import pandas as pd
    from throughput.core import experiment, intervals

    claim = _claim("ratio_close 4.0 0.25", macro="X")
    # the judge: the figure its section would print from the rows at the looks' level, decided by the rule
    figure = {"now": intervals.Estimate(7.0, 3.1, 10.9, 5)}
    judge = ledger.looks_judge(claim, HERE, lambda rows, confidence: {"X": figure["now"]})
    assert judge(None, 0.98) == (False, ledger.decide(claim, HERE, {"reader_comparison": _printed(7.0, 3.1, 10.9)})
                                 .extra["rounds_needed"])
    figure["now"] = intervals.Estimate(7.0, 6.0, 8.0, 5)
    assert judge(None, 0.98) == (True, None)  # refuted: settled
    # the claims a section's extra rounds may go to: those only its deciding figures decide
    folder = tmp_path / "claims"
    folder.mkdir()
    entries = []
    for name, by in (("S000-a", {"macro": "X"}), ("S000-b", {"macros": ["X", "Y"]}), ("S000-c", {"macros": ["X", "Z"]}),
                     ("S000-d", {"state": "S", "confirmed": ["yes"]})):
        entries.append({**{f: "x" for f in ledger.FIELDS}, "id": name, "seed": "000", "values": {}, "headline": False,
                        "rule": "at_least 1" if "state" not in by else "qualitative", "experiment": "writing",
                        "measured_by": {"experiment": "writing", **by}})
    (folder / "000.yaml").write_text(yaml.safe_dump(entries))
    assert [c.id for c in ledger.deciding("writing", {"X", "Y"}, folder)] == ["S000-a", "S000-b"]
    assert ledger.deciding("reader_comparison", {"X", "Y"}, folder) == []
    # what the rule did: the extra rounds counted once per claim and round, whatever rows they hold
    rows = pd.DataFrame({"round": [0, 0, 5, 5, 6, 5], "look": [0, 0, 1, 1, 1, 2],
                         "extended_for": ["", "", "S000-a", "S000-a", "S000-a", "S000-b"]})
    looks = experiment.Looks(max_looks=3, budget_s=60)
    macros = ledger.looks_macros("Xy", looks, rows, ledger.deciding("writing", {"X", "Y"}, folder))
    assert set(macros) == {"Xy" + name for name in ledger.LOOKS_MACROS}
    assert (macros["XyLooksState"], macros["XyExtendedClaims"], macros["XyExtraRounds"], macros["XyDecidingClaims"],
            macros["XyExtendedList"], macros["XyMaxLooks"]) == ("some", "2", "3", "2", "S000-a, S000-b", "3")
    assert macros["XyLooksLevel"] == paper.number(100 * intervals.bonferroni(3), 3)
    none = ledger.looks_macros("Xy", looks, pd.DataFrame(), [])
    assert (none["XyLooksState"], none["XyExtraRounds"], none["XyExtendedList"]) == ("none", "0", "--")


def test_a_claim_on_several_figures_is_confirmed_by_all_and_refuted_by_any():
    def section(**figures):
        return {"memory_bandwidth": {name: {"tex": name, "value": v, "low": lo, "high": hi, "rounds": 5}
                                     for name, (v, lo, hi) in figures.items()}}

    claim = _claim("at_least 2.0", experiment="memory_bandwidth", macros=["A", "B"])
    both = ledger.decide(claim, HERE, section(A=(3.4, 3.2, 3.6), B=(2.3, 2.1, 2.5)))
    assert both.state == "confirmed" and "2 figures judged together: A, B" in both.detail
    one_below = ledger.decide(claim, HERE, section(A=(3.4, 3.2, 3.6), B=(1.5, 1.4, 1.6)))
    assert (one_below.state, one_below.value, one_below.tex) == ("refuted", 1.5, "B")  # the figure that refutes
    # one undecided, one confirmed: undecided for rounds, with the rounds the undecided one needs
    open_ = ledger.decide(claim, HERE, section(A=(3.4, 3.2, 3.6), B=(2.2, 1.8, 2.7)))
    alone = ledger.decide(_claim("at_least 2.0", experiment="memory_bandwidth", macro="B"), HERE,
                          section(B=(2.2, 1.8, 2.7)))
    assert (open_.state, open_.reason) == ("undecided", ledger.ROUNDS)
    assert open_.extra["rounds_needed"] == alone.extra["rounds_needed"] > 5
    missing = ledger.decide(claim, HERE, section(A=(3.4, 3.2, 3.6)))
    assert (missing.state, missing.reason) == ("undecided", ledger.NOT_MEASURED) and "B was not measured" in missing.detail
    problems = ledger._problems(_claim("at_least 2.0", macros="A")) + ledger._problems(_claim("at_least 2", macro="A",
                                                                                          macros=["A", "B"]))
    assert "measured_by macros 'A' is not a list of two or more macro names" in problems
    assert "measured_by names either a macro or macros (judged by the rule) or a state (mapped)" in problems


def test_a_claim_decided_by_a_worded_verdict_maps_its_states():
    claim = _claim("qualitative", experiment="writing", state="S", confirmed=["holds"], refuted=["blocks"], value="X")
    for state, expected in (("holds", "confirmed"), ("blocks", "refuted"), ("inconclusive", "undecided"),
                            (paper.NOT_MEASURED, "undecided")):
        printed = {"S": {"tex": state}, **_printed(68.5, 66.5, 70.6)}
        decision = ledger.decide(claim, HERE, {"writing": printed})
        assert decision.state == expected and decision.value == 68.5
        assert decision.rounds == 5  # the rounds behind the figure shown, as a rule's figure keeps them


def test_a_worded_verdict_the_configuration_cannot_decide_is_not_measured():
    # too few particle types for the rank test: no number of rounds decides it
    claim = _claim("qualitative", state="S", confirmed=["grows"], refuted=["shrinks"], notmeasured=["cannotreach"])
    decide = lambda state: ledger.decide(claim, HERE, {"reader_comparison": {"S": {"tex": state}}})  # noqa: E731
    assert (decide("cannotreach").reason, decide("cannotreach").detail) == (
        ledger.NOT_MEASURED, "S is cannotreach: the configuration cannot decide it")
    assert decide("notshown").reason == ledger.ROUNDS and decide("grows").state == "confirmed"
    twice = _claim("qualitative", state="S", confirmed=["grows"], notmeasured=["grows"])
    assert any("maps a state twice" in p for p in ledger._problems(twice))


@pytest.mark.parametrize("needs, experiment, reason, detail", [
    ("a GPU", "gpu_bandwidth", ledger.NOT_HERE, "a GPU"),
    ("64 threads, local SSD", "rdataframe", ledger.NOT_HERE, "64 cores or threads (2 here)"),
    ("a Xeon Phi (KNL)", "gpu_bandwidth", ledger.NOT_HERE, "a Xeon Phi (KNL)"),
    ("the seed's machine (an absolute time of its CPU)", "memory_bandwidth", ledger.NOT_HERE,
     "the seed's own hardware"),
    ("a full-size real CMS NanoAOD file (the one here: 200 events)", "rdataframe", ledger.NOT_HERE,
     "a full-size real data file"),
    ("VTune", "none", ledger.NO_EXPERIMENT, "VTune"),
    ("nothing special", "writing", ledger.NOT_WIRED, ""),
])
def test_an_undecided_claim_says_what_this_machine_lacks(needs, experiment, reason, detail):
    decision = ledger.decide(_claim("qualitative", experiment=experiment, needs=needs), HERE, {})
    assert (decision.state, decision.reason, decision.detail) == ("undecided", reason, detail)


def test_the_paper_and_the_exports_come_from_the_decisions(claims, tmp_path):
    printed = {"reader_comparison": {"RcCmsswVsColumnar": {"tex": r"\num{73.4}", "value": 73.4, "low": 70.4,
                                                           "high": 76.4, "rounds": 5}}}
    decisions = ledger.decide_all(claims, HERE, printed)
    values = ledger.macros(claims, decisions)
    assert int(values["LedgerClaims"]) == len(claims)
    assert int(values["LedgerConfirmed"]) + int(values["LedgerRefuted"]) + int(values["LedgerUndecided"]) == len(claims)
    assert values["LedgerRefuted"] == "1" and "S000-cmssw-three-orders-slower" in values["LedgerHeadlineRefutedList"]
    # each listed claim's sentence without its full stop, its id after it
    assert ".}{S000-cmssw-three-orders-slower}" not in values["LedgerHeadlineRefutedList"]
    # the undecided claims add up in the abstract and the conclusion: each names the count of every reason
    paper_dir = Path(__file__).parents[2] / "paper"
    abstract = (paper_dir / "paper.tex").read_text().split(r"\begin{abstract}")[1].split(r"\end{abstract}")[0]
    conclusion = (paper_dir / "sections" / "conclusion.tex").read_text()
    reasons = [name for name in values if name.startswith("Ledger") and name not in (
        "LedgerClaims", "LedgerHeadline", "LedgerConfirmed", "LedgerRefuted", "LedgerUndecided", "LedgerDecided")
        and not name.startswith(("LedgerHeadline", "LedgerArchived"))]
    for text in (abstract, conclusion):
        assert reasons and all("\\" + name + "{}" in text for name in reasons), reasons
    table = ledger.table(claims, decisions)
    assert table.count(r"\ledgerclaim{") == sum(c.headline for c in claims)  # every headline claim, decided or not
    assert r"\num{73.4}" in table
    csv_path, json_path = ledger.export(claims, decisions, tmp_path)
    exported = json.loads(json_path.read_text())
    assert len(exported["decisions"]) == len(claims) and csv_path.read_text().count("\n") == len(claims) + 1


def test_an_archived_machine_is_decided_by_its_own_figures():
    figure = {"tex": "x", "value": 5.0, "low": 4.0, "high": 6.0, "rounds": 3}
    printed = {"gpu_bandwidth": {
        "GpubGpuState": {"tex": "notmeasured"},
        "GpubArchALabel": {"tex": "nvidia-h100"}, "GpubArchARatioX": {**figure, "value": 1.0, "low": 0.9, "high": 1.1},
        "GpubArchABLabel": {"tex": "nvidia-h200"}, "GpubArchABRatioX": figure}}
    sections = ledger.archived_sections(printed)
    assert sections == {"nvidia-h100": {"gpu_bandwidth": {"GpubLabel": printed["gpu_bandwidth"]["GpubArchALabel"],
                                                          "GpubRatioX": printed["gpu_bandwidth"]["GpubArchARatioX"]}},
                        "nvidia-h200": {"gpu_bandwidth": {"GpubLabel": printed["gpu_bandwidth"]["GpubArchABLabel"],
                                                          "GpubRatioX": figure}}}
    claim = _claim("at_most 3.5", experiment="gpu_bandwidth", needs="a GPU", macro="GpubRatioX")
    archived = ledger.decide_archived([claim], printed, {"nvidia-h100": 16})
    assert [(d.machine, d.state) for theirs in archived.values() for d in theirs] == [
        ("nvidia-h100", "confirmed"), ("nvidia-h200", "refuted")]
    here = ledger.decide(claim, HERE, printed)
    assert (here.state, here.detail) == ("undecided", "a GPU")  # this machine has none
    values = ledger.macros([claim], [here], archived)
    assert values["LedgerArchivedOnly"] == "1"  # the one claim, decided elsewhere only
    assert values["LedgerArchivedList"] == r"\ledgeron{nvidia-h100}{1}{0}, \ledgeron{nvidia-h200}{0}{1}"
    assert "nvidia-h200: refuted (x)" in ledger.table([claim], [here], archived)


def test_every_sentence_cites_a_claim_of_the_ledger_and_every_decided_claim_is_cited(claims):
    # a section's verdict sentence cites the claim it decides (\claimref{id, ...}, paper/paper.tex)
    ids = {c.id for c in claims}
    cited: dict[str, set[str]] = {}
    for tex in sorted((REPO / "paper" / "sections").glob("*.tex")):
        for group in re.findall(r"\\claimref\{([^}]*)\}", tex.read_text()):
            for claim in (part.strip() for part in group.split(",")):
                assert claim in ids, f"{tex.name} cites {claim}, which paper/claims/ does not hold"
                cited.setdefault(claim, set()).add(tex.stem)
    for claim in claims:
        if claim.measured_by:
            assert claim.experiment in cited.get(claim.id, ()), f"{claim.id}: no sentence of {claim.experiment}.tex cites it"


def test_the_ledger_is_a_valid_hepdata_submission(claims, tmp_path, monkeypatch):
    from hepdata_validator.full_submission_validator import FullSubmissionValidator

    printed = {"reader_comparison": {"RcRootFourJVsCpp": {"tex": "x", "value": 4.2, "low": 3.9, "high": 4.5,
                                                          "rounds": 5}}}
    decisions = ledger.decide_all(claims, HERE, printed)
    csv_path, _ = ledger.export(claims, decisions, tmp_path)
    monkeypatch.chdir(tmp_path.parent)  # paths relative to where the workflow runs, as its rule gives them
    upload = ledger.hepdata(claims, decisions, Path(tmp_path.name) / "hepdata", Path(tmp_path.name) / "claims.csv")
    assert upload == tmp_path / "submission.tar.gz" and upload.is_file()
    validator = FullSubmissionValidator()
    assert validator.validate(directory=str(tmp_path / "hepdata")), validator.get_messages()
    # read back: the claims this machine measured, with the figure and its interval as printed
    tables = [p for p in (tmp_path / "hepdata").glob("*.yaml") if p.name != "submission.yaml"]
    assert len(tables) == 1
    data = yaml.safe_load(tables[0].read_text())
    ids = [v["value"] for v in data["independent_variables"][0]["values"]]
    measured = [d for d in decisions if math.isfinite(d.value)]
    assert ids == [d.claim for d in measured] and "S000-root4j-4x-slower" in ids
    figure = data["dependent_variables"][0]["values"][ids.index("S000-root4j-4x-slower")]
    assert figure["value"] == 4.2 and figure["errors"][0]["asymerror"] == {"minus": pytest.approx(-0.3),
                                                                           "plus": pytest.approx(0.3)}


def test_a_ledger_without_any_interval_is_still_a_valid_submission_of_states_alone(claims, tmp_path):
    """Every machine measured in one round (the tiny study, an archive of it): no figure has an
    interval, so the submission holds the states alone, which HEPData accepts, and no figure."""
    from hepdata_validator.full_submission_validator import FullSubmissionValidator

    printed = {"reader_comparison": {"RcRootFourJVsCpp": {"tex": "x", "value": 4.2, "low": float("nan"),
                                                          "high": float("nan"), "rounds": 1}}}
    decisions = ledger.decide_all(claims, HERE, printed)
    upload = ledger.hepdata(claims, decisions, tmp_path / "hepdata")
    validator = FullSubmissionValidator()
    assert upload.is_file() and validator.validate(directory=str(tmp_path / "hepdata")), validator.get_messages()
    (table,) = [p for p in (tmp_path / "hepdata").glob("*.yaml") if p.name != "submission.yaml"]
    data = yaml.safe_load(table.read_text())
    assert [v["header"]["name"] for v in data["dependent_variables"]] == ["machine", "state"]
    assert len(data["independent_variables"][0]["values"]) == len(decisions) and "4.2" not in table.read_text()


def test_two_ledgers_are_compared_claim_by_claim(claims, tmp_path, capsys):
    def run(value, low, high):
        printed = {"reader_comparison": {"RcRootFourJVsCpp": {"tex": "x", "value": value, "low": low, "high": high,
                                                              "rounds": 5}}}
        folder = tmp_path / str(value)
        ledger.export(claims, ledger.decide_all(claims, HERE, printed), folder)
        return folder / "claims.json"

    first, second = run(4.2, 3.9, 4.5), run(8.0, 7.0, 9.0)  # confirmed, then refuted: 90% higher
    rows = ledger.compare(json.loads(first.read_text()), json.loads(second.read_text()))
    changed = [r for r in rows if r["state_first"] != r["state_second"]]
    assert {r["claim"] for r in changed} == {"S000-root4j-4x-slower", "S000-java-4x-slower-conclusion"}
    assert changed[0]["moved"] == pytest.approx(8.0 / 4.2 - 1)
    assert ledger.main([str(first), str(second)]) == 0
    assert "2 claims changed state" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        ledger.main([str(first), str(second), "--machine", "nvidia-h200"])
    assert "no decisions on machine 'nvidia-h200'" in capsys.readouterr().err
