# ---------------------------------------------------------------------------
# Acceptance by administrators: their feedback
# ---------------------------------------------------------------------------
# Recomputes "Acceptance by administrators (paper Table 5, Figures 1-5)": the
# feedback questionnaires, the administrators who gave them, how many
# questionnaires chose each answer of each question, and how many
# administrators did, each with their most recent questionnaire (with the
# shares, and the table of each administrator's answers).

# data/feedback.csv has one questionnaire per row, given by an administrator
# at the end of a session (pilot sessions are not in the package, nor in the
# report).
feedback <- read_table("feedback")
require_columns(feedback, "feedback", c("session_id", "administrator", names(feedback_options)))
feedback_sessions <- read_table("sessions")
require_columns(feedback_sessions, "sessions", "session_id")
unknown <- which(!feedback$session_id %in% feedback_sessions$session_id)
if (length(unknown)) {
  refuse(file.path("data", "feedback.csv"), unknown[1], "session_id is not in data/sessions.csv")
}

figure("feedback.sessions", nrow(feedback))
figure("feedback.administrators", length(unique(feedback$administrator)))

# Each question's answers as the codebook codes them (`feedback_options`, set
# at the top of the script, in the report's order of questions and answers).
# An unanswered question is empty and counts for no answer.
for (question_number in seq_along(feedback_options)) {
  question <- names(feedback_options)[question_number]
  answers <- feedback[[question]]
  codes <- feedback_options[[question]]
  for (option_number in seq_along(codes)) {
    where <- sprintf("feedback.questions.%d.options.%d.", question_number - 1, option_number - 1)
    figure(paste0(where, "sessions"), sum(answers == codes[option_number], na.rm = TRUE))
  }
}

# The report's shares are of administrators, each counted once with their
# most recent questionnaire: the one with their highest administrator_form
# (each administrator's questionnaires numbered 1, 2, ... by the moment they
# were submitted; data/feedback.csv dates them by the day only).
require_columns(feedback, "feedback", "administrator_form")
require_codes(feedback, "feedback", "administrator_form", 1, nrow(feedback))
require_unique(feedback, "feedback", c("administrator", "administrator_form"))
# Sorted by administrator as the report's table of answers is (A01, A02, ...;
# "radix" sorts by character code, whatever R's locale), each one's most
# recent questionnaire first, then only that one kept.
newest_first <- order(feedback$administrator, -feedback$administrator_form, method = "radix")
latest <- feedback[newest_first, ]
latest <- latest[!duplicated(latest$administrator), ]
administrators <- nrow(latest)

for (question_number in seq_along(feedback_options)) {
  question <- names(feedback_options)[question_number]
  codes <- feedback_options[[question]]
  chosen <- vapply(codes, function(code) sum(latest[[question]] == code, na.rm = TRUE), numeric(1))
  for (option_number in seq_along(codes)) {
    where <- sprintf("feedback.questions.%d.options.%d.", question_number - 1, option_number - 1)
    figure(paste0(where, "administrators"), chosen[option_number])
    figure(paste0(where, "share"), chosen[option_number] / administrators)
  }
  # The share of the answer most administrators chose (the first such answer
  # on a tie: the share is the same).
  figure(sprintf("feedback.questions.%d.most_frequent_share", question_number - 1),
         max(chosen) / administrators)
}

# Each administrator's most recent answers, in the order of the questions.
for (row in seq_len(administrators)) {
  answers <- unlist(latest[row, names(feedback_options)])
  figure(sprintf("feedback.by_administrator.%d.answers", row - 1), answers)
}
