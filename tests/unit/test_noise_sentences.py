"""noise_sentences: the noise control's numbers and states, and their words in
paper/wording/noise.tex: every state the generator can give has its \\variant, every number a
wording reads is written in the states that read it, and the words build."""
from __future__ import annotations

import re
import shutil

import pandas as pd
import pytest

from tex_wording import compile_pdf
from throughput import REPO
from throughput.core import noise
from throughput.report import noise_sentences, paper

WORDING = REPO / "paper" / "wording" / "noise.tex"


def _tex() -> str:
    return re.sub(r"(?<!\\)%[^\n]*", "", WORDING.read_text())


def _rows(**columns) -> pd.DataFrame:
    """Two runs of two rounds, as measure_interleaved records them, with `columns` over them."""
    base = {"run": ["a", "a", "b", "b"], "round": [0, 1, 0, 1], "warmup": False, "half_width": 0.05,
            "cv": 0.01, "noisy": False, "attempt": 0, "others_cores": [0.1, 0.2, 0.3, 0.4],
            "load_avg_1min": [1.0, 1.5, 0.5, 2.0], "steal_fraction": [0.0, 0.01, 0.02, 0.0],
            "retakes": 0, "cpu_stall_share": [0.0, 0.01, 0.05, 0.0], "wall_s": 0.2}
    return pd.DataFrame({**base, **columns})


# Synthetic runs that between them reach every state of a section (name: rows, settings, section).
SECTIONS = {
    # a noisy run whose group's next re-measure was beyond the budget
    "Aa": (_rows(noisy=[True, True, False, False], half_width=[0.2, 0.2, 0.05, 0.05], attempt=1,
                 beyond_budget=[True, True, False, False]),
           noise.Settings(max_remeasures=2, max_retakes=1), "writing"),
    # one process each, and no load figures from the operating system; re-measures without a budget
    "Ab": (_rows(half_width=float("nan"), cpu_stall_share=float("nan"), steal_fraction=float("nan")),
           noise.Settings(max_remeasures=0, remeasure_budget_s=None), None),
    "Ac": (_rows(half_width=[0.05, 0.05, float("nan"), float("nan")]), noise.Settings(max_remeasures=0), "writing"),
    # calibrated samples, one short for its cost cap, one faster than its calibration, one not calibrated
    "Ad": (_rows(record="timing", loops=[2, 50, 40, None], sample_s=[0.02, 0.1, 0.09, None],
                 wall_s=[0.6, 0.003, 0.003, 0.01], prep_s=0.0, threads=[1, 1, 64, 1],
                 run_delay_s=[0.0, 0.0015, 0.0, 0.001], sample_retakes=[0, 1, 0, None]),
           noise.Settings(min_sample_s=0.1, max_sample_s=1.0), None),
    "Ae": (_rows(loops=10, wall_s=[0.05, 0.2, 0.2, 0.2], run_delay_s=0.001), noise.Settings(min_sample_s=0.1), None),
    "Af": (_rows(loops=10, wall_s=[0.05, 0.2, 0.2, 0.2]).assign(
        sample_s=[0.05, 0.2, 0.2, 0.2], prep_s=100.0, run_delay_s=0.001, sample_retakes=0),
           noise.Settings(min_sample_s=0.1, max_sample_s=1.0), None),
    # more noisy runs than a sentence names, every sample long enough
    "Ag": (pd.DataFrame({"run": [f"r{i}" for i in range(10)], "round": 0, "warmup": False, "cv": 0.01,
                         "half_width": [0.1 + 0.01 * i for i in range(10)], "noisy": True, "attempt": 0,
                         "others_cores": 0.0, "load_avg_1min": 0.0, "steal_fraction": 0.0, "retakes": 0,
                         "cpu_stall_share": 0.0, "loops": 10, "wall_s": 0.2}),
           noise.Settings(min_sample_s=0.1), None),
}


def _load(others, load, steal, orchestrator=None):
    return {"others_cores": others, "load_avg_1min": load, "steal_fraction": steal,
            **({} if orchestrator is None else {"orchestrator_cores": orchestrator})}


