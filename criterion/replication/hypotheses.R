# ---------------------------------------------------------------------------
# Criterion validity: the analysed evaluations, H1 and H2
# ---------------------------------------------------------------------------
# Recomputes the criterion section's counts and its H1 and H2 tables, each
# with every evaluation independent and clustered by participant, and the
# verdict words by the platform's rules (docs/design/criterion-verdicts.md);
# the next section does H3, the detectors and the falsification verdict. The settings (thresholds, alpha,
# sidedness, primary analysis, resamples: criterion_alpha, ...) are the
# pre-registered ones, set at the top of the script.

# Words of the verdicts, recomputed here and held against the report's at the
# end of the H3 section (they are words, not numbers: the figure table at the
# end does not show them). `drawn`: the verdict rests on the bootstrap or the
# permutations, so near its threshold R's own draws may decide it the other
# way. `evidence` (drawn verdicts only) says how near: see
# `permutation_evidence`, `z_evidence`, the falsification verdict, and the
# end of the H3 section.
verdict_words <- c()
verdict_drawn <- c()
verdict_evidence <- list()
record_verdict <- function(path, word, drawn, evidence = NULL) {
  verdict_words[path] <<- word
  verdict_drawn[path] <<- drawn
  if (!is.null(evidence)) verdict_evidence[[path]] <<- evidence
}
# A figure of the report, read only to judge whether a verdict R reached
# otherwise differs by the random draws alone (never copied into a figure).
report_node <- function(path) {
  node <- report
  for (key in strsplit(path, ".", fixed = TRUE)[[1]]) node <- node[[key]]
  node
}
report_number <- function(path) {
  node <- report_node(path)
  if (is.null(node)) NA_real_ else as.numeric(node)
}

# --- The analysed evaluations ------------------------------------------------
# One row per evaluation whose block has a transcript: its SHS and dimension
# scores (`scores`, by the published scoring) and, per measure, the mean over
# the annotators who gave one. Each participant's evaluations are one cluster
# (a session is one participant).
measured <- aggregate(value ~ transcript + measure, data = annotations, FUN = mean)
mean_of <- function(transcript, measure) {
  found <- measured$value[measured$transcript == transcript & measured$measure == measure]
  if (length(found)) found else NA_real_
}
sample_transcripts <- transcripts[!is.na(transcripts$evaluation_id), , drop = FALSE]
position <- match(sample_transcripts$evaluation_id, evaluations$evaluation_id)
rows <- data.frame(
  participant = evaluations$session_id[position],
  block = evaluations$block[position],
  scores[position, c("shs", dimensions)],
  precision = vapply(sample_transcripts$transcript, mean_of, numeric(1), "factual_precision"),
  support = vapply(sample_transcripts$transcript, mean_of, numeric(1), "citation_support"),
  presentation = vapply(sample_transcripts$transcript, mean_of, numeric(1), "presentation")
)
detector_measures <- sort(unique(grep("^detector:", annotations$measure, value = TRUE)))
for (measure in detector_measures) {
  rows[[measure]] <- vapply(sample_transcripts$transcript, mean_of, numeric(1), measure)
}
# A participant's rows in block order (the clustered permutation of H3 moves them so).
rows <- rows[order(rows$participant, rows$block), , drop = FALSE]
complete <- function(...) rows[stats::complete.cases(rows[c(...)]), , drop = FALSE]

figure("criterion.analysis.counts.n_evaluations", nrow(rows))
figure("criterion.analysis.counts.n_participants", length(unique(rows$participant)))
figure("criterion.analysis.counts.n_factual_precision", sum(!is.na(rows$precision)))
figure("criterion.analysis.counts.n_citation_support", sum(!is.na(rows$support)))

