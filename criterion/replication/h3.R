# ---------------------------------------------------------------------------
# Criterion validity: H3, the detectors, the falsification verdict
# ---------------------------------------------------------------------------
# Recomputes the criterion section's H3 table, the "Model-side detectors"
# table and the falsification verdict, then holds every recomputed verdict
# word against the report's. Uses the rows and rules of the section above.

# --- H3: what factual precision leaves unexplained ----------------------------
# The outcome is regressed on factual precision (OLS) and its residual on the
# predictor (OLS). With the Deceptiveness dimension (DP) as predictor the
# outcome is the mean of the four other dimensions, and the observed
# standardised slope is held against its distribution when factual precision
# is permuted (it carries no information then); with the annotated
# presentation measure the outcome is SHS and the slope's t test decides.
by_dp <- h3_predictor == "DP"
h3 <- if (by_dp) complete("precision", dimensions) else complete("shs", "precision", "presentation")
h3$outcome <- if (by_dp) rowMeans(h3[setdiff(dimensions, "DP")]) else h3$shs
h3$predictor <- if (by_dp) h3$DP else h3$presentation
at <- "criterion.analysis.h3."
figure(paste0(at, "n"), nrow(h3))
figure(paste0(at, "n_participants"), length(unique(h3$participant)))
figure(paste0(at, "criterion_agreement.0.icc"), icc_of("factual_precision"))
if (!by_dp) figure(paste0(at, "criterion_agreement.1.icc"), icc_of("presentation"))
figure("criterion.figures.h3.points", nrow(h3))
figure("criterion.figures.h3.n_evaluations", nrow(h3))

# The correlation of DP with the residual of the outcome on a version of
# factual precision: the standardised slope of the DP form.
residual_correlation <- function(precision) {
  cor(residuals(lm(h3$outcome ~ precision)), h3$predictor)
}
h3_verdicts <- c(unclustered = "not_computable", clustered = "not_computable")
h3_tails <- list(unclustered = c(NA, NA), clustered = c(NA, NA))
testable <- FALSE
if (nrow(h3) >= 4 && varies(h3$precision)) {
  first_stage <- lm(outcome ~ precision, data = h3)
  h3$residual <- residuals(first_stage)
  figure(paste0(at, "first_stage.intercept"), coef(first_stage)[[1]])
  figure(paste0(at, "first_stage.slope"), coef(first_stage)[[2]])
  # No test when the predictor does not vary, or the outcome is a straight
  # line of factual precision (the residual is rounding noise).
  spread <- function(x) sqrt(mean((x - mean(x))^2))
  testable <- varies(h3$predictor) && spread(h3$residual) > 1e-12 * (1 + spread(h3$outcome))
}
for (analysis in c("unclustered", "clustered")) {
  where <- paste0(at, analysis, ".")
  # Missing (the report's null) unless computed below.
  for (name in c("beta_std", "ci_low", "ci_high", "p", "slope", "se", "t", "df")) {
    figure(paste0(where, name), NA)
  }
  if (!testable || (analysis == "clustered" && length(unique(h3$participant)) < 4)) next
  fit <- lm(residual ~ predictor, data = h3)
  slope <- coef(fit)[["predictor"]]
  if (analysis == "unclustered") {
    se <- sqrt(vcov(fit)["predictor", "predictor"])
    df <- nrow(h3) - 2
  } else {
    # Cluster-robust SE by participant with the CR1 small-sample correction
    # (G / (G - 1) * (n - 1) / (n - 2)), as statsmodels' "cluster" covariance
    # the platform uses, and t with G - 1 df.
    se <- sqrt(sandwich::vcovCL(fit, cluster = h3$participant, type = "HC1")["predictor", "predictor"])
    df <- length(unique(h3$participant)) - 1
  }
  figure(paste0(where, "slope"), slope)
  figure(paste0(where, "df"), df)
  # The slope standardised by the SDs of the predictor and the residual.
  scale <- sd(h3$predictor) / sd(h3$residual)
  figure(paste0(where, "beta_std"), slope * scale)
  if (is.finite(se) && se > 0 && df > 0) {
    t <- slope / se
    half <- qt(1 - criterion_alpha / 2, df) * se
    figure(paste0(where, "se"), se)
    figure(paste0(where, "t"), t)
    figure(paste0(where, "ci_low"), (slope - half) * scale)
    figure(paste0(where, "ci_high"), (slope + half) * scale)
    figure(paste0(where, "p"), if (criterion_sidedness == "one_sided") pt(t, df, lower.tail = FALSE) else
      min(1, 2 * pt(-abs(t), df)))
    h3_verdicts[analysis] <- from_tails(pt(t, df, lower.tail = FALSE), pt(t, df))
  }
  if (by_dp) {
    # The permutation null: factual precision permuted across evaluations
    # (unclustered), or whole participants' blocks exchanged among participants
    # with as many evaluations, each taking over the other's values in block
    # order (clustered). R's own random numbers: Monte Carlo error only.
    observed <- residual_correlation(h3$precision)
    null <- vapply(seq_len(criterion_resamples), function(b) {
      if (analysis == "unclustered") return(residual_correlation(sample(h3$precision)))
      permuted <- h3$precision
      rows_of <- split(seq_len(nrow(h3)), h3$participant)
      for (size in unique(lengths(rows_of))) {
        group <- rows_of[lengths(rows_of) == size]
        moved <- group[sample(length(group))]
        for (g in seq_along(group)) permuted[group[[g]]] <- h3$precision[moved[[g]]]
      }
      residual_correlation(permuted)
    }, numeric(1))
    finite <- null[is.finite(null)]
    # Each tail counts the observed statistic among the permutations
    # (Phipson and Smyth 2010), so p is never 0.
    upper <- (1 + sum(finite >= observed)) / (1 + length(finite))
    lower <- (1 + sum(finite <= observed)) / (1 + length(finite))
    figure(paste0(where, "null.mean"), mean(null))
    figure(paste0(where, "null.low"), quantile(finite, criterion_alpha / 2, type = 7))
    figure(paste0(where, "null.high"), quantile(finite, 1 - criterion_alpha / 2, type = 7))
    figure(paste0(where, "p_permutation"), if (criterion_sidedness == "one_sided") upper else
      min(1, 2 * min(upper, lower)))
    # The slope's own t test rejects whenever the dimensions correlate: with
    # DP the permutation test decides.
    h3_verdicts[analysis] <- from_tails(upper, lower)
    h3_tails[[analysis]] <- c(upper, lower)
  }
}
# The report's two one-sided permutation p values, from the one it shows: the
# predicted tail's when one-sided, twice the smaller tail's when two-sided (the
# smaller is the tail of the side of the null's mean the observed slope lies
# on). The observed statistic counts in both tails, so the other is
# 1 - p + 1 / (permutations + 1).
report_permutation_tails <- function(where) {
  p <- report_number(paste0(where, "p_permutation"))
  if (is.na(p)) return(c(NA, NA))
  other <- function(tail) 1 - tail + 1 / (criterion_resamples + 1)
  if (criterion_sidedness == "one_sided") return(c(p, other(p)))
  above <- isTRUE(report_number(paste0(where, "beta_std")) >= report_number(paste0(where, "null.mean")))
  if (above) c(p / 2, other(p / 2)) else c(other(p / 2), p / 2)
}
# With DP the permutations decide both analyses; with the presentation measure the t tests.
for (analysis in c("unclustered", "clustered")) {
  where <- paste0(at, analysis, ".")
  record_verdict(paste0(where, "verdict"), h3_verdicts[[analysis]], by_dp,
                 if (by_dp) permutation_evidence(report_permutation_tails(where), h3_tails[[analysis]]))
}
record_verdict(paste0(at, "verdict"), h3_verdicts[[criterion_primary]], by_dp,
               list(parts = paste0(at, criterion_primary, ".verdict")))

