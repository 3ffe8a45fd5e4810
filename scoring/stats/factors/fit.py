"""One confirmatory factor model fitted to one sample (docs/design/validation-analysis.md §14.5):
semopy minimises its ML objective (MLW) on the covariance matrix; the
chi-square, fit indices, standard errors and standardised solution are then
computed here from the estimates in lavaan's conventions (scoring.stats.factors.likelihood).

`fit_measurement_model` works on any layout (item -> factor), so the SHS
models and the Holzinger & Swineford (1939) check in the tests go through the
same code. A fit that did not converge, is not identified or is improper
(a Heywood case, a factor covariance matrix that is not positive definite)
comes back with a `problem` sentence and no figures at all.
"""

from __future__ import annotations

import logging
import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from scoring.stats.caveats import gettext_noop, sentence
from scoring.stats.estimators import normal_quantile
from scoring.stats.factors.likelihood import (
    Moments,
    Pattern,
    chi2_upper,
    expected_information,
    fit_indices,
    independence_chi2,
    minimise,
    rmsea_interval,
    srmr_bentler,
)
from scoring.stats.factors.model import Layout, lower_bounds, patterns

# Relative sizes below which a variance counts as zero and the information
# matrix as singular; estimates this close to the edge are not trustworthy.
BOUNDARY = 1e-6
SINGULAR = 1e-10

# The problems a fit reports, as templates for the report's language (the JSON keeps
# the English sentence under "problem" and these beside it as "message" + "params").
# Counts and lists stand where no word agrees with them ("rows: 1", "items: FA1,
# SR2"), so each sentence reads right for one and for many in every language.
FEW_ROWS = gettext_noop(
    "Too few rows: a covariance matrix of {p} items needs more rows than items (rows: "
    "{n}), so no model was fitted."
)
ITEM_CONSTANT = gettext_noop(
    "The same answer in every row (items: {items}); an item without variance cannot "
    "be modelled, so no model was fitted."
)
SINGULAR_ITEMS = gettext_noop(
    "The items' covariance matrix is singular (some item is a linear combination of "
    "others), so no model was fitted."
)
HEYWOOD = gettext_noop(
    "Improper solution (Heywood case): a residual variance reached zero (items: {items}), "
    "so the loadings cannot be trusted; no figures are reported."
)
FACTOR_VARIANCE_ZERO = gettext_noop(
    "Improper solution: a factor's variance reached zero; no figures are reported."
)
NOT_POSITIVE_DEFINITE = gettext_noop(
    "Improper solution: the factor covariance matrix is not positive definite (two or "
    "more factors correlate at 1 or beyond); no figures are reported."
)
TOO_MANY_PARAMETERS = gettext_noop(
    "The model has more parameters than the data have variances and covariances: it "
    "is not identified; no figures are reported."
)
SEMOPY_FAILED = gettext_noop("semopy could not fit the model ({error}); no figures are reported.")
NOT_CONVERGED = gettext_noop("The ML fit did not converge; no figures are reported.")
NOT_IDENTIFIED = gettext_noop(
    "The model is not identified at this solution (its information matrix is singular; "
    "with two items per factor this happens when a factor hardly correlates with any "
    "other); no figures are reported."
)


def problem(message: str, **params: object) -> dict[str, Any]:
    """{"problem": English sentence, "message": template, "params": values}."""
    said = sentence(message, **params)
    return {"problem": said["text"], "message": said["message"], "params": said["params"]}


def data_problem(data: NDArray[np.float64], layout: Layout) -> str | None:
    """Why this sample cannot carry a covariance-based fit, or None."""
    found = data_problem_sentence(data, layout)
    return None if found is None else str(found["problem"])


