# ---------------------------------------------------------------------------
# Convergent and discriminant validity: the SHS beside the companion scales
# ---------------------------------------------------------------------------
# Correlates the SHS and each dimension score with every companion scale the
# study gave (SUS, SCS, trust), corrects each r for the unreliability of both
# measures, and recomputes the intervals of the report's "Convergent and
# discriminant validity" tables (report.json: validation.convergent).

# Pearson's r with its Fisher-z interval and the p of the t test of rho = 0:
# what cor.test gives. Disattenuated r = r / sqrt(rel_x rel_y) (Spearman
# 1904), its interval the Fisher bounds divided by the same factor and clipped
# to [-1, 1] (Hunter & Schmidt 2004). Reliabilities: Cronbach's alpha of the
# ten keyed SHS items (`keyed`), for a two-item dimension the Spearman-Brown
# 2r / (1 + r) of its positive item and its reversed negative item, and the
# companion scale's alpha with its reversed items turned around.
score_names <- c("shs", dimensions)
clip <- function(values) pmin(pmax(values, -1), 1)

for (scale in companion_scales) {
  require_columns(evaluations, "evaluations", companion_items[[scale]])
  codes <- companion_codes[[scale]]
  # An item left unanswered is empty; an answer must be one of the scale's codes
  # (checked in the file as exported, so that the row named is the file's).
  answers <- as.matrix(read_table("evaluations")[companion_items[[scale]]])
  wrong <- which(!is.na(answers) & !(answers %in% seq(codes[1], codes[2])), arr.ind = TRUE)
  if (length(wrong)) {
    refuse(file.path("data", "evaluations.csv"), wrong[1, "row"],
           sprintf("%s is \"%s\"; it must be empty or a whole number from %d to %d",
                   colnames(answers)[wrong[1, "col"]], answers[wrong[1, , drop = FALSE]],
                   codes[1], codes[2]))
  }

  # Only the evaluations with every item of the scale answered have its score.
  answered <- complete.cases(evaluations[companion_items[[scale]]])
  scale_keyed <- as.matrix(evaluations[answered, companion_items[[scale]]])
  reversed <- colnames(scale_keyed) %in% companion_reversed[[scale]]
  scale_keyed[, reversed] <- codes[1] + codes[2] - scale_keyed[, reversed]
  # The scale's score. Its published score (SUS: 2.5 (sum - 10); SCS: the sum
  # of the answers / 50; trust: the mean) is this sum shifted and stretched,
  # which leaves every correlation as it is.
  companion_score <- rowSums(scale_keyed)
  shs_keyed <- keyed[answered, ]
  paired_scores <- as.matrix(scores[answered, score_names])
  n <- sum(answered)
  # Below four evaluations with the scale's score r has no Fisher interval:
  # the report gives no figures for the scale then.
  if (n < 4) {
    for (score in score_names) {
      id <- paste0("validation.convergent.pairs.", score, ".", scale)
      figure(paste0(id, ".n"), n)
      figure(paste0(id, ".excluded"), sum(!answered))
      figure(paste0(id, ".r"), NA)
      figure(paste0(id, ".p"), NA)
    }
    next
  }

  # Reliabilities on the same evaluations as r.
  item_r <- cor(shs_keyed)
  pair_r <- item_r[cbind(positive_items, negative_items)]
  reliability_score <- c(shs = cronbach_alpha(shs_keyed),
                         setNames(2 * pair_r / (1 + pair_r), dimensions))
  reliability_companion <- cronbach_alpha(scale_keyed)

  for (score in score_names) {
    id <- paste0("validation.convergent.pairs.", score, ".", scale)
    tested <- cor.test(paired_scores[, score], companion_score, conf.level = convergent_confidence)
    r <- unname(tested$estimate)
    correction <- sqrt(reliability_score[[score]] * reliability_companion)
    figure(paste0(id, ".n"), n)
    figure(paste0(id, ".excluded"), sum(!answered))
    figure(paste0(id, ".r"), r)
    figure(paste0(id, ".ci"), tested$conf.int)
    figure(paste0(id, ".p"), tested$p.value)
    figure(paste0(id, ".reliability_score.value"), reliability_score[[score]])
    figure(paste0(id, ".reliability_score.n"), n)
    figure(paste0(id, ".reliability_companion.value"), reliability_companion)
    figure(paste0(id, ".reliability_companion.n"), n)
    if (isTRUE(reliability_score[[score]] > 0 && reliability_companion > 0)) {
      figure(paste0(id, ".disattenuated.r"), r / correction)
      figure(paste0(id, ".disattenuated.factor"), correction)
      figure(paste0(id, ".disattenuated.ci"), clip(tested$conf.int / correction))
    }
  }

  # The participant-cluster bootstrap over the evaluations with the scale's
  # score: in every resample r, both reliabilities and the disattenuated r
  # (with that resample's own reliabilities, so that its interval carries
  # their sampling error). A resample with a reliability not above 0 leaves
  # the correction without bound: it counts as +/-Inf (r's sign), at its end of
  # the order, instead of dropping out.
  rows_by_participant <- split(seq_len(n), evaluations$participant_id[answered])
  set.seed(convergent_seed)
  replicate_r <- replicate_reliability <- replicate_corrected <-
    matrix(NA_real_, convergent_resamples, length(score_names), dimnames = list(NULL, score_names))
  replicate_companion <- rep(NA_real_, convergent_resamples)
  for (resample in seq_len(convergent_resamples)) {
    drawn <- sample(names(rows_by_participant), replace = TRUE)
    rows <- unlist(rows_by_participant[drawn], use.names = FALSE)
    resampled_r <- suppressWarnings(cor(paired_scores[rows, ], companion_score[rows]))[, 1]
    resampled_item_r <- suppressWarnings(cor(shs_keyed[rows, ]))
    resampled_pairs <- resampled_item_r[cbind(positive_items, negative_items)]
    reliability <- c(cronbach_alpha(shs_keyed[rows, ]), 2 * resampled_pairs / (1 + resampled_pairs))
    companion_alpha <- cronbach_alpha(scale_keyed[rows, ])
    corrected <- ifelse(reliability > 0 & companion_alpha > 0,
                        resampled_r / sqrt(reliability * companion_alpha),
                        sign(resampled_r) * Inf)
    replicate_r[resample, ] <- resampled_r
    replicate_reliability[resample, ] <- reliability
    replicate_companion[resample] <- companion_alpha
    replicate_corrected[resample, ] <- corrected
  }
  for (score in score_names) {
    id <- paste0("validation.convergent.pairs.", score, ".", scale)
    figure(paste0(id, ".ci95_clustered.interval"),
           percentile_interval(replicate_r[, score], convergent_confidence))
    figure(paste0(id, ".reliability_score.ci95_clustered.interval"),
           percentile_interval(replicate_reliability[, score], convergent_confidence))
    figure(paste0(id, ".reliability_companion.ci95_clustered.interval"),
           percentile_interval(replicate_companion, convergent_confidence))
    # The unbounded resamples stay in (only a missing value drops out), and
    # the bounds are clipped to [-1, 1], as far as a correlation goes.
    corrected <- replicate_corrected[, score]
    corrected <- corrected[!is.na(corrected)]
    tail_share <- (1 - convergent_confidence) / 2
    if (length(corrected) >= convergent_resamples / 2) {
      figure(paste0(id, ".disattenuated.ci95_clustered.interval"),
             clip(quantile(corrected, c(tail_share, 1 - tail_share), names = FALSE, type = 7)))
    }
  }
}
