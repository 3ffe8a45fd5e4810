# ---------------------------------------------------------------------------
# Acceptance by administrators: their feedback
# ---------------------------------------------------------------------------
# Recomputes "Acceptance by administrators (paper Table 5, Figures 1-5)": the
# feedback questionnaires, the administrators who gave them, and how many
# questionnaires chose each answer of each question.

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
# most recent answer. data/feedback.csv dates each questionnaire by its day
# only, and an administrator who gave several on their last day leaves the
# most recent one open: those shares, and the table of each administrator's
# answers, are not recomputed here.
