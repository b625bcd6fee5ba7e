"""The ledger of the seeds' claims (paper/claims/, throughput.report.ledger): every claim quotes its seed
verbatim and is well formed; each is decided by the whole interval of its figure, or says why not."""
from __future__ import annotations

import json
import math

import pytest

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
        for name in filter(None, (by.get("macro"), by.get("state"), by.get("value"))):
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


def test_a_claim_decided_by_a_worded_verdict_maps_its_states():
    claim = _claim("qualitative", experiment="writing", state="S", confirmed=["holds"], refuted=["blocks"], value="X")
    for state, expected in (("holds", "confirmed"), ("blocks", "refuted"), ("inconclusive", "undecided"),
                            (paper.NOT_MEASURED, "undecided")):
        printed = {"S": {"tex": state}, **_printed(68.5, 66.5, 70.6)}
        decision = ledger.decide(claim, HERE, {"writing": printed})
        assert decision.state == expected and decision.value == 68.5


@pytest.mark.parametrize("needs, experiment, reason, detail", [
    ("a GPU", "gpu_bandwidth", ledger.NOT_HERE, "a GPU"),
    ("64 threads, local SSD", "rdataframe", ledger.NOT_HERE, "64 cores or threads (2 here)"),
    ("a Xeon Phi (KNL)", "gpu_bandwidth", ledger.NOT_HERE, "a Xeon Phi (KNL)"),
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
    table = ledger.table(claims, decisions)
    assert table.count(r"\ledgerclaim{") == sum(c.headline for c in claims)  # every headline claim, decided or not
    assert r"\num{73.4}" in table
    csv_path, json_path = ledger.export(claims, decisions, tmp_path)
    exported = json.loads(json_path.read_text())
    assert len(exported["decisions"]) == len(claims) and csv_path.read_text().count("\n") == len(claims) + 1
