"""The plugin manager: pmkit's built-ins plus entry points in group ``pmkit``, each loaded alone.

Rules (from pytest, llm and datasette, and llm's issue #1280 where one broken plugin broke every
command): each entry point is imported and registered on its own; one that fails to import or to
register is recorded as failed, reported, and skipped — never fatal.  ``PMKIT_DISABLE_PLUGIN_AUTOLOAD=1``
turns entry points off.  Built-ins are registered ``trylast``, so a third-party plugin that
registers an object under a built-in's name overrides it; two third-party plugins registering the
same name is an error naming both, and the one whose entry point name sorts later is skipped.
"""

from __future__ import annotations

import importlib
import os
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

import pluggy

from pmkit import hookspecs
from pmkit.distribution import version
from pmkit.errors import UsageError

ENTRY_POINT_GROUP = "pmkit"
DISABLE_ENV = "PMKIT_DISABLE_PLUGIN_AUTOLOAD"

BUILTIN_PLUGINS: tuple[str, ...] = (
    "pmkit.readers.extrap_text",
    "pmkit.readers.extrap_json",
    "pmkit.readers.talpas",
    "pmkit.readers.perf_stat",
    "pmkit.readers.cube",
    "pmkit.priors.taint",
    "pmkit.readers.extrap_experiment",
    "pmkit.modelers.refining",
    "pmkit.modelers.multiparam",
    "pmkit.modelers.apmt",
    "pmkit.modelers.perprocess",
    "pmkit.detectors.imbalance",
)
"""Modules of the built-in plugins; each has ``@hookimpl(trylast=True)`` register functions."""


class PluginWarning(UserWarning):
    """A plugin failed to load or register; pmkit goes on without it."""


@dataclass(frozen=True)
class Registration:
    """One registered reader, modeler, prior or detector and the plugin that provided it."""

    kind: str
    name: str
    obj: Any
    plugin: str
    version: str
    builtin: bool
    status: str = "ok"
    error: str = ""

    @property
    def description(self) -> str:
        return str(getattr(self.obj, "description", ""))

    @property
    def options(self) -> list[Any]:
        """The declared options (:class:`pmkit.options.Option`) of the registered object."""
        return list(getattr(self.obj, "options", ()) or ())

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "plugin": self.plugin, "version": self.version,
                "builtin": self.builtin, "status": self.status, "error": self.error or None,
                "description": self.description,
                "options": [{"name": o.name, "type": o.type.__name__, "default": o.default, "help": o.help,
                             "choices": list(o.choices) if o.choices else None} for o in self.options]}


@dataclass(frozen=True)
class PluginFailure:
    """A plugin that could not be imported or whose registration raised."""

    plugin: str
    version: str
    stage: str
    error: str
    builtin: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"name": None, "kind": None, "plugin": self.plugin, "version": self.version,
                "builtin": self.builtin, "status": f"failed ({self.stage})", "error": self.error,
                "description": "", "options": []}


@dataclass
class Registry:
    """Everything registered, by kind and name, plus the plugins that failed."""

    registrations: dict[str, dict[str, Registration]] = field(
        default_factory=lambda: {kind: {} for kind in hookspecs.KINDS})
    rejected: list[Registration] = field(default_factory=list)
    failures: list[PluginFailure] = field(default_factory=list)
    manager: pluggy.PluginManager | None = None

    def names(self, kind: str) -> list[str]:
        return sorted(self.registrations[kind])

    def get(self, kind: str, name: str) -> Any:
        """The registered object; UsageError listing the available names if there is none."""
        found = self.registrations[kind].get(name)
        if found is None:
            available = ", ".join(self.names(kind)) or "none"
            raise UsageError(f"no {kind} named {name!r}; available: {available}")
        return found.obj

    def all(self, kind: str) -> list[Any]:
        return [r.obj for r in self.registrations[kind].values()]

    def rows(self) -> list[Registration | PluginFailure]:
        """Every registration (including rejected and overridden ones) and failure, for listing."""
        rows: list[Registration | PluginFailure] = []
        for kind in hookspecs.KINDS:
            rows.extend(sorted(self.registrations[kind].values(), key=lambda r: r.name))
        rows.extend(self.rejected)
        rows.extend(self.failures)
        return rows


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def _entry_points() -> list[metadata.EntryPoint]:
    return sorted(metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: ep.name)


