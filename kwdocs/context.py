"""One build context per process: what is made once from a configuration and kept.

Rules, renderers, the keys pages are judged by and the HTML page template are
costly to make and depend only on the settings and the templates, so a process
keeps them, one ``BuildContext`` per ``Config``.  This module is their only
owner: ``kwdocs watch`` reads changed settings or templates again by dropping
every context (``drop_contexts``), with no list of caches to keep in step.
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:   # a key only: the module sits below config, so that rules keep their rule set here too
    from kwdocs.config import Config

T = TypeVar("T")

# The last few configurations a process used: one for a command, a handful in a test session.
_KEEP = 4
_contexts: dict[Config, BuildContext] = {}


class BuildContext:
    """What this process made from one configuration, by maker and arguments."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.made: dict[tuple[Any, ...], Any] = {}

    def get(self, key: tuple[Any, ...], make: Callable[[], T]) -> T:
        """The value kept under ``key``, made by ``make()`` the first time."""
        try:
            return self.made[key]
        except KeyError:
            value = self.made[key] = make()
            return value


def context_for(config: Config) -> BuildContext:
    """This process's context for ``config`` (made on first use; the oldest beyond a few is let go)."""
    found = _contexts.pop(config, None) or BuildContext(config)
    _contexts[config] = found
    while len(_contexts) > _KEEP:
        del _contexts[next(iter(_contexts))]
    return found


def drop_contexts() -> None:
    """Forget everything made from configurations: settings or templates changed under this process."""
    _contexts.clear()


def per_config(function: Callable[..., T]) -> Callable[..., T]:
    """Keep ``function(config, *args)`` in ``config``'s build context: made once until dropped."""
    @functools.wraps(function)
    def kept(config: Config, *args: Any) -> T:
        return context_for(config).get((function, *args), lambda: function(config, *args))
    return kept


def seed(config: Config, kept: Callable[..., T], value: T, *args: Any) -> None:
    """Give ``config``'s context the value the ``per_config`` function ``kept`` would make for
    ``args``, made another way (a Dask worker makes its rules from the files it is sent)."""
    context_for(config).made[(kept.__wrapped__, *args)] = value    # type: ignore[attr-defined]  # per_config's wraps