# --- The platform's rules, used by every hypothesis ---------------------------
# At least 4 pairs (Fisher's z needs n - 3 > 0); a variable whose values differ
# by no more than rounding (1e-9 of their size) does not vary.
varies <- function(x) length(x) > 0 && diff(range(x)) > 1e-9 * max(1, abs(x))
pearson <- function(x, y) {
  if (length(x) < 4 || !varies(x) || !varies(y)) return(NA_real_)
  max(-1, min(1, cor(x, y)))
}
# Two-sided (1 - alpha) Fisher-z interval of r.
fisher_interval <- function(r, n) {
  if (is.na(r) || abs(r) >= 1 || n < 4) return(c(NA, NA))
  tanh(atanh(r) + c(-1, 1) * qnorm(1 - criterion_alpha / 2) / sqrt(n - 3))
}
# Two-sided p of r under rho = 0: the t test with n - 2 df.
zero_p <- function(r, n) {
  if (is.na(r)) NA else 2 * pt(-abs(r) * sqrt((n - 2) / (1 - r^2)), n - 2)
}
# p of a z statistic whose positive side is the predicted one.
z_p <- function(z) {
  if (criterion_sidedness == "one_sided") pnorm(z, lower.tail = FALSE) else min(1, 2 * pnorm(-abs(z)))
}
# The verdict from the two one-sided p values (predicted side first): each
# at alpha when one-sided, at alpha / 2 when two-sided.
from_tails <- function(p_upper, p_lower) {
  if (is.na(p_upper) || is.na(p_lower)) return("not_computable")
  level <- if (criterion_sidedness == "one_sided") criterion_alpha else criterion_alpha / 2
  if (p_upper < level) "supported" else if (p_lower < level) "not_supported" else "inconclusive"
}
# The two one-sided p values of a z statistic, predicted side first.
z_tails <- function(z) {
  if (is.na(z) || !is.finite(z)) c(NA, NA) else c(pnorm(z, lower.tail = FALSE), pnorm(z))
}
from_z <- function(z) {
  if (is.na(z) || !is.finite(z)) "not_computable" else from_tails(z_tails(z)[1], z_tails(z)[2])
}
# What decides whether a verdict drawn from resamples may honestly come out
# otherwise in R (judged at the end of the H3 section): for each decided word
# ("supported", "not_supported") the figure it turns on, in the report and in
# R, its threshold, and the band around the threshold within which the draws
# alone may put that figure on either side: three of its Monte Carlo SDs.
decided_level <- if (criterion_sidedness == "one_sided") criterion_alpha else criterion_alpha / 2
# A permutation p is a count of draws, binomial: its SD at p = level is
# sqrt(level * (1 - level) / resamples). "supported" turns on the predicted
# tail's p, "not_supported" on the other's.
permutation_evidence <- function(report_tails, r_tails) {
  list(words = c("supported", "not_supported"), report = report_tails, R = r_tails,
       threshold = decided_level,
       band = 3 * sqrt(decided_level * (1 - decided_level) / criterion_resamples))
}

