"""`dbscale capacity`: the levels of a capacity search run as ordinary recorded runs of one study.

A closed-loop probe at the point's clients measures the saturated throughput; for each objective
a search (search.py) then asks for levels, each run for the settle time plus a measure time and
judged on its seconds after the settle (judge.py). An undecided level is measured again, twice
as long each time up to the longest measure, then counted as a marginal fail, or, when it only
lacked transactions, ends the search undecided with the measure that would decide it. A level
(or the probe) that did not pass while other processes took a material share of the host's CPU
is measured again (`BUSY_REMEASURES` such runs in a search at most, so a host that is always
busy costs a bounded time), so a busy minute does not walk the search down; still busy, its
verdict stands and the answer says the host may have been the limit.
Every run is a
line of runs.jsonl keyed by its level, measure and repetition, so a second objective's search
reuses the runs of the first, and `--resume` replays what was recorded instead of running it
again. capacity.json is rewritten after every level.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Protocol

from rich.console import Console

from dbscale.capacity import knobs
from dbscale.capacity.book import CapacityBook, host_busy, monthly, objective_result
from dbscale.capacity.judge import LevelFacts, LevelVerdict, State, judge
from dbscale.capacity.levels import judged_latency, level_facts
from dbscale.capacity.search import CapacityAnswer, CapacitySearch, Phase
from dbscale.errors import RunError
from dbscale.plan.objectives import CapacitySettings, Knob, Objective
from dbscale.plan.schema import LoadSettings
from dbscale.plan.study import Point, RunStep
from dbscale.results import ch_figures
from dbscale.results.capacity_file import (
    CapacityFile,
    LevelResult,
)
from dbscale.results.record import RunRecord

Note = Callable[[str], None]
BUSY_REMEASURES = 6  # runs a search may repeat because the host was busy


class LevelRunner(Protocol):
    """What a search needs of the study it runs in (run/executor.py's RunExecutor): a level
    run and recorded, and the runs recorded so far (a resumed search replays them)."""

    @property
    def records(self) -> Sequence[RunRecord]: ...

    def run_level(self, step: RunStep) -> RunRecord:
        """Runs the step and records it (each second's histogram kept); TargetError when its
        target cannot be entered."""
        ...


class CapacityDriver:
    """The search of one point; `point`: its name in capacity.json ("" when it is the only
    one)."""

    def __init__(
        self,
        levels: LevelRunner,
        base: Point,
        settings: CapacitySettings,
        out: Console,
        book: CapacityBook,
        point: str = "",
    ) -> None:
        self.levels_runner, self.base, self.settings, self.out = levels, base, settings, out
        self.book, self.point = book, point
        # A resumed search replays its whole runs; a level cut by Ctrl-C (or by a lost worker)
        # measured nothing it could be judged on, so it is measured again.
        self.recorded = {
            r.run_key: r
            for r in levels.records
            if r.run_key and not r.cancelled and not r.worker_lost
        }
        self.levels: list[LevelResult] = []
        self.saturated: float | None = None
        self.answers: list[tuple[Objective, CapacityAnswer]] = []
        self.measure_needed: dict[int, float] = {}  # objective index -> seconds that decide
        self.busy_left = BUSY_REMEASURES

    # -- the search ----------------------------------------------------------------------------

    def run(self) -> CapacityFile:
        s = self.settings
        if s.knob is Knob.RATE:
            self.saturated = self._probe()
        for index, objective in enumerate(s.objectives):
            search = self._search()
            asked: dict[float, int] = {}  # how often this search asked for each level
            while (level := search.next_level()) is not None:
                level = self._rounded(level)
                nth = asked.get(level, 0)
                asked[level] = nth + 1
                verdict, last = self._judged(level, nth, index, search.phase)
                if verdict.state is State.SHORT:
                    search.stop_short(level)
                    self.measure_needed[index] = self._measure_to_decide(verdict, last)
                else:
                    search.observe(level, verdict.passed, last.achieved)
                self._progress(objective, search, level, verdict, last)
            self.answers.append((objective, search.answer()))
            self._write(finished=False)
        return self._write(finished=True)

    def _search(self) -> CapacitySearch:
        return knobs.search_for(self.settings.knob, self.base, self.settings,
                                self.saturated or 1.0)  # fmt: skip

    def _judged_types(self, record: RunRecord) -> frozenset[str] | None:
        """The transaction types a level is judged on (None: all; CH's streams: the
        terminals')."""
        if not knobs.judges_terminals(self.settings.knob):
            return None
        return ch_figures.terminal_types(record)

    def _facts(self, record: RunRecord, offered: float | None) -> LevelFacts:
        return level_facts(record, self.settings.objectives, offered=offered,
                           settle_s=self.settings.settle_s,
                           types=self._judged_types(record))  # fmt: skip

    def _rounded(self, level: float) -> float:
        if self.settings.knob is not Knob.RATE:
            return float(round(level))
        return float(f"{level:.4g}")

    def _judged(
        self, level: float, nth: int, index: int, phase: Phase
    ) -> tuple[LevelVerdict, LevelResult]:
        """Objective `index`'s verdict on repetition `nth` of `level` (measured longer while
        undecided, up to the longest measure), and the level's last run as capacity.json has
        it."""
        s = self.settings
        measure = self._first_measure(level)
        again = 0  # measured again because the host was busy
        while True:
            final = measure >= s.measure_max_s
            record = self._run_level(level, measure, nth, phase, again)
            facts = self._facts(record, self._offered(level))
            whole = judge(facts, s.objectives, s.max_errors, final=final)
            verdict = judge(
                replace(facts, seconds=[replace(x, over=(x.over[index],)) for x in facts.seconds]),
                [s.objectives[index]], s.max_errors, final=final,
            )  # fmt: skip
            busy = host_busy(record)
            self._keep_level(record, level, measure, whole, phase, busy, facts)
            failed = verdict.state in (State.FAIL, State.MARGINAL)
            if busy is not None and failed and self._again(f"level {level:,.4g}", busy):
                again += 1
                continue
            if verdict.state is not State.INCONCLUSIVE:
                kept = next(x for x in self.levels if x.run_key == record.run_key)
                return verdict, kept
            measure = min(measure * 2, s.measure_max_s)

    def _again(self, what: str, busy: str) -> bool:
        """Whether a run measured on a busy host is measured again (while the search's budget
        for that lasts); says so either way."""
        if self.busy_left <= 0:
            self.out.print(f"capacity: {what} ran on a busy host and is not measured again "
                           f"(the search measured {BUSY_REMEASURES} runs again already): {busy}",
                           highlight=False, markup=False, soft_wrap=True)  # fmt: skip
            return False
        self.busy_left -= 1
        self.out.print(f"capacity: {what} measured again: {busy}", highlight=False,
                       markup=False, soft_wrap=True)  # fmt: skip
        return True

    def _measure_to_decide(self, verdict: LevelVerdict, last: LevelResult) -> float:
        """Seconds of measure that would gather the transactions a short level lacked, at the
        rate it achieved (a fifth more for the seconds' spread)."""
        needed = max((c.transactions_to_decide or 0) for c in verdict.checks)
        rate = max(last.achieved, 1e-9)
        return float(math.ceil(needed / rate * 1.2))

    def _first_measure(self, level: float) -> float:
        """Long enough for the transactions the strictest objective wants at this rate (about
        50 over its limit's worth), within the measure's bounds."""
        s = self.settings
        if s.knob is not Knob.RATE:
            return s.measure_min_s
        wanted = max(o.samples_needed for o in s.objectives) / max(level, 1e-9) * 1.2
        return min(max(s.measure_min_s, float(math.ceil(wanted))), s.measure_max_s)

    def _offered(self, level: float) -> float | None:
        return level if self.settings.knob is Knob.RATE else None

    # -- the runs ------------------------------------------------------------------------------

    @property
    def _prefix(self) -> str:
        """Run keys of a study's point begin with the point's (one search alone: none)."""
        return f"{self.point}/" if self.point else ""

    def _probe(self) -> float:
        """The closed-loop throughput at the point's clients: where the rate search starts."""
        s = self.settings
        load = self.base.load.model_copy(update={"duration_s": s.settle_s + s.measure_min_s})
        record = self._probe_run(load, 0)
        again = 0
        while (busy := host_busy(record)) is not None and self._again("the probe", busy):
            again += 1
            record = self._probe_run(load, again)
        facts = level_facts(record, s.objectives, offered=None, settle_s=s.settle_s)
        saturated = facts.achieved or record.tps
        if saturated <= 0:
            raise RunError(
                f"the saturation probe completed no transactions: {record.verdict.message}",
                "check the workload runs at all (dbscale run with the same flags)",
            )
        clients = self.base.load.clients
        self.out.print(f"capacity: saturated throughput {saturated:,.1f} transactions/s at "
                       f"{clients} clients (closed loop)", highlight=False)  # fmt: skip
        return saturated

    def _probe_run(self, load: LoadSettings, again: int) -> RunRecord:
        key = f"{self._prefix}probe" + (f"~again{again}" if again else "")
        point = replace(self.base, key=key, load=load)
        return self._run(point, key, f"{self._prefix}saturation probe (closed loop)")

    def _run_level(
        self, level: float, measure: float, nth: int, phase: Phase, again: int = 0
    ) -> RunRecord:
        s = self.settings
        change = knobs.level_change(s.knob, self.base, level)
        update = {"duration_s": s.settle_s + measure, **change.load}
        params = {**self.base.params, **change.params}
        name = f"{self._prefix}{s.knob.value}={level:g}"
        point = replace(self.base, key=name, values={**self.base.values, s.knob.value: level},
                        params=params, load=self.base.load.model_copy(update=update))  # fmt: skip
        key = f"{name}/measure={measure:g}s#{nth}" + (f"~again{again}" if again else "")
        title = f"{name}, {measure:g} s measured ({phase.value}" + (
            f", again as the host was busy: {again}" if again else "") + ")"  # fmt: skip
        return self._run(point, key, title)

    def _run(self, point: Point, key: str, label: str) -> RunRecord:
        found = self.recorded.get(key)
        if found is not None:
            return found  # resumed: the recorded run stands for the level
        step = RunStep("measured", key, point, repetition=0, title=label)
        record = self.levels_runner.run_level(step)
        self.recorded[key] = record
        return record

    # -- what it says --------------------------------------------------------------------------

    def _keep_level(
        self,
        record: RunRecord,
        level: float,
        measure: float,
        verdict: LevelVerdict,
        phase: Phase,
        busy: str | None,
        facts: LevelFacts,
    ) -> None:
        if any(x.run_key == record.run_key for x in self.levels):
            return
        types = self._judged_types(record)
        if types is not None:  # judged on some types: their own rate and percentiles
            judged = judged_latency(record, self.settings.settle_s, types)
            p50, p95, p99, p999 = judged.values if judged.count else (None,) * 4
            achieved = facts.achieved
        else:
            latency = record.latency_ms
            p50, p95, p99, p999 = ((latency.p50, latency.p95, latency.p99, latency.p999)
                                   if latency else (None,) * 4)  # fmt: skip
            achieved = record.tps
        self.levels.append(LevelResult(
            run_key=record.run_key or "", level=level, offered=self._offered(level),
            achieved=achieved, measure_s=measure, state=verdict.state.value,
            reasons=list(verdict.reasons), shares_over=[c.share for c in verdict.checks],
            shares_low=[c.low for c in verdict.checks],
            shares_high=[c.high for c in verdict.checks],
            phase=phase.value, p50_ms=p50, p95_ms=p95, p99_ms=p99, p999_ms=p999,
            tpmc=record.tpmc, generator_bound=verdict.generator_bound, host_busy=busy,
        ))  # fmt: skip
        self._write(finished=False)

    def _progress(
        self,
        objective: Objective,
        search: CapacitySearch,
        level: float,
        verdict: LevelVerdict,
        last: LevelResult,
    ) -> None:
        """A line per level: what was offered and achieved, p99, the verdict and why, the
        bracket so far, and how much is left."""
        answer = search.answer()
        bracket = f"[{_num(answer.highest_pass)}, {_num(answer.lowest_fail)}]"
        why = f" ({'; '.join(verdict.reasons)})" if verdict.reasons else ""
        unit = knobs.UNIT_SUFFIX[self.settings.knob]
        left = self._levels_left(search)
        eta = left * (self.settings.settle_s + last.measure_s)
        self.out.print(
            f"capacity {objective.text} [{search.observations[-1].phase.value}]: level "
            f"{level:,.4g}{unit}, achieved {last.achieved:,.1f}/s, p99 {_num(last.p99_ms)} ms "
            f"-> {verdict.state.value}{why}; bracket {bracket}; ~{left} levels to go "
            f"(~{eta:.0f} s)",
            highlight=False, markup=False, soft_wrap=True,
        )  # fmt: skip

    def _levels_left(self, search: CapacitySearch) -> int:
        if search.phase is Phase.DONE:
            return 0
        answer = search.answer()
        lo, hi = answer.highest_pass, answer.lowest_fail
        confirm = self.settings.confirm
        if lo is None or hi is None:
            return 3 + confirm
        steps = math.log(max(hi / lo, 1.0)) / math.log(1 + self.settings.resolution)
        bisect = math.ceil(math.log2(max(steps, 1.0))) if search.phase is not Phase.CONFIRM else 0
        return bisect + confirm

    def _write(self, *, finished: bool) -> CapacityFile:
        s = self.settings
        results = [
            objective_result(o, a, self.levels, self.measure_needed.get(i))
            for i, (o, a) in enumerate(self.answers)
        ]
        capacities = [r.capacity for r in results]
        known = [c for c in capacities if c is not None]
        whole = min(known) if known and len(known) == len(results) else None
        geo = (math.exp(sum(math.log(c) for c in known) / len(known))
               if known and len(known) == len(results) else None)  # fmt: skip
        target = self.base.target
        vcpus = target.vcpu_count
        cost = monthly(target)
        answer = whole if finished else None
        found = CapacityFile(
            point=self.point, workload=self.base.workload, target=target.name, vcpus=vcpus,
            per_vcpu=answer / vcpus if answer is not None and vcpus else None,
            currency=target.prices.currency if target.prices is not None else None,
            monthly_cost=cost,
            cost_per_unit=cost / answer if cost is not None and answer else None,
            knob=s.knob.value,
            unit=s.unit, objectives=results, max_errors=s.max_errors, resolution=s.resolution,
            settle_s=s.settle_s, measure_s=(s.measure_min_s, s.measure_max_s), confirm=s.confirm,
            saturated=self.saturated, capacity=whole if finished else None,
            geometric_mean=geo if finished else None, finished=finished,
            generator_limited=any(x.generator_bound and x.state != "pass" for x in self.levels),
            levels=self.levels,
        )  # fmt: skip
        self.book.save(found)
        return found


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:,.4g}"
