import os

from django.core.management.base import BaseCommand, CommandError
from django.db.models import Max

from criterion.models import PreRegistration
from criterion.simulation import simulate_criterion_data
from criterion.simulation.measures import (
    AnnotationModel,
    AnnotationSimulationError,
    latent_correlation,
)
from shs_platform.celery import app
from surveys.answer_effects import (
    DEFAULT_PARTICIPANT_ICC,
    DEFAULT_SYSTEM_DIFFERENCE,
    AnswerEffects,
    AnswerEffectsError,
    factor_share,
)
from surveys.answer_model import CALIBRATED
from surveys.models import Evaluation, Study, StudySession
from surveys.simulation import SimulationError, simulate_study
from validation.simulation.study import (
    DEFAULT_RETEST_DAYS,
    RETEST_SHARE,
    LatentAnswers,
    prepare_study,
)


class Command(BaseCommand):
    help = (
        "Run N simulated participants through the real protocol over HTTP (the same URLs, "
        "forms and validation a person uses), rotating among the study's experimenters, with "
        "answers and timings shaped like the SHS paper's study. With --annotators, also "
        "simulated transcripts and objective annotations for the criterion-validity study "
        "(docs/design/criterion.md §13.5). With --latent (implied by --languages, --companions, "
        "--retest and a study with companion scales), answers from the validation "
        "programme's latent model (§14.9). The calibrated answers carry a participant effect "
        "and a system effect (docs/design/command-line.md §9.6). No session is dated before the "
        "study's pre-registration (docs/design/criterion.md §13.5)."
    )

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's id or slug")
        parser.add_argument("--participants", type=int, required=True)
        parser.add_argument("--seed", type=int, default=0)
        self._add_effect_arguments(parser)
        self._add_criterion_arguments(parser)
        self._add_latent_arguments(parser)

    def _add_effect_arguments(self, parser):
        parser.add_argument(
            "--participant-icc",
            type=float,
            default=DEFAULT_PARTICIPANT_ICC,
            help="intraclass correlation of a participant's two overall SHS scores, from a "
            "random intercept they share (default %(default)s: moderate; the paper reports none). "
            "For the calibrated answers: --latent has its own (§14.9)",
        )
        parser.add_argument(
            "--system-difference",
            type=float,
            default=DEFAULT_SYSTEM_DIFFERENCE,
            help="difference, in within-system SDs, between the mean overall SHS of the first "
            "and the last active system (in the order they were added; the others evenly "
            "between; default %(default)s: small, the paper compares no systems)",
        )

    def _add_criterion_arguments(self, parser):
        parser.add_argument(
            "--annotators",
            type=int,
            default=0,
            help="simulated annotators per transcript (default 0: no transcripts, no annotations)",
        )
        parser.add_argument(
            "--annotation-correlation",
            type=float,
            default=0.5,
            help="target Pearson r of overall SHS with the annotators' mean factual precision",
        )
        parser.add_argument(
            "--annotations-file",
            help="write the annotations as CSV in the import format "
            "(transcript_id,annotator,measure,value)",
        )
        parser.add_argument(
            "--store-annotations",
            action="store_true",
            help="store the annotations, with one import record per annotator",
        )
        parser.add_argument(
            "--automated-results",
            action="store_true",
            help="store one simulated automated factuality result per system",
        )

    def _add_latent_arguments(self, parser):
        parser.add_argument(
            "--latent",
            action="store_true",
            help="answers from the latent model of validation.simulation (known parameters)",
        )
        parser.add_argument(
            "--languages",
            type=_keys,
            default=(),
            help="comma-separated languages the participants are spread over (e.g. en,de,fr); "
            "the study must offer them (default: all it offers)",
        )
        parser.add_argument(
            "--companions",
            type=_keys,
            default=(),
            help="comma-separated companion scales after each SHS (e.g. sus,scs,trust); set on "
            "a study without sessions",
        )
        # argparse formats a help text with %: a percent sign is written twice.
        parser.add_argument(
            "--retest",
            action="store_true",
            help=f"a retest wave (the study gets one after {DEFAULT_RETEST_DAYS} days if it has "
            f"none); {round(RETEST_SHARE * 100)}%% of the participants come back",
        )

    def handle(self, *args, study, participants, seed, **options):
        if participants < 1:
            raise CommandError("--participants must be at least 1")
        _check_criterion_options(options)
        effects = _effects(options)
        lookup = {"pk": int(study)} if study.isdigit() else {"slug": study}
        found = Study.objects.filter(**lookup).first()
        if found is None:
            raise CommandError(f"no study {study!r}")
        # A simulated study follows its plan, as a real one does.
        registered = PreRegistration.objects.filter(study=found).aggregate(
            latest=Max("created_at")
        )["latest"]
        # Scoring runs in-process here so that the run ends with every evaluation scored,
        # whether or not a worker is listening.
        app.conf.task_always_eager = True
        last_before = StudySession.objects.order_by("-pk").values_list("pk", flat=True).first()
        try:
            source = _latent_source(found, participants, seed, options)
            result = simulate_study(
                study=found,
                participants=participants,
                seed=seed,
                effects=effects,
                not_before=registered,
                source=source,
            )
        except SimulationError as error:
            raise CommandError(str(error)) from error
        scored = Evaluation.objects.filter(session__study=found, scored_at__isnull=False).count()
        self.stdout.write(
            f"Created {result.sessions} sessions and {result.evaluations} evaluations "
            f"in {result.seconds:.1f} s ({scored} scored evaluations in the study)."
        )
        for name, count in sorted(result.per_system.items()):
            self.stdout.write(f"  {name}: {count}")
        for line in source.summary() if source else _effects_summary(effects):
            self.stdout.write(line)
        if result.pace < 1:
            self.stdout.write(
                f"The pre-registration (saved {registered:%Y-%m-%d %H:%M:%S %Z}) comes first: "
                f"the sessions were fitted into the time since it, from "
                f"{result.first_start:%H:%M:%S}, at {result.pace:.2g} of the paper's pace, so "
                "their durations are not the paper's."
            )
        simulated = StudySession.objects.filter(study=found, pk__gt=last_before or 0)
        self._criterion_data(simulated, seed, options)

    def _criterion_data(self, sessions, seed, options):
        if not options["annotators"] and not options["automated_results"]:
            return
        done = simulate_criterion_data(
            sessions=sessions,
            seed=seed,
            annotators=options["annotators"],
            correlation=options["annotation_correlation"],
            annotations_file=options["annotations_file"],
            store_annotations=options["store_annotations"],
            automated_results=options["automated_results"],
        )
        if options["annotators"]:
            observed = (
                f"r(SHS, mean factual precision) = {done.observed_r:.2f} in this sample"
                if done.observed_r is not None
                else f"r not computable: {done.r_not_computable}"
            )
            self.stdout.write(
                f"Simulated {done.rows} annotations of {done.transcripts_annotated} transcripts "
                f"by {options['annotators']} annotator(s) ({done.transcripts_created} "
                f"transcripts written); {observed}, target "
                f"{options['annotation_correlation']:.2f}. Simulated values: they test the "
                "analysis, not the scale."
            )
        if options["annotations_file"]:
            self.stdout.write(f"  written to {options['annotations_file']}")
        if options["store_annotations"]:
            self.stdout.write(f'  stored, {done.imports} import record(s) named "simulated"')
        if options["automated_results"]:
            self.stdout.write(f"Stored {done.automated_results} simulated automated results.")


