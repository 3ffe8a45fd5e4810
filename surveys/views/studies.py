from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.db.models import Count, Q
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from audit.changes import save_recording_changes
from audit.log import record
from audit.models import AuditEntry
from surveys.access import COORDINATOR, can_create_studies, get_study_for_user
from surveys.forms import StudyForm
from surveys.models import Study, StudyMembership
from surveys.panel import panel_links
from surveys.quotas import quota_state
from surveys.readiness import StudyNotReady, study_readiness, study_status_change
from surveys.retests import retest_counts
from surveys.session_forms import StartSessionForm
from surveys.steps import ENDED, Step

# An experimenter's own ended sessions listed on the study page, so they can
# ask for one to be marked as a pilot.
MY_ENDED_LISTED = 10


def home(request):
    if request.user.is_authenticated:
        return redirect("surveys:study_list")
    return render(request, "home.html")


@login_required
def study_list(request):
    memberships = (
        StudyMembership.objects.filter(user=request.user)
        .select_related("study")
        .annotate(
            system_count=Count(
                "study__systems", filter=Q(study__systems__active=True), distinct=True
            )
        )
        .order_by("study__title")
    )
    return render(
        request,
        "surveys/study_list.html",
        {"memberships": memberships, "can_create": can_create_studies(request.user)},
    )


@login_required
def study_create(request):
    if not can_create_studies(request.user):
        raise Http404
    form = StudyForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        with transaction.atomic():
            study = form.save()
            StudyMembership.objects.create(user=request.user, study=study, role=COORDINATOR)
            record(
                AuditEntry.Kind.STUDY_CREATED,
                actor=request.user,
                study_id=study.pk,
                target=f"study {study.pk}",
                details={"slug": study.slug},
            )
        messages.success(request, _("Study created. Add its LLM systems next."))
        return redirect("surveys:study_detail", slug=study.slug)
    return render(request, "surveys/study_form.html", {"form": form})


@login_required
def study_detail(request, slug):
    study, role = get_study_for_user(request, slug)
    systems = study.systems.all()
    sessions = study.sessions.all()
    counts = sessions.aggregate(
        complete=Count("pk", filter=Q(step=Step.COMPLETE, is_pilot=False)),
        in_progress=Count("pk", filter=~Q(step__in=ENDED)),
    )
    my_open_sessions = (
        sessions.filter(experimenter=request.user)
        .exclude(step__in=ENDED)
        .select_related("participant")
        .order_by("-created_at")[:20]
    )
    my_ended_sessions = (
        sessions.filter(experimenter=request.user, step__in=ENDED)
        .select_related("participant")
        .order_by("-ended_at")[:MY_ENDED_LISTED]
    )
    start_form = StartSessionForm(study=study)
    if (
        role != COORDINATOR
        and study.status == study.Status.ACTIVE
        and "is_pilot" in start_form.fields
    ):
        start_form.fields["is_pilot"].help_text = _(
            "The study's coordinator decides: until they approve, the session counts."
        )
    public_link = request.build_absolute_uri(
        reverse("surveys:remote_take", args=[study.public_code])
    )
    return render(
        request,
        "surveys/study_detail.html",
        {
            "study": study,
            "start_form": start_form,
            "role": role,
            "is_coordinator": role == COORDINATOR,
            "systems": systems,
            "counts": counts,
            "my_open_sessions": my_open_sessions,
            "readiness": study_readiness(study) if role == COORDINATOR else None,
            "statuses": Study.Status.choices,
            "my_ended_sessions": my_ended_sessions,
            "personal_links": _personal_link_counts(study) if role == COORDINATOR else None,
            "quota": quota_state(study) if role == COORDINATOR else None,
            "retests": retest_counts(study) if study.has_retest else None,
            "public_link": public_link,
            "panel_links": panel_links(study, public_link) if study.is_remote else [],
        },
    )


def _personal_link_counts(study) -> dict | None:
    if not study.is_remote:
        return None
    return study.personal_links.aggregate(
        made=Count("pk"), used=Count("pk", filter=Q(used_at__isnull=False))
    )


@login_required
@require_POST
def study_status(request, slug):
    """Activate, close or return a study to draft; activation only when it is ready."""
    study, _role = get_study_for_user(request, slug, coordinator=True)
    status = request.POST.get("status", "")
    if status not in Study.Status.values:
        messages.error(request, _("Unknown status; nothing was changed."))
        return redirect("surveys:study_detail", slug=study.slug)
    try:
        study = study_status_change(study=study, status=status, actor=request.user)
    except StudyNotReady as not_ready:
        missing = "; ".join(f"{check.label}: {check.missing}" for check in not_ready.missing)
        messages.error(
            request,
            _("The study cannot become active yet. Missing: %(missing)s") % {"missing": missing},
        )
        return redirect("surveys:study_detail", slug=study.slug)
    messages.success(
        request, _("The study is now %(status)s.") % {"status": study.get_status_display()}
    )
    return redirect("surveys:study_detail", slug=study.slug)


@login_required
def study_edit(request, slug):
    study, _role = get_study_for_user(request, slug, coordinator=True)
    form = StudyForm(request.POST or None, instance=study)
    if request.method == "POST" and form.is_valid():
        save_recording_changes(
            form,
            AuditEntry.Kind.STUDY_CHANGED,
            actor=request.user,
            study_id=study.pk,
            target=f"study {study.pk}",
        )
        messages.success(request, _("Study settings saved."))
        return redirect("surveys:study_detail", slug=study.slug)
    return render(request, "surveys/study_form.html", {"form": form, "study": study})
