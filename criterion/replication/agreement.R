# ---------------------------------------------------------------------------
# Criterion validity: how far the annotators agree on each objective measure
# ---------------------------------------------------------------------------
# Recomputes the report's "Agreement between annotators" table (criterion
# section): ICC(2,1) with its 95% interval, F test and N per measure, and
# Krippendorff's alpha for interval data, from data/criterion_annotations.csv.

# One row per annotator's value of one measure on one transcript. Transcripts
# and annotators are numbered for this package only (annotator-1, -2, ... in
# the alphabetical order of the names the platform holds).
transcripts <- read_table("criterion_transcripts")
annotations <- read_table("criterion_annotations")
require_columns(transcripts, "criterion_transcripts", c("transcript", "evaluation_id"))
require_unique(transcripts, "criterion_transcripts", "transcript")
require_columns(annotations, "criterion_annotations",
                c("transcript", "evaluation_id", "measure", "annotator", "value"))
require_unique(annotations, "criterion_annotations", c("transcript", "measure", "annotator"))
unknown <- which(!annotations$transcript %in% transcripts$transcript)
if (length(unknown)) {
  refuse("data/criterion_annotations.csv", unknown[1],
         "its transcript is not in data/criterion_transcripts.csv")
}
stray <- which(!is.na(transcripts$evaluation_id) &
                 !transcripts$evaluation_id %in% evaluations$evaluation_id)
if (length(stray)) {
  refuse("data/criterion_transcripts.csv", stray[1],
         "its evaluation_id is not in data/evaluations.csv")
}
# A missing value is no rating (the platform stores none).
annotations <- annotations[is.finite(annotations$value), , drop = FALSE]
# Annotators in the order of their numbers, which is the order of their names
# on the platform: it decides ties between panels below.
annotator_number <- as.integer(sub("^annotator-", "", annotations$annotator))
annotator_order <- unique(annotations$annotator[order(annotator_number)])
# Each measure's ICC(2,1), which the verdicts of the next section report beside
# the measure they rest on.
agreement_icc <- c()