def build_registry(plugins: Iterable[Any] = (), *, builtins: bool = True,
                   entry_points: bool | None = None) -> Registry:
    """Build a fresh registry.

    ``plugins`` are extra plugin objects (modules or instances with hookimpls) registered as if
    they came from entry points; useful in tests.  ``entry_points=None`` loads installed entry
    points unless ``PMKIT_DISABLE_PLUGIN_AUTOLOAD`` is set.
    """
    pm = pluggy.PluginManager("pmkit")
    pm.add_hookspecs(hookspecs)
    registry = Registry(manager=pm)
    origins: dict[str, tuple[str, bool]] = {}

    if builtins:
        for module_name in BUILTIN_PLUGINS:
            try:
                module = importlib.import_module(module_name)
                pm.register(module, name=module_name)
                origins[module_name] = ("pmkit", True)
            except Exception as exc:  # a broken built-in must not break the tool either
                registry.failures.append(PluginFailure(module_name, _pmkit_version(), "import", _describe(exc),
                                                       builtin=True))

    if entry_points is None:
        entry_points = os.environ.get(DISABLE_ENV, "").strip().lower() not in {"1", "true", "yes"}
    if entry_points:
        for ep in _entry_points():
            dist = getattr(ep, "dist", None)
            label = dist.name if dist is not None else ep.name
            version = dist.version if dist is not None else ""
            try:
                obj = ep.load()
                pm.register(obj, name=f"{label}:{ep.name}")
                origins[f"{label}:{ep.name}"] = (label, False)
            except Exception as exc:
                registry.failures.append(PluginFailure(label, version, "import", _describe(exc)))

    for i, obj in enumerate(plugins):
        label = getattr(obj, "__name__", None) or type(obj).__name__
        name = f"{label}#{i}"
        try:
            pm.register(obj, name=name)
            origins[name] = (label, False)
        except Exception as exc:
            registry.failures.append(PluginFailure(label, "", "import", _describe(exc)))

    for kind, (hook_name, _) in hookspecs.KINDS.items():
        _collect(registry, pm, kind, hook_name, origins)

    for failure in registry.failures:
        warnings.warn(f"plugin {failure.plugin} failed to {failure.stage} and was skipped: {failure.error}",
                      PluginWarning, stacklevel=2)
    return registry


def _collect(registry: Registry, pm: pluggy.PluginManager, kind: str, hook_name: str,
             origins: dict[str, tuple[str, bool]]) -> None:
    # Third parties in the order they were loaded, then the built-ins: the first to claim a name wins.
    hook = getattr(pm.hook, hook_name)
    order = {name: i for i, name in enumerate(origins)}
    impls = sorted(hook.get_hookimpls(), key=lambda impl: (bool(impl.trylast), order.get(impl.plugin_name, -1)))
    for impl in impls:
        plugin, builtin = origins.get(impl.plugin_name, (impl.plugin_name, False))
        version = _pmkit_version() if builtin else _dist_version(plugin)
        collected: list[Any] = []
        try:
            impl.function(register=collected.append)
        except Exception as exc:
            registry.failures.append(PluginFailure(plugin, version, f"register {kind}s", _describe(exc)))
            continue
        for obj in collected:
            _add(registry, kind, obj, plugin, version, builtin)


def _add(registry: Registry, kind: str, obj: Any, plugin: str, version: str, builtin: bool) -> None:
    name = getattr(obj, "name", None)
    protocol = hookspecs.KINDS[kind][1]
    if not isinstance(name, str) or not name:
        registry.failures.append(PluginFailure(plugin, version, f"register {kind}s",
                                               f"registered a {kind} without a name: {obj!r}"))
        return
    if not isinstance(obj, protocol):
        missing = [m for m in ("description", "options", *_methods(kind)) if not hasattr(obj, m)]
        registry.rejected.append(Registration(kind, name, obj, plugin, version, builtin, "rejected",
                                              f"not a {kind}: lacks {', '.join(missing)}"))
        return
    existing = registry.registrations[kind].get(name)
    if existing is None:
        registry.registrations[kind][name] = Registration(kind, name, obj, plugin, version, builtin)
        return
    if builtin and not existing.builtin:
        registry.rejected.append(Registration(kind, name, obj, plugin, version, builtin, "overridden",
                                              f"overridden by {existing.plugin}"))
        return
    registry.rejected.append(Registration(kind, name, obj, plugin, version, builtin, "duplicate",
                                          f"{kind} name {name!r} is registered by both "
                                          f"{existing.plugin} and {plugin}; keeping {existing.plugin}"))


def _methods(kind: str) -> tuple[str, ...]:
    return {"reader": ("sniff", "read"), "modeler": ("model",), "prior": ("load",),
            "detector": ("detect",)}[kind]


def _pmkit_version() -> str:
    return version()


def _dist_version(name: str) -> str:
    try:
        return metadata.version(name)
    except (metadata.PackageNotFoundError, ValueError):
        return ""


_REGISTRY: Registry | None = None


def get_registry() -> Registry:
    """The process-wide registry, built on first use."""
    global _REGISTRY
    if _REGISTRY is None:
        _REGISTRY = build_registry()
    return _REGISTRY


def reset_registry(registry: Registry | None = None) -> None:
    """Drop the cached registry (or install ``registry``); the next use rebuilds it."""
    global _REGISTRY
    _REGISTRY = registry