# The cluster bootstrap: `criterion_resamples` times, participants are drawn with
# replacement and every row of a drawn participant is kept (twice if drawn
# twice); `statistic(rows)` gives a vector of figures. R's own random numbers:
# the bounds agree with the report's up to Monte Carlo error.
set.seed(criterion_seed)
cluster_bootstrap <- function(participant, statistic) {
  clusters <- sort(unique(participant))
  rows_of <- split(seq_along(participant), factor(participant, clusters))
  t(vapply(seq_len(criterion_resamples), function(b) {
    drawn <- sample(length(clusters), length(clusters), replace = TRUE)
    statistic(unlist(rows_of[drawn], use.names = FALSE))
  }, numeric(length(statistic(seq_along(participant))))))
}
# A bootstrap figure needs a value in at least half the resamples.
usable <- function(replicates) {
  finite <- replicates[is.finite(replicates)]
  if (length(finite) >= 0.5 * length(replicates)) finite else numeric(0)
}
# Percentile interval (quantile type 7, numpy's linear rule).
percentile <- function(replicates) {
  finite <- usable(replicates)
  if (!length(finite)) return(c(NA, NA))
  unname(quantile(finite, c(criterion_alpha / 2, 1 - criterion_alpha / 2), type = 7))
}
# Bootstrap standard error: SD (n - 1) of the usable replicates.
bootstrap_se <- function(replicates) {
  finite <- usable(replicates)
  se <- if (length(finite) >= 2) sd(finite) else NA
  if (is.na(se) || se <= 0) NA else se
}
# A z over a bootstrap SE moves with the SE alone (its numerator is the
# data's). An SD estimated from B replicates varies by
# sqrt((kurtosis - 1) / (4 B)) of itself, so z by |z| times that: taken at the
# critical z, with the kurtosis of R's replicates. "supported" turns on z,
# "not_supported" on -z, each against the critical z. (The permutation p's
# binomial band is no Monte Carlo error of this z's p: with few resamples it
# takes in every p below alpha, z = 10 as much as z = 1.7.)
z_evidence <- function(report_z, r_z, replicates) {
  critical <- qnorm(1 - decided_level)
  finite <- usable(replicates)
  centred <- finite - mean(finite)
  kurtosis <- mean(centred^4) / mean(centred^2)^2
  noise <- if (length(finite) >= 4) sqrt((kurtosis - 1) / (4 * length(finite))) else NA
  list(words = c("supported", "not_supported"), report = c(report_z, -report_z),
       R = c(r_z, -r_z), threshold = critical, band = 3 * critical * noise)
}
fisher <- function(r) ifelse(abs(r) < 1, atanh(pmax(-1, pmin(1, r))), NA)
icc_of <- function(measure) if (measure %in% names(agreement_icc)) agreement_icc[[measure]] else NA

# --- H1: overall SHS and factual precision -----------------------------------
# rho > h1_threshold, tested on Fisher's z scale: unclustered with SE
# 1 / sqrt(n - 3), clustered with the bootstrap SE of Fisher's z.
h1 <- complete("shs", "precision")
h1_n <- nrow(h1)
h1_r <- pearson(h1$shs, h1$precision)
at <- "criterion.analysis.h1."
figure(paste0(at, "n"), h1_n)
figure(paste0(at, "n_participants"), length(unique(h1$participant)))
figure(paste0(at, "criterion_agreement.0.icc"), icc_of("factual_precision"))
h1_interval <- fisher_interval(h1_r, h1_n)
h1_z <- if (is.na(h1_r) || abs(h1_r) >= 1) NA else
  (atanh(h1_r) - atanh(h1_threshold)) * sqrt(h1_n - 3)
ranks <- if (is.na(h1_r)) NA else pearson(rank(h1$shs), rank(h1$precision))
figure(paste0(at, "unclustered.r"), h1_r)
figure(paste0(at, "unclustered.ci_low"), h1_interval[1])
figure(paste0(at, "unclustered.ci_high"), h1_interval[2])
figure(paste0(at, "unclustered.p_zero"), zero_p(h1_r, h1_n))
figure(paste0(at, "unclustered.test.z"), h1_z)
figure(paste0(at, "unclustered.test.p"), if (is.na(h1_z)) NA else z_p(h1_z))
# Spearman's rho is Pearson's r of the mid-ranks; its p the same t test.
figure(paste0(at, "unclustered.spearman.rho"), ranks)
figure(paste0(at, "unclustered.spearman.p"), zero_p(ranks, h1_n))
record_verdict(paste0(at, "unclustered.verdict"), from_z(h1_z), FALSE)

h1_clustered <- list(interval = c(NA, NA), z = NA, se = NA, rho_interval = c(NA, NA),
                     replicates = numeric(0))
