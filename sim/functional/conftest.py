"""svcgate's overlay of python-gitlab's functional-test conftest, for running the suite against svc-sim.

run.sh renames the suite's own conftest.py to upstream_conftest.py and puts this file in its place. Everything
the suite defines is imported unchanged (fixtures and pytest hooks alike); only the fixtures below are replaced,
each because it starts or talks to a docker container, or resets an instance. Two things are added, each said
where it is: waits are cut short, and the tests skipped.txt names are deselected. svc-sim is started fresh for
each run by run.sh, which passes its address and root token in SVC_SIM_URL and SVC_SIM_TOKEN.
"""

from __future__ import annotations

import os
import time as _real_time
import types

import pytest

import gitlab
from tests.functional import upstream_conftest
from tests.functional.upstream_conftest import *  # noqa: F401,F403  (the suite's fixtures and hooks)


@pytest.fixture(scope="session")
def gitlab_url() -> str:
    """Replaced: the suite reads the address of its docker container; ours is the svc-sim run.sh started."""
    return os.environ["SVC_SIM_URL"]


@pytest.fixture(scope="session")
def gitlab_token() -> str:
    """Replaced: the suite waits for its container and creates a token inside it with `docker exec`; svc-sim is
    started with a root token already."""
    return os.environ["SVC_SIM_TOKEN"]


@pytest.fixture(scope="session")
def gl(gitlab_url: str, gitlab_token: str) -> gitlab.Gitlab:
    """Replaced: as the suite's, less the reset of a reused instance (svc-sim starts empty for every run)."""
    instance = gitlab.Gitlab(gitlab_url, private_token=gitlab_token)
    instance.auth()
    return instance


_REAL_SLEEP = _real_time.sleep


def _short_sleep(seconds: float) -> None:
    # The suite's fixtures sleep (up to 30 s per merge request) to let a real server's background jobs catch up;
    # svc-sim does everything before it answers, so those waits are cut to a moment.
    _REAL_SLEEP(min(seconds, 0.01))


@pytest.fixture(autouse=True)
def _no_long_sleeps(monkeypatch: pytest.MonkeyPatch) -> None:
    """Added: cuts the suite's waits for background work (there is none in svc-sim) so a run takes minutes, not
    tens of minutes. Polling loops still poll; they just find the answer at once."""
    monkeypatch.setattr(_real_time, "sleep", _short_sleep)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Added: leaves out the tests named in svcgate's skipped.txt (path in SVC_SIM_SKIPPED), matching whole test
    ids (a parametrized test by its name without the parameters); pytest's --deselect would match prefixes."""
    path = os.environ.get("SVC_SIM_SKIPPED")
    if not path:
        return
    with open(path, encoding="utf-8") as f:
        wanted = {
            "tests/functional/api/" + line.split()[0]
            for line in f
            if line.strip() and not line.startswith("#")
        }
    kept, left_out = [], []
    for item in items:
        (left_out if item.nodeid.split("[")[0] in wanted else kept).append(item)
    unknown = wanted - {item.nodeid.split("[")[0] for item in left_out}
    if unknown:
        raise pytest.UsageError(f"skipped.txt names tests the suite does not have: {sorted(unknown)}")
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = kept


# Keeps the module object referenced so linters see the import as used; the suite's names come from the `*` import.
_UPSTREAM: types.ModuleType = upstream_conftest