def data_problem_sentence(data: NDArray[np.float64], layout: Layout) -> dict[str, Any] | None:
    """`data_problem` as a `problem(...)` dict, for a report to translate."""
    n, p = data.shape
    if n <= p:
        return problem(FEW_ROWS, n=n, p=p)
    constant = [
        item for item, column in zip(layout.items, data.T, strict=True) if np.ptp(column) == 0
    ]
    if constant:
        return problem(ITEM_CONSTANT, items=", ".join(constant))
    if np.linalg.eigvalsh(np.corrcoef(data.T)).min() <= SINGULAR:
        return problem(SINGULAR_ITEMS)
    return None


def _semopy_estimates(
    layout: Layout, pattern: Pattern, kinds: list[str], moments: Moments
) -> tuple[NDArray[np.float64], bool]:
    """Fit with semopy; returns (parameter vector in `pattern`'s numbering, converged)."""
    import pandas as pd

    names = list(layout.items)
    # semopy writes INFO lines to the root logger (no graphviz; a covariance
    # matrix given without data): noise in a worker's log and on shs_analyze's stderr.
    logging.disable(logging.INFO)
    try:
        import semopy

        model = semopy.Model(layout.semopy_syntax())
        result = model.fit(
            cov=pd.DataFrame(moments.cov, index=names, columns=names), n_samples=moments.n
        )
    finally:
        logging.disable(logging.NOTSET)
    rows = [model.names_lambda[0].index(item) for item in layout.items]
    lam = model.mx_lambda[np.ix_(rows, [model.names_lambda[1].index(f) for f in layout.factors])]
    order = [model.names_psi[0].index(f) for f in layout.factors]
    phi = model.mx_psi[np.ix_(order, order)]
    theta_rows = [model.names_theta[0].index(item) for item in layout.items]
    theta = np.diag(model.mx_theta)[theta_rows]
    x = np.zeros(len(kinds))
    free = pattern.lam >= 0
    x[pattern.lam[free]] = lam[free]
    x[pattern.phi] = phi
    x[pattern.theta] = theta
    return x, bool(result.success)


def standardised(layout: Layout, pattern: Pattern, x: NDArray[np.float64]) -> NDArray[np.float64]:
    """Standardised loadings (lavaan's std.all) followed by the factor correlations."""
    lam, phi, _ = pattern.matrices(x)
    sd_items = np.sqrt(np.diag(pattern.sigma(x)))
    sd_factors = np.sqrt(np.diag(phi))
    loadings = (lam * sd_factors).sum(axis=1) / sd_items
    corr = phi / np.outer(sd_factors, sd_factors)
    return np.concatenate([loadings, corr[np.tril_indices(len(phi), -1)]])


def _delta_method(
    layout: Layout, pattern: Pattern, x: NDArray[np.float64], acov: NDArray[np.floating[Any]]
) -> NDArray[np.float64]:
    """Standard errors of the standardised solution by the delta method."""
    columns = []
    for i in range(len(x)):
        h = np.zeros_like(x)
        h[i] = 1e-6
        plus, minus = standardised(layout, pattern, x + h), standardised(layout, pattern, x - h)
        columns.append((plus - minus) / 2e-6)
    jacobian = np.array(columns).T
    se: NDArray[np.float64] = np.sqrt(
        np.maximum(np.einsum("ij,jk,ik->i", jacobian, acov, jacobian), 0.0)
    )
    return se


def improper(
    layout: Layout, pattern: Pattern, x: NDArray[np.float64], moments: Moments
) -> dict[str, Any] | None:
    """The Heywood case or non-positive-definite factor matrix as a `problem(...)`, or None."""
    _, phi, theta = pattern.matrices(x)
    variances = np.diag(moments.cov)
    at_zero = [
        item for item, t, v in zip(layout.items, theta, variances, strict=True) if t <= BOUNDARY * v
    ]
    if at_zero:
        return problem(HEYWOOD, items=", ".join(at_zero))
    if np.any(np.diag(phi) <= BOUNDARY * variances.max()):
        return problem(FACTOR_VARIANCE_ZERO)
    scale = np.sqrt(np.diag(phi))
    if np.linalg.eigvalsh(phi / np.outer(scale, scale)).min() <= BOUNDARY:
        return problem(NOT_POSITIVE_DEFINITE)
    return None


