# ---------------------------------------------------------------------------
# Confirmatory factor analysis: five factors against one
# ---------------------------------------------------------------------------
# Fits the SHS's five-factor model (FA, SR, LC, DP, RG, two items each) and the
# one-factor model with lavaan, and compares them by their chi-square
# difference. The report shows these under "Confirmatory factor analysis"
# (report.json: validation.cfa).

figure("validation.cfa.n", nrow(items))

# The answers as stored (-2..+2), treated as continuous. The negatively worded
# items (2, 4, 6, 8, 10) are reversed so that every loading is positive;
# negating them is the same as 6 - code on 1..5 codes, as ML ignores the shift.
negative_items <- c("q2", "q4", "q6", "q8", "q10")
cfa_answers <- items
cfa_answers[, negative_items] <- -cfa_answers[, negative_items]
cfa_answers <- as.data.frame(cfa_answers)

five_factor_model <- "
  FA =~ q1 + q2
  SR =~ q3 + q4
  LC =~ q5 + q6
  DP =~ q7 + q8
  RG =~ q9 + q10
"
one_factor_model <- "
  SHS =~ q1 + q2 + q3 + q4 + q5 + q6 + q7 + q8 + q9 + q10
"

# Maximum likelihood as the report computes it: the sample covariance matrix
# divided by N and chi-square = N times the minimum (likelihood = "normal", not
# "wishart"); each factor's first item fixes its scale (lavaan's default, not
# std.lv); standard errors from the expected information. A model lavaan
# cannot fit, or whose solution is improper (a negative variance, factors
# correlating beyond 1) or has no standard errors, is one the report gives no
# figures for: then it is NULL here too.
fit_cfa_model <- function(model) {
  fit <- tryCatch(
    cfa(model, data = cfa_answers, estimator = "ML", likelihood = "normal", information = "expected"),
    error = function(e) NULL
  )
  if (is.null(fit) || !lavInspect(fit, "converged")) return(NULL)
  proper <- suppressWarnings(lavInspect(fit, "post.check"))
  standard_errors <- parameterEstimates(fit)$se
  if (!proper || any(!is.finite(standard_errors))) return(NULL)
  fit
}
cfa_fits <- list(five = fit_cfa_model(five_factor_model), one = fit_cfa_model(one_factor_model))

for (model in names(cfa_fits)) {
  where <- paste0("validation.cfa.", model)
  figure(paste0(where, ".n"), nrow(cfa_answers))
  fit <- cfa_fits[[model]]
  if (is.null(fit)) next

  # Fit: CFI and TLI against the independence model, RMSEA and its 90% interval
  # from the noncentral chi-square, SRMR as Bentler defines it.
  measures <- fitMeasures(fit, c("chisq", "df", "pvalue", "cfi", "tli", "rmsea",
                                 "rmsea.ci.lower", "rmsea.ci.upper", "srmr_bentler"))
  figure(paste0(where, ".chi2"), measures[["chisq"]])
  figure(paste0(where, ".df"), measures[["df"]])
  figure(paste0(where, ".p"), measures[["pvalue"]])
  figure(paste0(where, ".cfi"), measures[["cfi"]])
  figure(paste0(where, ".tli"), measures[["tli"]])
  figure(paste0(where, ".rmsea"), measures[["rmsea"]])
  figure(paste0(where, ".rmsea_ci90"), c(measures[["rmsea.ci.lower"]], measures[["rmsea.ci.upper"]]))
  figure(paste0(where, ".srmr"), measures[["srmr_bentler"]])

  # Standardised loadings and factor correlations (std.all), with delta-method
  # standard errors and estimate +- 1.96 SE, in the report's order: the items
  # q1..q10, then the factor pairs (FA, SR), (FA, LC), (SR, LC), (FA, DP), ...
  standardised <- standardizedSolution(fit, type = "std.all", se = TRUE, level = 0.95)
  loadings <- standardised[standardised$op == "=~", ]
  loadings <- loadings[match(item_columns, loadings$rhs), ]
  factors <- unique(loadings$lhs)
  correlations <- standardised[standardised$op == "~~" & standardised$lhs != standardised$rhs, ]
  pairs <- do.call(rbind, lapply(seq_along(factors)[-1], function(k) {
    data.frame(first = factors[seq_len(k - 1)], second = factors[k])
  }))
  correlations <- correlations[match(paste(pairs$first, pairs$second),
                                     paste(correlations$lhs, correlations$rhs)), ]
  for (kind in c("loadings", "factor_correlations")) {
    rows <- if (kind == "loadings") loadings else correlations
    for (i in seq_len(nrow(rows))) {
      at <- paste0(where, ".", kind, ".", i - 1)
      figure(paste0(at, ".estimate"), rows$est.std[i])
      figure(paste0(at, ".se"), rows$se[i])
      figure(paste0(at, ".ci95"), c(rows$ci.lower[i], rows$ci.upper[i]))
    }
  }
}

# The one-factor model is the five-factor model with every factor correlation
# fixed at 1, so the two are nested: chi-square difference test.
if (!is.null(cfa_fits$five) && !is.null(cfa_fits$one)) {
  chi2_difference <- fitMeasures(cfa_fits$one, "chisq") - fitMeasures(cfa_fits$five, "chisq")
  df_difference <- fitMeasures(cfa_fits$one, "df") - fitMeasures(cfa_fits$five, "df")
  figure("validation.cfa.difference.chi2", chi2_difference)
  figure("validation.cfa.difference.df", df_difference)
  figure("validation.cfa.difference.p",
         pchisq(max(chi2_difference, 0), df_difference, lower.tail = FALSE))
}
