# ---------------------------------------------------------------------------
# Sessions: complete, abandoned, in progress
# ---------------------------------------------------------------------------
# Recomputes the sessions completed, abandoned and in progress of the report's
# first table. Withdrawals, screen-outs, pilot sessions left out and SHS forms
# never submitted are counted by the platform only: they have no data here.

# data/sessions.csv has one row per session with data, its status as it stood
# at the export (pilot sessions are not in the package, nor in the report).
study_sessions <- read_table("sessions")
require_columns(study_sessions, "sessions", c("session_id", "status"))
stray <- which(!study_sessions$status %in% c("complete", "abandoned", "in_progress"))
if (length(stray)) {
  refuse(file.path("data", "sessions.csv"), stray[1],
         sprintf("status is \"%s\"; it must be complete, abandoned or in_progress",
                 study_sessions$status[stray[1]]))
}
for (status in c("complete", "abandoned", "in_progress")) {
  figure(paste0("exclusions.", status), sum(study_sessions$status == status))
}
