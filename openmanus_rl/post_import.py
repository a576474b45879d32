"""Run code right after a module is imported, in whichever process imports it.

verl's registries (trainer modes, advantage estimators, rollout backends, engines) live in modules that
verl imports lazily, and only some of a run's processes import them: the trainer's, not the TransferQueue
storage's or the load balancer's. Registering when such a module is imported costs a process that never
imports it nothing (importing verl to register eagerly cost every Ray worker of a CPU run ~7 s).
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
from collections.abc import Callable


class _HookLoader(importlib.abc.Loader):
    def __init__(self, loader, callbacks: list[Callable]):
        self._loader = loader
        self._callbacks = callbacks

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        module.__loader__ = self._loader
        if getattr(module, "__spec__", None) is not None:
            module.__spec__.loader = self._loader
        self._loader.exec_module(module)
        for callback in self._callbacks:
            callback(module)

    def __getattr__(self, name):
        return getattr(self._loader, name)


class _PostImportFinder(importlib.abc.MetaPathFinder):
    def __init__(self):
        self.hooks: dict[str, list[Callable]] = {}
        self._busy: set[str] = set()

    def find_spec(self, fullname, path, target=None):
        if fullname not in self.hooks or fullname in self._busy:
            return None
        self._busy.add(fullname)
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            self._busy.discard(fullname)
        if spec is None or spec.loader is None:
            return None
        spec.loader = _HookLoader(spec.loader, self.hooks.pop(fullname))
        return spec


_finder = _PostImportFinder()


def when_imported(module_name: str, callback: Callable) -> None:
    """Run ``callback(module)`` right after ``module_name`` is imported (now, if it already is)."""
    module = sys.modules.get(module_name)
    if module is not None:
        callback(module)
        return
    _finder.hooks.setdefault(module_name, []).append(callback)
    if _finder not in sys.meta_path:
        sys.meta_path.insert(0, _finder)


