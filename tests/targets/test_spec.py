"""Target metadata in plans: sizes expanded into one target each, `{field}` variables, passwords
from the environment or a file, and the checks that stop a bad plan before anything runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from dbscale.errors import PlanError
from dbscale.plan.build import RunOptions
from dbscale.plan.study import RunStep
from dbscale.plan.targets import prepare_targets
from dbscale.targets.sizes import expand_sizes, shared_groups
from dbscale.targets.spec import TargetEntry, describe_target, target_info
from dbscale.targets.variables import fill, target_variables, variable_env
from tests.plan.helpers import plan_file, study

SWEEP = """
name: sweep
targets:
  - name: sql
    url: postgresql://bench@10.0.0.5/bench
    password_env: SQL_PASSWORD
    provider: gcp
    region: us-east4
    instance_type: db-custom-{vcpus}-{memory_mb}
    vcpus: [1, 2, 4]
    memory_gib_per_vcpu: 3.75
    storage_type: pd-ssd
    storage_gb: 100
    ha: true
    prices: {date: 2024-05-01, source: example, vcpu_per_hour: 0.0413, gib_per_hour: 0.007}
    hooks:
      setup: terraform apply -auto-approve -var tier=db-custom-{vcpus}-{memory_mb} ${EXTRA}
      ready: {run: "gcloud sql operations wait --quiet", timeout: 20m}
      teardown: "true"
  - name: other
    url: postgresql://bench@10.0.0.6/bench