if (!is.na(h1_r) && length(unique(h1$participant)) >= 4) {
  replicates <- cluster_bootstrap(h1$participant, function(i) {
    c(pearson(h1$shs[i], h1$precision[i]), pearson(rank(h1$shs[i]), rank(h1$precision[i])))
  })
  h1_clustered$interval <- percentile(replicates[, 1])
  h1_clustered$rho_interval <- percentile(replicates[, 2])
  h1_clustered$replicates <- fisher(replicates[, 1])
  h1_clustered$se <- bootstrap_se(h1_clustered$replicates)
  if (!is.na(h1_clustered$se) && abs(h1_r) < 1) {
    h1_clustered$z <- (atanh(h1_r) - atanh(h1_threshold)) / h1_clustered$se
  }
}
figure(paste0(at, "clustered.r"), h1_r)
figure(paste0(at, "clustered.ci_low"), h1_clustered$interval[1])
figure(paste0(at, "clustered.ci_high"), h1_clustered$interval[2])
figure(paste0(at, "clustered.test.z"), h1_clustered$z)
figure(paste0(at, "clustered.test.p"), if (is.na(h1_clustered$z)) NA else z_p(h1_clustered$z))
figure(paste0(at, "clustered.test.se"), h1_clustered$se)
figure(paste0(at, "clustered.spearman.rho"), ranks)
figure(paste0(at, "clustered.spearman.ci_low"), h1_clustered$rho_interval[1])
figure(paste0(at, "clustered.spearman.ci_high"), h1_clustered$rho_interval[2])
record_verdict(paste0(at, "clustered.verdict"), from_z(h1_clustered$z), TRUE,
               z_evidence(report_number(paste0(at, "clustered.test.z")), h1_clustered$z,
                          h1_clustered$replicates))
# The hypothesis' verdict is its primary analysis' (`parts`: it differs by the
# draws alone when that one does).
primary <- paste0(at, criterion_primary, ".verdict")
record_verdict(paste0(at, "verdict"), verdict_words[[primary]], criterion_primary == "clustered",
               list(parts = primary))
figure("criterion.figures.h1.points", h1_n)
figure("criterion.figures.h1.n_evaluations", h1_n)

# --- H2: Source Reliability and citation support -----------------------------
# SR correlates with citation support more strongly than every other
# dimension: unclustered by Steiger's (1980) Z1* for dependent overlapping
# correlations; clustered by the difference of the two Fisher z's over its
# bootstrap SE. Supported only when every comparison is.
h2 <- complete("support", dimensions)
h2_n <- nrow(h2)
at <- "criterion.analysis.h2."
others <- setdiff(dimensions, "SR")
figure(paste0(at, "n"), h2_n)
figure(paste0(at, "n_participants"), length(unique(h2$participant)))
figure(paste0(at, "criterion_agreement.0.icc"), icc_of("citation_support"))
h2_r <- vapply(dimensions, function(d) pearson(h2[[d]], h2$support), numeric(1))
for (d in dimensions) {
  bounds <- fisher_interval(h2_r[[d]], h2_n)
  figure(paste0(at, "unclustered.correlations.", d, ".r"), h2_r[[d]])
  figure(paste0(at, "unclustered.correlations.", d, ".ci_low"), bounds[1])
  figure(paste0(at, "unclustered.correlations.", d, ".ci_high"), bounds[2])
  figure(paste0(at, "unclustered.correlations.", d, ".p"), zero_p(h2_r[[d]], h2_n))
  figure(paste0(at, "clustered.correlations.", d, ".r"), h2_r[[d]])
}
# all_of: supported only if every comparison is, not supported as soon as one
# is, not computable as soon as one is.
all_of <- function(words) {
  if (!length(words) || "not_computable" %in% words) "not_computable" else
    if (all(words == "supported")) "supported" else
      if ("not_supported" %in% words) "not_supported" else "inconclusive"
}
steiger <- c()
for (d in others) {
  between <- if (h2_n >= 4) pearson(h2$SR, h2[[d]]) else NA
  z <- NA
  if (!anyNA(c(h2_r[["SR"]], h2_r[[d]], between)) &&
        max(abs(c(h2_r[["SR"]], h2_r[[d]], between))) < 1) {
    # Steiger (1980), equations 3, 10 and 14, with the pooled r.
    pooled <- (h2_r[["SR"]] + h2_r[[d]]) / 2
    psi <- between * (1 - 2 * pooled^2) - 0.5 * pooled^2 * (1 - 2 * pooled^2 - between^2)
    s <- psi / (1 - pooled^2)^2
    if (s < 1) z <- (atanh(h2_r[["SR"]]) - atanh(h2_r[[d]])) * sqrt(h2_n - 3) / sqrt(2 - 2 * s)
  }
  where <- paste0(at, "unclustered.comparisons.", d, ".")
  figure(paste0(where, "r_sr"), h2_r[["SR"]])
  figure(paste0(where, "r_other"), h2_r[[d]])
  figure(paste0(where, "r_between"), between)
  figure(paste0(where, "z"), z)
  figure(paste0(where, "p"), if (is.na(z)) NA else z_p(z))
  steiger[d] <- from_z(z)
  record_verdict(paste0(where, "verdict"), steiger[[d]], FALSE)
}
record_verdict(paste0(at, "unclustered.verdict"), all_of(steiger), FALSE)

