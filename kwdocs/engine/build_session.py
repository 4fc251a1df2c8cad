"""One build's session: what the build flow lends the steps for that build alone.

It is made once per build (``incremental.run_build``; a watch's rebuild and ``kwdocs check``
use the plain one) and handed down the calls: to the doit namespace, from there to each
``extract`` and ``render`` task as an argument, as griffe hands its extensions to its visitors.
No step finds it on a module, so two builds in one process never see each other's.

A build on a Dask cluster lends the steps its look-ups of what the workers made
(``kwdocs.engine.cluster``, which is built on the steps: they see it through ``Remote`` only).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from kwdocs.config import Config


class Remote(Protocol):
    """Where a build's extraction and rendering also run (a Dask cluster), as the steps ask it."""

    def run(self, tasks: dict, config: Config, run_doit: Callable[[dict, int, Config], int]) -> int:
        """doit over ``tasks`` with the work sent out (``run_doit``: the runner's)."""
        ...

    def facts_of(self, config: Config, unit: str) -> Any:
        """The unit's facts as made out there (``cluster.RemoteFacts``), or None."""
        ...

    def pages_of(self, config: Config, unit: str) -> Any:
        """The unit's file pages as rendered out there (``cluster.RemotePages``), or None."""
        ...


@dataclass(frozen=True)
class BuildSession:
    """What one build lends its steps; the default lends nothing (a build on this machine)."""

    remote: Remote | None = None

    def remote_facts(self, config: Config, unit: str) -> Any:
        """What the cluster made of the unit's files, when this build runs on one."""
        if self.remote is None or not config.scheduler:
            return None
        return self.remote.facts_of(config, unit)

    def remote_pages(self, config: Config, unit: str) -> Any:
        """What the cluster rendered of the unit's files, when this build runs on one."""
        if self.remote is None or not config.scheduler:
            return None
        return self.remote.pages_of(config, unit)


LOCAL = BuildSession()
"""The session of a build on this machine alone (frozen: shared safely)."""