def _interleaved(width, noisy=False, retakes=0, drift=None):
    return {"load": _load(0.1, 1.0, 0.0), "noise": {"half_width": width, "max_half_width": 0.1, "noisy": noisy,
                                                     "retakes": retakes, "round_drift": drift}}


FIT = {"key": "writing.max_threads", "requested": 64, "used": 2, "limit": "2 usable cores"}
# Stored runs that between them reach every state of the method section.
STUDIES = {
    "none": {"writing": [{}]},
    "all": {"memory_bandwidth": [_interleaved(0.05, noisy=True, retakes=2,
                                              drift={"common": 0.02, "own": 0.01, "figures": 4, "rounds": 5}),
                                 {**_interleaved(0.2), "fitted_to_machine": [FIT]}],
            "writing": [{"load": _load(0.5, 2.0, 0.01)}, {}]},
    "quiet": {"memory_bandwidth": [_interleaved(0.05), _interleaved(0.02)],
              "writing": [{"load": _load(0.1, 1.0, 0.0, orchestrator=0.001)}]},
    "oneby": {"writing": [{"load": _load(float("nan"), 1.0, 0.0)}]},
    # no load average or steal from the operating system
    "nosystem": {"writing": [{"load": _load(0.1, float("nan"), float("nan"))}]},
    "nowidth": {"memory_bandwidth": [{"load": _load(0.1, 1.0, 0.0, orchestrator=0.25),
                                      "noise": {"max_half_width": 0.1}}]},
}
# The widths of the intervals a study's experiments printed (paper.PRINTED_WIDTHS), where it has any.
PRINTED = {"all": {"memory_bandwidth": [0.02, 0.04, 0.3], "writing": [0.12]}}


def _section_macros(monkeypatch) -> dict[str, str]:
    monkeypatch.setattr(noise_sentences, "_usable_cores", lambda: 64)
    values = {}
    for prefix, (rows, settings, section) in SECTIONS.items():
        values |= noise_sentences.paper_macros(prefix, rows, settings, section=section)
    samples = noise_sentences.samples(SECTIONS["Ad"][0], SECTIONS["Ad"][1], together=True)
    # the rate model's passes: several processes timed as one; rows that name no run
    unnamed = noise_sentences.samples(SECTIONS["Ae"][0].drop(columns="run"), SECTIONS["Ae"][1])
    return values | noise_sentences.macros("Ah", samples) | noise_sentences.macros("Ai", unnamed)