differences <- setNames(rep("not_computable", length(others)), others)
difference_z <- setNames(rep(NA_real_, length(others)), others)
difference_replicates <- list()
# Missing (the report's null) unless the bootstrap below computes them.
for (d in dimensions) {
  figure(paste0(at, "clustered.correlations.", d, ".ci_low"), NA)
  figure(paste0(at, "clustered.correlations.", d, ".ci_high"), NA)
}
for (d in others) {
  for (name in c("difference", "z", "p")) figure(paste0(at, "clustered.comparisons.", d, ".", name), NA)
}
if (!all(is.na(h2_r)) && length(unique(h2$participant)) >= 4) {
  replicates <- cluster_bootstrap(h2$participant, function(i) {
    vapply(dimensions, function(d) pearson(h2[[d]][i], h2$support[i]), numeric(1))
  })
  colnames(replicates) <- dimensions
  for (d in dimensions[!is.na(h2_r)]) {
    bounds <- percentile(replicates[, d])
    figure(paste0(at, "clustered.correlations.", d, ".ci_low"), bounds[1])
    figure(paste0(at, "clustered.correlations.", d, ".ci_high"), bounds[2])
  }
  for (d in others[!is.na(h2_r[others])]) {
    if (is.na(h2_r[["SR"]])) break
    where <- paste0(at, "clustered.comparisons.", d, ".")
    bounds <- percentile(replicates[, "SR"] - replicates[, d])
    difference_replicates[[d]] <- fisher(replicates[, "SR"]) - fisher(replicates[, d])
    se <- bootstrap_se(difference_replicates[[d]])
    z <- if (is.na(se)) NA else (fisher(h2_r[["SR"]]) - fisher(h2_r[[d]])) / se
    figure(paste0(where, "difference"), h2_r[["SR"]] - h2_r[[d]])
    figure(paste0(where, "ci_low"), bounds[1])
    figure(paste0(where, "ci_high"), bounds[2])
    figure(paste0(where, "z"), z)
    figure(paste0(where, "p"), if (is.na(z)) NA else z_p(z))
    figure(paste0(where, "se"), se)
    differences[d] <- from_z(z)
    difference_z[d] <- z
  }
}
for (d in others) {
  where <- paste0(at, "clustered.comparisons.", d, ".")
  record_verdict(paste0(where, "verdict"), differences[[d]], TRUE,
                 z_evidence(report_number(paste0(where, "z")), difference_z[[d]],
                            if (is.null(difference_replicates[[d]])) numeric(0) else
                              difference_replicates[[d]]))
}
record_verdict(paste0(at, "clustered.verdict"), all_of(differences), TRUE,
               list(parts = paste0(at, "clustered.comparisons.", others, ".verdict")))
primary <- paste0(at, criterion_primary, ".verdict")
record_verdict(paste0(at, "verdict"), verdict_words[[primary]], criterion_primary == "clustered",
               list(parts = primary))
figure("criterion.figures.h2.points", sum(!is.na(h2_r)))
figure("criterion.figures.h2.n_evaluations", h2_n)
