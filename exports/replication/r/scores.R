# ---------------------------------------------------------------------------
# SHS scores: the sample, the dimension and overall scores, their descriptives
# ---------------------------------------------------------------------------
# Scores every evaluation by the published SHS scoring and recomputes the
# report's sample size, "Overall score" (mean, SD), "Dimension profile" (mean,
# SD, consistent pairs), the items' agreement and "Evaluations per system".
# The data frame `scores` made here is what the later sections work on.

# Submitted evaluations of abandoned sessions are in the sample: the report
# counts them too.

# The sample: evaluations, and the sessions (participants), administrators and
# languages they come from ("Participants and sessions").
figure("n", nrow(evaluations))
figure("analysis.n", nrow(evaluations))
figure("participants", length(unique(evaluations$session_id)))
figure("administrators", length(unique(evaluations$administrator)))
for (language in unique(evaluations$language)) {
  figure(paste0("languages.", language), sum(evaluations$language == language))
}

# Each dimension has a positively worded item a and a negatively worded item b
# (answers -2..+2). Its score is s = (a - b) / 4, from -1 to +1, higher meaning
# more reliable; the SHS is the mean of the five dimension scores.
dimensions <- c("FA", "SR", "LC", "DP", "RG")
positive_items <- c(FA = "q1", SR = "q3", LC = "q5", DP = "q7", RG = "q9")
negative_items <- c(FA = "q2", SR = "q4", LC = "q6", DP = "q8", RG = "q10")
a <- items[, positive_items, drop = FALSE]
b <- items[, negative_items, drop = FALSE]
colnames(a) <- colnames(b) <- dimensions

scores <- as.data.frame((a - b) / 4)
scores$shs <- rowMeans(scores[dimensions])

# For the reliability figures every item is keyed towards "more reliable": a
# negative item b enters as -b.
keyed <- items
keyed[, negative_items] <- -keyed[, negative_items]

# Mean and sample SD (n - 1) of each dimension score and of the SHS.
for (dimension in dimensions) {
  figure(paste0("analysis.dimension_profile.", dimension, ".mean"), mean(scores[[dimension]]))
  figure(paste0("analysis.dimension_profile.", dimension, ".sd"), sd(scores[[dimension]]))
}
figure("analysis.overall.mean", mean(scores$shs))
figure("analysis.overall.sd", sd(scores$shs))

# A pair is consistent when its consistency c = (a + b) / 4 is at most 0.25 in
# absolute value, i.e. |a + b| <= 1 (tested on the whole answers, so that no
# rounding decides a case on the edge).
consistent <- abs(a + b) <= 1
for (dimension in dimensions) {
  figure(paste0("analysis.consistent_share.", dimension), mean(consistent[, dimension]))
}

# Agreement: the share of raw answers +1 or +2, negative items not reversed.
for (item in item_columns) {
  figure(paste0("analysis.item_agreement.", item), mean(items[, item] >= 1))
}

# "Evaluations per system": the number of evaluations and the descriptive mean
# and SD of the SHS of each of the study's systems, in the report's order
# (`systems`, set at the top of the script). A system without evaluations has
# no mean, one with a single evaluation no SD.
for (position in seq_along(systems)) {
  rated <- scores$shs[evaluations$system == systems[position]]
  row <- paste0("systems.", position - 1, ".")
  figure(paste0(row, "evaluations"), length(rated))
  figure(paste0(row, "shs_mean"), if (length(rated) > 0) mean(rated) else NA)
  figure(paste0(row, "shs_sd"), if (length(rated) > 1) sd(rated) else NA)
}
