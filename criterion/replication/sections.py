"""The criterion study's sections of the replication package's R script
(exports.replication): the annotators' agreement, H1-H3 with the detectors
and the falsification verdict, and the joint-use table, each recomputed in R
from the package's data and the pre-registered settings.

A section is in the script only when the report holds its figures: no
annotations, no agreement and no hypotheses; no systems, no joint-use table.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from criterion.replication.data import annotation_files, system_files
from exports.replication.sections import RULES, RSection

HERE = Path(__file__).resolve().parent
A = "criterion.agreement.*."
H1 = "criterion.analysis.h1."
H2 = "criterion.analysis.h2."
H3 = "criterion.analysis.h3."
DETECTORS = "criterion.analysis.detectors.by_name.*."
FALSIFICATION = "criterion.analysis.falsification."
SYSTEMS = "criterion.joint_use.systems.*."


def _criterion(report: Mapping[str, Any]) -> Mapping[str, Any]:
    return report.get("criterion") or {}


def has_annotations(report: Mapping[str, Any]) -> bool:
    """The report computed agreement and hypotheses: some measure was annotated."""
    criterion = _criterion(report)
    return bool(criterion.get("measures")) and bool(criterion.get("analysis"))


def has_systems(report: Mapping[str, Any]) -> bool:
    joint_use = _criterion(report).get("joint_use") or {}
    return bool(joint_use.get("systems"))


def plan_parameters(report: Mapping[str, Any]) -> dict[str, tuple[Any, str]]:
    """The settings H1-H3 follow: the pre-registration's (the paper's when
    nothing was registered), as the report records them."""
    plan = _criterion(report)["plan"]
    return {
        "h1_threshold": (plan["h1_threshold"], "H1: rho must exceed this"),
        "falsification_threshold": (
            plan["falsification_threshold"],
            "falsified when the whole interval of r lies below this",
        ),
        "criterion_alpha": (plan["alpha"], "alpha of every test; intervals are (1 - alpha)"),
        "criterion_sidedness": (plan["sidedness"], "one_sided or two_sided"),
        "criterion_primary": (
            plan["primary"],
            "the analysis the verdicts rest on: clustered or unclustered",
        ),
        "criterion_seed": (
            plan["seed"],
            "seed of the bootstrap and permutations (R draws its own numbers)",
        ),
        "criterion_resamples": (plan["resamples"], "bootstrap resamples and permutations"),
        "h3_predictor": (plan["h3_predictor"], "H3's predictor: DP or presentation"),
        "criterion_bound_tolerance": (
            RULES["bootstrap"],
            "how far R's bootstrap bound of r may lie from the report's (the bootstrap rule)",
        ),
    }


def joint_use_parameters(report: Mapping[str, Any]) -> dict[str, tuple[Any, str]]:
    joint_use = _criterion(report)["joint_use"]
    return {
        "joint_use_confidence": (joint_use["confidence"], "level of the joint-use t intervals"),
    }


def _figures(prefix: str, names: str, rule: str) -> tuple[tuple[str, str], ...]:
    return tuple((f"{prefix}{name}", rule) for name in names.split())


CLOSED = "closed_form"
BOOT = "bootstrap"

AGREEMENT = RSection(
    key="criterion_agreement",
    script=HERE / "agreement.R",
    applies=has_annotations,
    figures=(
        *_figures(A + "icc_2_1.", "value ci_low ci_high F df1 df2 p n_targets n_raters", CLOSED),
        *_figures(
            A + "krippendorff_alpha_interval.",
            "value n_transcripts n_pairable_transcripts n_annotators n_ratings",
            CLOSED,
        ),
    ),
    packages=("psych",),
    data_files=annotation_files,
)

HYPOTHESES = RSection(
    key="criterion",
    script=HERE / "hypotheses.R",
    applies=has_annotations,
    figures=(
        *_figures("criterion.analysis.counts.", "*", CLOSED),
        *_figures(H1, "n n_participants criterion_agreement.*.icc", CLOSED),
        *_figures(
            H1 + "unclustered.",
            "r ci_low ci_high p_zero test.z test.p spearman.rho spearman.p",
            CLOSED,
        ),
        *_figures(H1 + "clustered.", "r spearman.rho", CLOSED),
        # A z that divides by a bootstrap SE carries that SE's Monte Carlo
        # error times |z| (about |z| / sqrt(resamples) between two runs): it is
        # compared through its SE and its distance, not itself.
        *_figures(
            H1 + "clustered.",
            "ci_low ci_high test.p test.se spearman.ci_low spearman.ci_high",
            BOOT,
        ),
        *_figures(H2, "n n_participants criterion_agreement.*.icc", CLOSED),
        *_figures(H2 + "unclustered.correlations.*.", "r ci_low ci_high p", CLOSED),
        *_figures(H2 + "unclustered.comparisons.*.", "r_sr r_other r_between z p", CLOSED),
        *_figures(H2 + "clustered.correlations.*.", "r", CLOSED),
        *_figures(H2 + "clustered.correlations.*.", "ci_low ci_high", BOOT),
        *_figures(H2 + "clustered.comparisons.*.", "difference", CLOSED),
        *_figures(H2 + "clustered.comparisons.*.", "ci_low ci_high p se", BOOT),
        *_figures("criterion.figures.", "*.points *.n_evaluations", CLOSED),
    ),
    parameters=plan_parameters,
    data_files=annotation_files,
)

H3_SECTION = RSection(
    key="criterion_h3",
    script=HERE / "h3.R",
    applies=has_annotations,
    figures=(
        *_figures(H3, "n n_participants criterion_agreement.*.icc", CLOSED),
        *_figures(H3 + "first_stage.", "intercept slope", CLOSED),
        *_figures(H3 + "*.", "beta_std ci_low ci_high p slope se t df", CLOSED),
        *_figures(H3 + "*.", "null.mean null.low null.high p_permutation", BOOT),
        *_figures(DETECTORS, "n n_participants unclustered.r", CLOSED),
        *_figures(DETECTORS, "unclustered.ci_low unclustered.ci_high clustered.r", CLOSED),
        *_figures(DETECTORS, "clustered.ci_low clustered.ci_high", BOOT),
        *_figures(FALSIFICATION, "r level n n_participants criterion_agreement.*.icc", CLOSED),
        # The primary analysis' interval: a bootstrap one when the clustered
        # analysis is primary (the looser rule, also for the unclustered one),
        # and the planning figure that scales with its bootstrap variance.
        *_figures(FALSIFICATION, "ci_low ci_high evaluations_needed", BOOT),
    ),
    packages=("sandwich",),
)

JOINT_USE = RSection(
    key="criterion_joint_use",
    script=HERE / "joint_use.R",
    applies=has_systems,
    figures=(
        *_figures(SYSTEMS, "evaluations participants shs_mean shs_sd shs_ci95.*", CLOSED),
        *_figures(SYSTEMS, "dimension_means.* automated.*.normalised", CLOSED),
    ),
    parameters=joint_use_parameters,
    data_files=system_files,
)

SECTIONS = (AGREEMENT, HYPOTHESES, H3_SECTION, JOINT_USE)
