"""A plan's targets made ready to run: taken from a shared targets file if the plan names one,
sizes expanded into one target each, hook variables checked, passwords taken from the
environment or a file (the plan text need not hold them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from dbscale.errors import PlanError
from dbscale.plan.document import PlanDocument, item_name, load_plan_text
from dbscale.targets.sizes import T, expand_sizes
from dbscale.targets.url import is_private_url, resolve_target
from dbscale.targets.variables import check_hooks


def with_password(target: T, env: Mapping[str, str]) -> T:
    """The target with its password from `password_env` or `password_file` in its URL (the plan
    text never needs to hold it); a missing variable or unreadable file is a `PlanError`."""
    name = getattr(target, "name", "?")
    password: str | None = None
    if target.password_env:
        password = env.get(target.password_env)
        if not password:
            raise PlanError(
                f"target {name}: the environment variable {target.password_env} "
                "(password_env) is not set",
                f"export {target.password_env}=... before running dbscale",
            )
    elif target.password_file:
        path = Path(target.password_file).expanduser()
        try:
            password = path.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise PlanError(
                f"target {name}: cannot read password_file {path}: {exc.strerror or exc}",
                "give a readable file holding only the password",
            ) from None
    if password is None:
        return target
    url = str(getattr(target, "url", ""))
    if is_private_url(url):
        return target
    spec = resolve_target(url, {"PGPASSWORD": password})
    return target.model_copy(update={"url": spec.url or url})


def prepare_targets(targets: Sequence[T], env: Mapping[str, str]) -> list[T]:
    """Sizes expanded, passwords resolved, hook variables checked: what a study runs on."""
    expanded = expand_sizes(targets)
    for target in expanded:
        check_hooks(target)
    return [with_password(t, env) for t in expanded]


TARGETS_FILE_KEY = "targets_file"


def include_targets_file(doc: PlanDocument) -> None:
    """A plan's `targets_file: targets.yaml` (relative to the plan): its targets, all of them
    or those the plan's `targets` names (a name, or a mapping that overrides some fields),
    replace the plan's list; errors about them name the targets file's lines."""
    raw = doc.data.pop(TARGETS_FILE_KEY, None)
    if raw is None:
        return
    if not isinstance(raw, str) or not raw.strip():
        raise doc.error((TARGETS_FILE_KEY,), "must be the path of a YAML file of targets")
    base = Path(doc.source).parent if Path(doc.source).is_file() else Path.cwd()
    path = (base / Path(raw).expanduser()).resolve()
    if not path.is_file():
        raise doc.error(
            (TARGETS_FILE_KEY,), f"no such file: {path}", "give a path relative to the plan"
        )
    library = load_plan_text(path.read_text(encoding="utf-8"), str(path))
    available = library.get(("targets",))
    if not isinstance(available, list):
        raise PlanError(f"{path}: expected `targets:` and a list of targets", _TARGETS_FILE_HINT)
    by_name = {item_name(t): j for j, t in enumerate(available) if isinstance(t, dict)}
    wanted = doc.get(("targets",))
    targets: list[Any] = []
    for i, item in enumerate(list(by_name) if wanted is None else list(wanted)):
        name = item_name(item) if isinstance(item, dict) else item
        j = by_name.get(name)
        if j is None and isinstance(item, str):
            known = ", ".join(map(str, by_name))
            raise doc.error(("targets", i), f"no target {name!r} in {path}", f"known: {known}")
        if j is None:
            targets.append(item)  # a target of the plan's own
            continue
        overrides = item if isinstance(item, dict) else {}
        targets.append({**available[j], **overrides})
        for key, origin in library.origins.items():  # its errors name the targets file's lines
            if key[:2] == ("targets", j) and (len(key) == 2 or key[2] not in overrides):
                doc.origins[("targets", i, *key[2:])] = origin
    doc.data["targets"] = targets


_TARGETS_FILE_HINT = "a targets file holds `targets:` and a list like a plan's (docs/targets.md)"