workload: {name: tpcb, params: {scale: 1}}
load: {duration: 1s}
matrix: {clients: [2, 4]}
repeat: 2
warmup_runs: 0
"""


def entry(**fields: object) -> TargetEntry:
    return TargetEntry.model_validate({"name": "t", "url": "local", **fields})


def test_sizes_become_targets_of_one_group() -> None:
    targets = expand_sizes([entry(vcpus=[1, 2], memory_gib=[4, 8], instance_type="x-{vcpus}")])
    assert [t.name for t in targets] == ["t-1vcpu", "t-2vcpu"]
    assert [(t.vcpu_count, t.memory, t.instance_type) for t in targets] == [
        (1, 4.0, "x-1"),
        (2, 8.0, "x-2"),
    ]
    assert {t.group for t in targets} == {"t"}
    assert {t.local.dir for t in targets if t.local} == {"t"}  # one server, one data directory
    assert shared_groups(targets) == {"t"}
    assert (
        describe_target(targets[1]) == "local PostgreSQL (started by dbscale), x-2, 2 vCPUs, 8 GiB"
    )


def test_variables_and_their_environment() -> None:
    [target] = expand_sizes([entry(vcpus=2, memory_gib_per_vcpu=3.75, zone="us-east4-a")])
    variables = target_variables(target)
    assert variables["vcpus"] == "2"
    assert variables["memory_gib"] == "7.5"
    assert variables["memory_mb"] == "7680"  # Cloud SQL's db-custom-2-7680
    assert variables["ha"] == "false"
    assert variable_env(variables)["DBSCALE_TARGET_ZONE"] == "us-east4-a"
    text = fill("tier=db-custom-{vcpus}-{memory_mb} home=${HOME} awk '{{x}}'", variables, "hook")
    assert text == "tier=db-custom-2-7680 home=${HOME} awk '{x}'"
    with pytest.raises(PlanError, match=r"uses \{region\}, which this target does not set"):
        fill("--region {region}", variables, "hook setup")
    assert target_info(target).memory_gib == 7.5


def test_a_sweep_plan_resolves_into_sized_targets_stepped_one_at_a_time(tmp_path: Path) -> None:
    built = study(
        RunOptions(workload=str(plan_file(tmp_path, SWEEP))), env={"SQL_PASSWORD": "s3cret"}
    )
    names = [t.name for t in built.targets]
    assert names == ["sql-1vcpu", "sql-2vcpu", "sql-4vcpu", "other"]
    sized = built.targets[1]
    assert sized.url == "postgresql://bench:s3cret@10.0.0.5/bench"
    assert sized.instance_type == "db-custom-2-7680"
    # Each size runs all its points in a block: entered once, not once per run.
    order = [s.point.target.name for s in built.steps if isinstance(s, RunStep)]
    first_seen = list(dict.fromkeys(order))
    blocks = [order[i] for i in range(len(order)) if i == 0 or order[i] != order[i - 1]]
    assert blocks[:3] == ["sql-1vcpu", "sql-2vcpu", "sql-4vcpu"]
    assert set(first_seen) == set(names)
    assert order.count("sql-2vcpu") == 4  # 2 client levels x repeat 2


def test_password_from_a_file_and_missing_ones(tmp_path: Path) -> None:
    secret = tmp_path / "pw"
    secret.write_text("from-file\n")
    [target] = prepare_targets(
        [TargetEntry(name="db", url="postgresql://u@h/db", password_file=str(secret))], {}
    )
    assert target.url == "postgresql://u:from-file@h/db"
    with pytest.raises(PlanError, match=r"SQL_PASSWORD .* is not set"):
        study(RunOptions(workload=str(plan_file(tmp_path, SWEEP))), env={})
    with pytest.raises(PlanError, match="cannot read password_file"):
        prepare_targets(
            [TargetEntry(name="db", url="postgresql://u@h/db", password_file="/no")], {}
        )


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"vcpus": [1, 2], "memory_gib": [1]}, "differ in length"),
        ({"memory_gib": 1, "memory_gib_per_vcpu": 2, "vcpus": 1}, "not both"),
        ({"url": "postgresql://h/db", "local": {"dir": "x"}}, "`local` settings apply"),
        ({"password_env": "A", "password_file": "b"}, "not both"),
        ({"prices": {"date": "2024-01-01", "source": "s"}}, "give compute_per_hour"),
        ({"prices": {"source": "s", "compute_per_hour": 1}}, "date"),
        ({"hooks": {"setup": {"run": "x", "timeout": "soon"}}}, "duration"),
    ],
)
def test_bad_target_fields_are_refused(fields: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        entry(**fields)


def test_a_hook_using_an_unset_field_stops_the_plan(tmp_path: Path) -> None:
    text = SWEEP.replace("${EXTRA}", "--zone={zone}")
    with pytest.raises(PlanError, match=r"hook setup uses \{zone\}"):
        study(RunOptions(workload=str(plan_file(tmp_path, text))), env={"SQL_PASSWORD": "x"})


def test_plans_take_targets_from_a_shared_file(tmp_path: Path) -> None:
    library = tmp_path / "targets.yaml"
    library.write_text(
        "targets:\n"
        "  - {name: a, url: 'postgresql://u@a/db', vcpus: 8, instance_type: n2-standard-8}\n"
        "  - {name: b, url: local, vcpus: [1, 2]}\n"
        "  - {name: bad, url: local, vcpus: zero}\n"
    )
    plan = "targets_file: targets.yaml\ntargets: [b, {name: a, url: 'postgresql://u@a2/db'}]\n"
    plan += "workload: tpcb\nrepeat: 1\nwarmup_runs: 0\n"
    built = study(RunOptions(workload=str(plan_file(tmp_path, plan))))
    assert [t.name for t in built.targets] == ["b-1vcpu", "b-2vcpu", "a"]
    assert built.targets[2].url == "postgresql://u@a2/db"  # the plan overrides the file
    assert built.targets[2].instance_type == "n2-standard-8"
    bad = plan.replace("targets: [b, ", "targets: [bad, ")
    with pytest.raises(PlanError, match=r"targets\.yaml:4:\d+: targets\[0\]\.vcpus"):
        study(RunOptions(workload=str(plan_file(tmp_path, bad))))
