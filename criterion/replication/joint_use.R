# ---------------------------------------------------------------------------
# Automated factuality and perceived reliability side by side (joint use)
# ---------------------------------------------------------------------------
# Recomputes the joint-use table of the criterion section (paper 9.2): per
# system its evaluations and participants, the SHS mean, SD and t interval,
# the five dimension means, and each automated result on its 0..1 scale, from
# data/evaluations.csv and data/criterion_systems.csv.

# The study's systems in the table's order, each with the most recent result
# of every benchmark (a system without one has a row with empty result cells).
systems_table <- read_table("criterion_systems")
require_columns(systems_table, "criterion_systems",
                c("position", "system", "benchmark", "score", "scale_min", "scale_max",
                  "higher_is_better"))
# An evaluation's system is known by its name (evaluations.csv's system column),
# which the platform keeps unique within a study: a name at two positions, or
# two names at one, is a file edited into another study's shape.
one_each <- function(values, by) ave(seq_along(by), by, FUN = function(i) length(unique(values[i])))
clash <- which(one_each(systems_table$position, systems_table$system) > 1 |
                 one_each(systems_table$system, systems_table$position) > 1)
if (length(clash)) {
  refuse("data/criterion_systems.csv", clash[1],
         "a system's name is at two positions, or a position holds two names")
}

for (position in sort(unique(systems_table$position))) {
  results <- systems_table[systems_table$position == position, , drop = FALSE]
  at <- paste0("criterion.joint_use.systems.", position, ".")
  # The system's evaluations (the report's sample: non-pilot, submitted), and
  # the sessions (participants) they come from.
  rated <- evaluations$system == results$system[1]
  shs <- scores$shs[rated]
  n <- length(shs)
  figure(paste0(at, "evaluations"), n)
  figure(paste0(at, "participants"), length(unique(evaluations$session_id[rated])))
  figure(paste0(at, "shs_mean"), if (n) mean(shs) else NA)
  figure(paste0(at, "shs_sd"), if (n > 1) sd(shs) else NA)
  # The 95% t interval of the mean, each evaluation counted as independent.
  figure(paste0(at, "shs_ci95"),
         if (n > 1) mean(shs) + c(-1, 1) * qt(0.5 + joint_use_confidence / 2, n - 1) * sd(shs) / sqrt(n)
         else c(NA, NA))
  for (dimension in dimensions) {
    figure(paste0(at, "dimension_means.", dimension),
           if (n) mean(scores[[dimension]][rated]) else NA)
  }
  # Each result on 0..1 with 1 the best end of its scale (in the file's order,
  # which is the table's: by benchmark name).
  results <- results[!is.na(results$benchmark), , drop = FALSE]
  for (i in seq_len(nrow(results))) {
    share <- (results$score[i] - results$scale_min[i]) / (results$scale_max[i] - results$scale_min[i])
    normalised <- if (results$higher_is_better[i] == 1) share else 1 - share
    figure(paste0(at, "automated.", i - 1, ".normalised"), normalised)
  }
}