for (measure in sort(unique(annotations$measure))) {
  rated <- annotations[annotations$measure == measure, , drop = FALSE]
  # Transcripts x annotators, NA where an annotator gave no value.
  raters <- annotator_order[annotator_order %in% rated$annotator]
  wide <- tapply(rated$value, list(rated$transcript, factor(rated$annotator, raters)),
                 function(v) v[1])
  at <- paste0("criterion.agreement.", measure, ".")

  # ICC(2,1) needs a complete table: the platform takes the "largest complete
  # block", the set of two or more annotators and the transcripts all of them
  # rated that holds the most ratings (ties: more transcripts, then the first
  # set in the annotators' order). Every set is tried, as the platform does
  # for up to 12 annotators.
  done <- colSums(!is.na(wide))
  candidates <- colnames(wide)[order(-done, match(colnames(wide), annotator_order))]
  candidates <- candidates[seq_len(min(12, length(candidates)))]
  candidates <- annotator_order[annotator_order %in% candidates]
  best <- list(ratings = 0, transcripts = 0, panel = character(0))
  if (length(candidates) >= 2) {
    for (size in 2:length(candidates)) {
      for (panel in combn(candidates, size, simplify = FALSE)) {
        shared <- sum(rowSums(is.na(wide[, panel, drop = FALSE])) == 0)
        if (shared * size > best$ratings ||
              (shared * size == best$ratings && shared > best$transcripts)) {
          best <- list(ratings = shared * size, transcripts = shared, panel = panel)
        }
      }
    }
  }
  block <- wide[rowSums(is.na(wide[, best$panel, drop = FALSE])) == 0, best$panel, drop = FALSE]
  n_targets <- if (length(best$panel)) nrow(block) else 0
  n_raters <- length(best$panel)
  icc <- list(value = NA, ci_low = NA, ci_high = NA, F = NA, df1 = NA, df2 = NA, p = NA)

  if (n_targets >= 2) {
    # psych::ICC's ICC2 is Shrout and Fleiss' ICC(2,1) (two-way random, absolute
    # agreement, single rater) with McGraw and Wong's (1996) interval, as the report's.
    # The two-way ANOVA's mean squares for the cases the platform treats apart.
    k <- n_raters
    n <- n_targets
    grand <- mean(block)
    msr <- k * sum((rowMeans(block) - grand)^2) / (n - 1)
    msc <- n * sum((colMeans(block) - grand)^2) / (k - 1)
    residual <- block - outer(rowMeans(block), rep(1, k)) - outer(rep(1, n), colMeans(block)) + grand
    sse <- sum(residual^2)
    if (sse <= 1e-24 * (msr * (n - 1) + msc * (k - 1))) sse <- 0
    mse <- sse / ((n - 1) * (k - 1))
    denominator <- msr + (k - 1) * mse + k * (msc - mse) / n
    if (denominator > 0 && mse > 0) {
      fit <- psych::ICC(block, lmer = FALSE, alpha = 0.05)$results["Single_random_raters", ]
      icc$value <- fit$ICC
      icc$F <- fit$F
      icc$df1 <- fit$df1
      icc$df2 <- fit$df2
      # psych computes p as 1 - pf(), which is 0 below about 1e-16: the upper
      # tail is taken directly, as the report does.
      icc$p <- pf(fit$F, fit$df1, fit$df2, lower.tail = FALSE)
      # No interval below 5 transcripts; a bound below -1/(k - 1), the least
      # ICC(2,1) can be, is cut there; an interval wholly below it is withheld.
      floor <- -1 / (k - 1)
      if (n >= 5 && fit$ICC < 1) {
        low <- fit$`lower bound`
        high <- fit$`upper bound`
        if (is.finite(high) && high <= floor) {
          low <- NA
          high <- NA
        } else if (is.finite(low) && low < floor) {
          low <- floor
        }
        icc$ci_low <- low
        icc$ci_high <- high
      }
    } else if (denominator > 0) {
      # Exact agreement up to the annotators' offsets: the value, infinite F.
      icc$value <- (msr - mse) / denominator
      icc$df1 <- n - 1
      icc$df2 <- (n - 1) * (k - 1)
    }
  }
  for (name in names(icc)) figure(paste0(at, "icc_2_1.", name), icc[[name]])
  figure(paste0(at, "icc_2_1.n_targets"), n_targets)
  figure(paste0(at, "icc_2_1.n_raters"), n_raters)

  # Krippendorff's alpha for interval data over every rating, by its formula
  # (Krippendorff 2011): alpha = 1 - D_o / D_e over the pairable values (those
  # of transcripts with at least two ratings, n of them in all):
  #   D_o = (1 / n) * sum over transcripts u of sum_{i != j in u} (v_i - v_j)^2 / (m_u - 1)
  #   D_e = 1 / (n (n - 1)) * sum_{i != j over all pairable values} (v_i - v_j)^2
  counts <- rowSums(!is.na(wide))
  pairable <- wide[counts >= 2, , drop = FALSE]
  krippendorff <- NA
  values <- pairable[!is.na(pairable)]
  if (nrow(pairable) >= 2 && length(unique(values)) > 1) {
    n_values <- length(values)
    observed <- 0
    for (u in seq_len(nrow(pairable))) {
      v <- pairable[u, !is.na(pairable[u, ])]
      observed <- observed + sum(outer(v, v, "-")^2) / (length(v) - 1)
    }
    expected <- sum(outer(values, values, "-")^2) / (n_values * (n_values - 1))
    krippendorff <- 1 - (observed / n_values) / expected
  }
  figure(paste0(at, "krippendorff_alpha_interval.value"), krippendorff)
  figure(paste0(at, "krippendorff_alpha_interval.n_transcripts"), nrow(wide))
  figure(paste0(at, "krippendorff_alpha_interval.n_pairable_transcripts"), nrow(pairable))
  figure(paste0(at, "krippendorff_alpha_interval.n_annotators"), ncol(wide))
  figure(paste0(at, "krippendorff_alpha_interval.n_ratings"), nrow(rated))
  agreement_icc[measure] <- icc$value
}