# --- Model-side detectors (descriptive) ----------------------------------------
for (measure in detector_measures) {
  detector <- rows[!is.na(rows$shs) & !is.na(rows[[measure]]), , drop = FALSE]
  at <- paste0("criterion.analysis.detectors.by_name.", sub("^detector:", "", measure), ".")
  r <- pearson(detector$shs, detector[[measure]])
  bounds <- fisher_interval(r, nrow(detector))
  figure(paste0(at, "n"), nrow(detector))
  figure(paste0(at, "n_participants"), length(unique(detector$participant)))
  figure(paste0(at, "unclustered.r"), r)
  figure(paste0(at, "unclustered.ci_low"), bounds[1])
  figure(paste0(at, "unclustered.ci_high"), bounds[2])
  figure(paste0(at, "clustered.r"), r)
  bounds <- c(NA, NA)
  if (!is.na(r) && length(unique(detector$participant)) >= 4) {
    replicates <- cluster_bootstrap(detector$participant, function(i) {
      pearson(detector$shs[i], detector[[measure]][i])
    })
    bounds <- percentile(replicates)
  }
  figure(paste0(at, "clustered.ci_low"), bounds[1])
  figure(paste0(at, "clustered.ci_high"), bounds[2])
}

# --- The falsification verdict ------------------------------------------------
# On H1's primary analysis: falsified when the whole (1 - alpha) interval of r
# lies below the threshold, not falsified when it lies at or above it,
# inconclusive when it includes the threshold or there is none.
at <- "criterion.analysis.falsification."
bounds <- if (criterion_primary == "clustered") h1_clustered$interval else h1_interval
figure(paste0(at, "r"), h1_r)
figure(paste0(at, "ci_low"), bounds[1])
figure(paste0(at, "ci_high"), bounds[2])
figure(paste0(at, "level"), 1 - criterion_alpha)
figure(paste0(at, "n"), h1_n)
figure(paste0(at, "n_participants"), length(unique(h1$participant)))
figure(paste0(at, "criterion_agreement.0.icc"), icc_of("factual_precision"))
falsification <- if (is.na(h1_r)) "not_computable" else if (anyNA(bounds)) "inconclusive" else
  if (bounds[2] < falsification_threshold) "falsified" else
    if (bounds[1] >= falsification_threshold) "not_falsified" else "inconclusive"