def _effects(options) -> AnswerEffects:
    """The effects asked for, checked (and solved) before any session runs."""
    try:
        effects = AnswerEffects(
            participant_icc=options["participant_icc"],
            system_difference=options["system_difference"],
        )
        factor_share(CALIBRATED, effects.participant_icc)
    except AnswerEffectsError as error:
        raise CommandError(str(error)) from error
    return effects


def _effects_summary(effects: AnswerEffects) -> list[str]:
    return [
        f"Answers from the calibrated model with a participant ICC of "
        f"{effects.participant_icc:.2f} (overall SHS) and {effects.system_difference:+.2f} SD "
        "between the first and the last active system: simulated, they test the analysis, "
        "not the systems."
    ]


def _keys(text: str) -> tuple[str, ...]:
    return tuple(key.strip() for key in text.split(",") if key.strip())


def _latent_source(study, participants, seed, options):
    """The latent model's answers when asked for, the study given what they need;
    None for the calibrated model of surveys/answer_model.py. A study with
    companion scales needs the latent model: the calibrated one has no answers
    to them."""
    languages, companions, retest = options["languages"], options["companions"], options["retest"]
    if not (options["latent"] or languages or companions or retest or study.companion_scales):
        return None
    prepare_study(study, languages=languages, companions=companions, retest=retest)
    return LatentAnswers(
        study, participants=participants, seed=seed, languages=languages, retest=retest
    )


def _check_criterion_options(options) -> None:
    """Refuse before any session runs: a bad option would waste the whole run."""
    annotators, path = options["annotators"], options["annotations_file"]
    if not 0 <= annotators <= 10:
        raise CommandError("--annotators must be between 0 and 10")
    if not -1 < options["annotation_correlation"] < 1:
        raise CommandError("--annotation-correlation must lie strictly between -1 and 1")
    if annotators == 0 and (path or options["store_annotations"]):
        raise CommandError("--annotations-file and --store-annotations need --annotators 1 or more")
    if annotators and not (path or options["store_annotations"]):
        raise CommandError(
            "say where the annotations go: --annotations-file PATH and/or --store-annotations"
        )
    if path and not os.access(os.path.dirname(os.path.abspath(path)), os.W_OK):
        raise CommandError(f"cannot write {path}: its folder does not exist or is not writable")
    if annotators:
        try:
            latent_correlation(
                AnnotationModel(correlation=options["annotation_correlation"]), annotators
            )
        except AnnotationSimulationError as error:
            raise CommandError(str(error)) from error