def _states(values: dict[str, str]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for name, value in values.items():
        if name.endswith("State"):
            found.setdefault(re.sub(r"^[A-Z][a-z]+Noise", "", name)[:-len("State")], set()).add(value)
    return found


def test_every_state_has_its_variant_in_the_wording():
    variants: dict[str, set[str]] = {}
    for family, state in re.findall(r"\\variant\{Noise([A-Za-z]+)\}\{([a-z]+)\}", _tex()):
        variants.setdefault(family, set()).add(state)
    assert variants == {family: set(states) for family, states in noise_sentences.STATES.items()}


def test_the_synthetic_runs_reach_every_state(monkeypatch):
    values = _section_macros(monkeypatch)
    for index, (name, provenances) in enumerate(STUDIES.items()):
        values |= {k.replace("Study", f"S{'abcdefgh'[index]}", 1): v
                   for k, v in noise_sentences.study_macros(provenances, PRINTED.get(name)).items()}
    assert _states(values) == {family: set(states) for family, states in noise_sentences.STATES.items()}


def test_a_state_outside_its_family_is_refused():
    with pytest.raises(ValueError, match=r"XxNoiseVerdictState is 'bogus'"):
        noise_sentences.macros("Xx", {"VerdictState": "bogus"})


def test_the_numbers_are_the_rows():
    rows, settings, _ = SECTIONS["Aa"]
    facts = noise_sentences.describe(rows, settings)
    assert facts["OthersMean"] == pytest.approx(rows["others_cores"].mean())
    assert facts["StealMax"] == pytest.approx(100 * rows["steal_fraction"].max())
    assert (facts["VerdictState"], facts["NoisyCount"], facts["Runs"], facts["NoisyList"]) == \
        ("noisy", 1, 2, [("a", pytest.approx(20))])
    values = noise_sentences.macros("Xx", facts)
    assert values["XxNoiseOthersMax"] == paper.number(rows["others_cores"].max())
    assert values["XxNoiseNoisyList"] == r"\noisenoisyrun{a}{\num{20}}"
    # the reader's samples: a is short for the cap (its opening would cost 0.6 * 2 * 5 s), b faster
    facts = noise_sentences.samples(*SECTIONS["Ad"][:2])
    assert (facts["SamplesState"], facts["SampleLengthState"], facts["Samples"], facts["Uncalibrated"]) == \
        ("calibrated", "printed", 3, 1)
    assert (facts["Short"], facts["Capped"], facts["Faster"], facts["ShortCauseState"]) == (2, 1, 1, "both")
    assert facts["Shortest"] == 0.02 and facts["MaxLoops"] == 50


def _document(values: dict[str, str], body: str) -> str:
    text = (REPO / "paper" / "paper.tex").read_text()
    mechanism = text[text.index(r"\makeatletter"):text.index(r"\makeatother") + len(r"\makeatother")]
    macros = "\n".join(rf"\newcommand{{\{name}}}{{{value}}}" for name, value in values.items())
    return "\n".join([r"\documentclass{article}", r"\usepackage[T1]{fontenc}", r"\usepackage{lmodern}", r"\usepackage{siunitx}", mechanism,
                      rf"\input{{{WORDING}}}", r"\newcommand{\StudyConfidence}{95}", macros,
                      r"\begin{document}", body, r"\end{document}"])


_build = compile_pdf  # (tests/tex_wording.py)


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="no pdflatex")
def test_every_state_builds_and_reads_its_numbers(tmp_path, monkeypatch):
    values = _section_macros(monkeypatch)
    body = [rf"\{p}Noise{{}} Noisy groups are \{p}Remeasured." for p in SECTIONS] + [r"Model. \noisesamples{Ah}"]
    for name, provenances in STUDIES.items():
        # each study's macros as the method section's, in turn
        study = noise_sentences.study_macros(provenances, PRINTED.get(name))
        body.append(r"\par\begingroup" + "".join(rf"\def\{k}{{{v}}}" for k, v in study.items()) +
                    r"\StudyNoise{}\endgroup")
    code, log, text = _build(tmp_path, _document(values, "\n\n".join(body)))
    assert code == 0, log[-2000:]
    assert "runs kept a 95% interval wider than ±10% after up to 2 re-measures of their group and are flagged: a " \
        "(±20%) (2 of the 2 runs were measured again with their group); 1 of the noisy runs were not measured as " \
        "often as that, since their group's next re-measure would have cost more than the 60 s re-measure budget " \
        "had left." in text
    assert "up to 2 times while the re-measures of one measurement cost at most 60 s of passes together" in text
    assert "(not measured again (writing.remeasure_noisy is off)" not in text  # said by Remeasured alone
    assert "no interval is known" in text and "1 runs had too few processes for an interval" in text
    assert "1 because reaching it would have cost more than 1 s in all (noise.max_sample_s) and 1 because" in text
    assert "no one of them is taken again alone" in text and "Model. Each timed sample" in text
    assert "None of the 1 stored runs recorded the load of the machine. No figure of this build was printed with an " \
        "interval. Nothing was lowered" in text
    assert "not the bounds of figures near zero): median ±8%, 90th percentile ±24.6%, 2 wider than ±10%; median per " \
        "experiment: memory bandwidth ±4% (of 3); writing ±12% (of 1)." in text
    assert "Lowered to fit this machine: writing.max_threads from 64 to 2 (2 usable cores)." in text
    assert "at most 0.5 (in writing); the one" in text
    assert "Across the 1 stored runs that recorded it, none recorded how busy other processes kept the cores;" in text
    assert "; the operating system gave no load average or stolen time." in text
    assert "  " not in text and " ." not in text and " ;" not in text and "??" not in text


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="no pdflatex")
def test_a_number_the_generator_did_not_write_stops_the_build(tmp_path, monkeypatch):
    values = _section_macros(monkeypatch)
    del values["AaNoiseOthersMean"]
    code, log, _ = _build(tmp_path, _document(values, r"\AaNoise{}"))
    assert code != 0 and r"\AaNoiseOthersMean is not defined" in log
