"""Celery tasks of `surveys`: thin wrappers that load rows by id and call services."""

from shs_platform.celery import app


@app.task(name="surveys.tasks.score_pending_evaluations")
def score_pending_evaluations() -> int:
    """Sweep for submitted evaluations that were never scored (e.g. Redis was down)."""
    from surveys.scores import evaluations_score_pending

    return evaluations_score_pending()


@app.task(name="surveys.tasks.mark_abandoned_sessions")
def mark_abandoned_sessions() -> int:
    from surveys.protocol.sweeps import sessions_mark_abandoned

    return sessions_mark_abandoned()


@app.task(name="surveys.tasks.purge_panel_ids")
def purge_panel_ids() -> int:
    from surveys.panel import panel_ids_purge

    return panel_ids_purge()


# No result is stored: the outcome lands in the invitation row.
@app.task(name="surveys.tasks.send_invitation", ignore_result=True)
def send_invitation(invitation_id: int, link: str, language: str) -> bool:
    from django.utils import translation

    from surveys.invitation_mail import invitation_send

    # The mail is in the language the coordinator was using.
    with translation.override(language):
        return invitation_send(invitation_id=invitation_id, link=link)