def _figures(
    layout: Layout,
    pattern: Pattern,
    x: NDArray[np.float64],
    moments: Moments,
    info: NDArray[np.float64],
) -> dict[str, Any]:
    n, p = moments.n, len(layout.items)
    sigma = pattern.sigma(x)
    f_ml = (
        np.linalg.slogdet(sigma)[1]
        + np.trace(moments.cov @ np.linalg.inv(sigma))
        - np.linalg.slogdet(moments.cov)[1]
        - p
    )
    chi2, df = float(n * f_ml), layout.moments_count - len(x)
    baseline = independence_chi2([moments])
    estimates = standardised(layout, pattern, x)
    se = _delta_method(layout, pattern, x, np.linalg.inv(info))
    z = normal_quantile(0.975)

    def entry(i: int) -> dict[str, Any]:
        value = float(estimates[i])
        return {
            "estimate": value,
            "se": float(se[i]),
            "ci95": [value - z * se[i], value + z * se[i]],
        }

    factors = layout.factors
    pairs = [(a, b) for k, a in enumerate(factors) for b in factors[:k]]
    return {
        "chi2": chi2,
        "df": df,
        "p": chi2_upper(chi2, df),
        **fit_indices(chi2, df, baseline, p * (p - 1) // 2, n, 1),
        "rmsea_ci90": list(rmsea_interval(chi2, df, n, 1)) if df > 0 else None,
        "srmr": srmr_bentler(moments.cov, sigma),
        "loadings": [
            {"item": item, "factor": layout.factor_of[item], **entry(i)}
            for i, item in enumerate(layout.items)
        ],
        "factor_correlations": [
            {"factors": [b, a], **entry(p + i)} for i, (a, b) in enumerate(pairs)
        ],
    }


def fit_measurement_model(data: NDArray[Any], layout: Layout) -> dict[str, Any]:
    """Fit `layout` to `data` (rows = respondents, columns = layout.items) by ML."""
    data = np.asarray(data, dtype=float)
    head = {"n": int(len(data)), "converged": False, "identified": False}
    found = data_problem_sentence(data, layout)
    if found:
        return {**head, **found}
    moments = Moments.of(data)
    (pattern,), kinds = patterns(layout, 1)
    if layout.moments_count < len(kinds):
        return {**head, **problem(TOO_MANY_PARAMETERS)}
    try:
        x, converged = _semopy_estimates(layout, pattern, kinds, moments)
    except (ValueError, np.linalg.LinAlgError) as error:
        return {**head, **problem(SEMOPY_FAILED, error=str(error))}
    if converged and np.all(np.isfinite(x)) and improper(layout, pattern, x, moments) is None:
        # semopy's SLSQP stops up to 1e-3 short of the minimum chi-square, which
        # moves standardised loadings in the fourth decimal (lavaan agrees to 1e-6
        # after this): finish a proper solution with L-BFGS-B on the same discrepancy,
        # keeping semopy's where L-BFGS-B stops abnormally (a line search at the optimum).
        polished, _, finished = minimise([pattern], [moments], x, lower_bounds(kinds))
        if finished:
            x = polished
    head["converged"] = converged
    if not converged or not np.all(np.isfinite(x)):
        return {**head, **problem(NOT_CONVERGED)}
    info = expected_information(pattern, moments.n, x)
    eigen = np.linalg.eigvalsh(info)
    head["identified"] = bool(eigen.min() > SINGULAR * max(eigen.max(), 1.0))
    if not head["identified"]:
        return {**head, **problem(NOT_IDENTIFIED)}
    found = improper(layout, pattern, x, moments)
    if found:
        return {**head, **found}
    return {**head, "problem": None, **_figures(layout, pattern, x, moments, info)}


def is_usable(fit: dict[str, Any]) -> bool:
    return fit.get("problem") is None and not math.isnan(fit.get("chi2", math.nan))