# A clustered interval is drawn from the bootstrap: the verdict is left to
# chance only when the bound it turns on ("falsified": the upper bound,
# "not_falsified": the lower) lies, in the report and in R, within the
# bootstrap rule's tolerance of the threshold, as far as R's bound may lie
# from the report's.
by_bootstrap <- criterion_primary == "clustered"
record_verdict(paste0(at, "verdict"), falsification, by_bootstrap,
               if (by_bootstrap) list(
                 words = c("falsified", "not_falsified"),
                 report = c(report_number(paste0(at, "ci_high")), report_number(paste0(at, "ci_low"))),
                 R = c(bounds[2], bounds[1]),
                 threshold = falsification_threshold, band = criterion_bound_tolerance
               ))
# Beside an inconclusive verdict: the side of the threshold the point estimate is on.
leaning <- if (falsification == "inconclusive") {
  if (h1_r < falsification_threshold) "below" else "above"
} else NA
record_verdict(paste0(at, "leaning"), leaning, by_bootstrap, list(parts = paste0(at, "verdict")))
# When inconclusive: about how many evaluations would give an interval that
# excludes the threshold with power .80, were r the true correlation; times the
# design effect of clustering (bootstrap variance of Fisher's z over 1 / (n - 3)).
evaluations_needed <- NA
if (falsification == "inconclusive" && abs(h1_r) < 1 &&
      abs(atanh(h1_r) - atanh(falsification_threshold)) >= 1e-9) {
  effect <- if (criterion_primary == "clustered" && !is.na(h1_clustered$se) && h1_n > 3)
    h1_clustered$se^2 * (h1_n - 3) else 1
  z <- qnorm(1 - criterion_alpha / 2) + qnorm(0.80)
  distance <- abs(atanh(h1_r) - atanh(falsification_threshold))
  evaluations_needed <- ceiling((3 + (z / distance)^2) * max(1, effect))
}
figure(paste0(at, "evaluations_needed"), evaluations_needed)

# --- The verdicts against the report's ----------------------------------------
# Each recomputed verdict word beside the report's (`verdicts`, which the
# comparison at the end prints and counts). A differing verdict is
# "differs (Monte Carlo)", which does not fail the run, only when it rests on
# draws and both the report's and R's figure it turns on lie within Monte
# Carlo error of its threshold: there other draws decide it either way, and
# no draws could make R's word the report's for certain. Any other
# difference is "DIFFERS". A verdict made of others (a hypothesis' verdict is
# its primary analysis', H2's clustered one all its comparisons') differs by
# chance only when every one of its parts that differs does.
report_word <- function(path) {
  node <- report_node(path)
  if (is.null(node)) NA_character_ else node
}
left_to_chance <- function(evidence, report_says, r_says, status) {
  if (is.null(evidence)) return(FALSE)
  if (!is.null(evidence$parts)) {
    differing <- evidence$parts[status[evidence$parts] != "equal"]
    return(length(differing) > 0 && all(status[differing] == "differs (Monte Carlo)"))
  }
  # Between "inconclusive" and one of the two decided words only: the
  # comparison that word turns on is the one the draws moved.
  says <- c(report_says, r_says)
  if (anyNA(says) || sum(says == "inconclusive") != 1) return(FALSE)
  side <- match(setdiff(says, "inconclusive"), evidence$words)
  near <- function(value) isTRUE(abs(value - evidence$threshold) <= evidence$band)
  !is.na(side) && near(evidence$report[side]) && near(evidence$R[side])
}
verdict_status <- c()
for (path in names(verdict_words)) {
  report_says <- report_word(path)
  r_says <- verdict_words[[path]]
  verdict_status[path] <- if (identical(report_says, r_says)) "equal" else
    if (verdict_drawn[[path]] &&
          left_to_chance(verdict_evidence[[path]], report_says, r_says, verdict_status))
      "differs (Monte Carlo)" else "DIFFERS"
}
verdicts <- data.frame(
  verdict = names(verdict_words),
  report = vapply(names(verdict_words), report_word, character(1)),
  R = unname(verdict_words),
  drawn = unname(verdict_drawn),
  status = unname(verdict_status),
  row.names = NULL, stringsAsFactors = FALSE
)
