"""What a study says about itself: summary.json (each point's statistics with its
price-performance, the targets that failed, the micro figures, the host) rewritten after every
run it keeps, and the console's tables when it ends."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console

from dbscale.errors import ResultsError
from dbscale.observe import StudyObserver
from dbscale.plan.study import Study
from dbscale.results.cost import add_price_performance
from dbscale.results.cost_tables import print_price_performance
from dbscale.results.directory import ResultsDir
from dbscale.results.expectations import flag_contradictions
from dbscale.results.failover_cost import by_point, failover_sentences
from dbscale.results.micro_records import MicroFigureSummary, MicroRecord, micro_summary, read_micro
from dbscale.results.points import FigureCache, PointSummary, SummarySettings, summarize_points
from dbscale.results.record import RunRecord
from dbscale.run.console import print_points, print_summary
from dbscale.run.limits import print_limits
from dbscale.run.micro_step import print_micro_summary
from dbscale.targets.facts import load_target_records


class StudySummary:
    """The study's summary.json and closing tables, from the results directory's records."""

    def __init__(
        self, study: Study, results: ResultsDir, observer: StudyObserver, out: Console
    ) -> None:
        self.study, self.results, self.observer, self.out = study, results, observer, out
        self.settings = SummarySettings(
            confidence=study.plan.statistics.confidence,
            cv_threshold_pct=study.plan.statistics.cv_threshold_pct,
        )
        self.cache = FigureCache()
        self.failed_targets: dict[str, str] = {}  # target name -> why its points were skipped
        self.micro: list[MicroRecord] = read_micro(results.path)  # micro steps recorded so far

    def points(self) -> list[PointSummary]:
        points = flag_contradictions(
            summarize_points(self.results.records, self.settings, self.cache)
        )
        return add_price_performance(points, load_target_records(self.results.path))

    def micro_rows(self) -> list[MicroFigureSummary]:
        return micro_summary(self.micro, self.study.plan.statistics.confidence)

    def write(self) -> None:
        self.results.write_summary(
            extra={
                "study": {"name": self.study.plan.name, "source": self.study.source},
                "targets_failed": self.failed_targets,
                **(
                    {"micro": [r.model_dump(mode="json") for r in self.micro_rows()]}
                    if self.micro
                    else {}
                ),
                "host": self.observer.summary_host().model_dump(mode="json", exclude_none=True),
            },
            points=self.points(),
        )

    def close(self, ran: Sequence[RunRecord], *, failing: bool, tables: bool = True) -> None:
        """The summary and the console's tables once the study ends (`ran`: this process's
        runs; `tables`: the per-point, limits and price tables too). When the study ends on an
        error already, a summary that cannot be written is a warning, not a second error in
        place of the first."""
        if self.results.records:
            try:
                self.write()
            except ResultsError as exc:
                if not failing:
                    raise
                self.out.print(f"warning: {exc.message}", highlight=False, soft_wrap=True)
            print_summary(self.out, ran, self.results.path)
            for line in failover_sentences(by_point(ran)):  # a failover's cost, when it had one
                self.out.print(f"fault step {line}", highlight=False, soft_wrap=True)
            if tables:
                print_limits(self.out, ran)
                points = self.points()
                print_points(self.out, points)
                print_price_performance(self.out, points)
        if tables:
            print_micro_summary(self.out, self.micro_rows())
