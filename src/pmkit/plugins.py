"""The plugin manager: pmkit's built-ins plus entry points in group ``pmkit``, each loaded alone.

Rules (from pytest, llm and datasette, and llm's issue #1280 where one broken plugin broke every
command): each entry point is imported and registered on its own; one that fails to import (even
by calling ``sys.exit()``) or to register is recorded as failed, reported, and skipped — never
fatal, and only the bad objects are skipped, never the plugin's valid ones.
``PMKIT_DISABLE_PLUGIN_AUTOLOAD=1`` turns entry points off.  Built-ins are registered ``trylast``,
so a third-party plugin that registers an object under a built-in's name overrides it; two
third-party plugins registering the same name is an error naming both, and the one whose entry
point name sorts later is skipped.  Every such problem is in :attr:`Registry.warnings`, which the
CLI prints on every command.

At call time :func:`call` turns anything a plugin object raises (besides pmkit's own errors) into
a :class:`~pmkit.errors.PluginError` naming the object and its package, and :func:`sniff` asks
readers in the stated precedence — :data:`READER_PRECEDENCE` first, then third-party readers — with
third-party sniffs bounded in time.
"""

from __future__ import annotations

import importlib
import os
import select
import sys
import threading
import time
import traceback
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from importlib import metadata
from pathlib import Path
from typing import Any

import pluggy

from pmkit import hookspecs
from pmkit.distribution import version
from pmkit.errors import PluginError, PmkitError, UsageError

ENTRY_POINT_GROUP = "pmkit"
DISABLE_ENV = "PMKIT_DISABLE_PLUGIN_AUTOLOAD"

BUILTIN_PLUGINS: tuple[str, ...] = (
    "pmkit.readers.extrap_text",
    "pmkit.readers.extrap_json",
    "pmkit.readers.talpas",
    "pmkit.readers.perf_stat",
    "pmkit.readers.cube",
    "pmkit.readers.otf2_trace",
    "pmkit.priors.taint",
    "pmkit.readers.extrap_experiment",
    "pmkit.modelers.refining",
    "pmkit.modelers.multiparam",
    "pmkit.modelers.segmented",
    "pmkit.modelers.apmt",
    "pmkit.modelers.perprocess",
    "pmkit.detectors.imbalance",
    "pmkit.detectors.kluge",
)
"""Modules of the built-in plugins; each has ``@hookimpl(trylast=True)`` register functions."""

READER_PRECEDENCE: tuple[str, ...] = (
    "extrap-experiment",
    "perf-stat",
    "cube",
    "otf2",
    "extrap-json",
    "extrap-jsonl",
    "talpas",
    "extrap-text",
)
"""The order in which the built-in readers sniff an input; the first that recognises it reads it.

Containers first, recognised by their structure (a zip holding ``experiment.json``; perf stat
output — a file whose first counter line parses as one of perf's layouts, or a folder or manifest
of such runs — before the Cube reader, whose folder check takes any folder with a manifest; a
``.cubex`` file or a folder of Cube runs; an OTF2 anchor ``*.otf2``, a run folder holding one or a
folder of such runs), then text formats from the strictest check to the loosest (a JSON
object naming Extra-P's keys, JSON Lines records, Talpas records, and last Extra-P text, whose
check is only its first keyword).  A built-in reader missing here sniffs after these (a test
fails until it is placed); third-party readers always sniff after every built-in, by package and
reader name, so an installed plugin cannot take over a format pmkit reads.
"""

SNIFF_TIMEOUT = 2.0
"""Seconds a third-party reader's ``sniff`` may take before pmkit stops waiting (``PMKIT_SNIFF_TIMEOUT``).

A sniff reads a header and answers in milliseconds; one that takes longer is named in a warning
and not asked again in this process, so a slow plugin delays a run once, by this much, at most.
"""

SNIFF_TIMEOUT_ENV = "PMKIT_SNIFF_TIMEOUT"
DEBUG_ENV = "PMKIT_DEBUG"

PLUGIN_FAULTS: tuple[type[BaseException], ...] = (Exception, SystemExit)
"""What pmkit survives from a plugin's code: any exception, and ``sys.exit()`` (``SystemExit``) too.
``KeyboardInterrupt`` belongs to the user and is never caught."""


class PluginWarning(UserWarning):
    """A plugin failed to load or register, or one of its objects failed when called; pmkit goes on without it."""


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
        """The object's one-line description."""
        return str(getattr(self.obj, "description", ""))

    @property
    def package(self) -> str:
        """The package that provided it, with its version: ``pmkit-amdahl 0.1.0``, ``pmkit 0.2.0 (built-in)``."""
        return _package(self.plugin, self.version, self.builtin)

    @property
    def label(self) -> str:
        """How messages name it: ``detector 'imbalance' of plugin pmkit 0.2.0 (built-in)``."""
        return f"{self.kind} {self.name!r} of plugin {self.package}"

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
    message: str = ""
    entry_point: str = ""
    """``name = module`` of the entry point that failed: a package may declare several."""

    @property
    def name(self) -> str:
        """The failed entry point's name (``broken`` of ``broken = pmkit_broken``), else the package's."""
        return self.entry_point.partition("=")[0].strip() or self.plugin

    def to_json(self) -> dict[str, Any]:
        return {"name": None, "kind": None, "plugin": self.plugin, "version": self.version,
                "builtin": self.builtin, "status": f"failed ({self.stage})", "error": self.error,
                "entry_point": self.entry_point or None, "description": "", "options": []}


@dataclass
class Registry:
    """Everything registered, by kind and name, plus the plugins that failed."""

    registrations: dict[str, dict[str, Registration]] = field(
        default_factory=lambda: {kind: {} for kind in hookspecs.KINDS})
    rejected: list[Registration] = field(default_factory=list)
    failures: list[PluginFailure] = field(default_factory=list)
    manager: pluggy.PluginManager | None = None
    warnings: list[str] = field(default_factory=list)
    """One line per problem found while building: failed plugins, rejected objects, duplicate and
    overridden names.  The CLI prints them on every command."""
    modules: dict[str, str] = field(default_factory=dict)
    """Top-level module of each third-party plugin → its package, to name the plugin behind a traceback."""
    unresponsive: set[str] = field(default_factory=set)
    """Third-party readers whose sniff ran out of time; not asked again in this process."""

    def names(self, kind: str) -> list[str]:
        """The registered names of ``kind`` (reader, modeler, prior, detector), sorted."""
        return sorted(self.registrations[kind])

    def entry(self, kind: str, name: str) -> Registration:
        """The registration of ``name``; UsageError listing the available names if there is none, and saying
        why where a plugin registered one that was rejected (``not a modeler: lacks model``)."""
        found = self.registrations[kind].get(name)
        if found is None:
            available = ", ".join(self.names(kind)) or "none"
            why = next((f"; the {kind} {name!r} of {r.package} was rejected: {r.error}" for r in self.rejected
                        if r.status == "rejected" and r.kind == kind and r.name == name), "")
            raise UsageError(f"no {kind} named {name!r}{why}; available: {available}")
        return found

    def get(self, kind: str, name: str) -> Any:
        """The registered object; UsageError listing the available names if there is none."""
        return self.entry(kind, name).obj

    def sniff_order(self) -> list[Registration]:
        """Readers in the order they sniff: :data:`READER_PRECEDENCE`, other built-ins, then third parties."""
        rank = {name: i for i, name in enumerate(READER_PRECEDENCE)}
        return sorted(self.registrations["reader"].values(),
                      key=lambda r: (not r.builtin, rank.get(r.name, len(rank)) if r.builtin else 0, r.plugin, r.name))

    def all(self, kind: str) -> list[Any]:
        """Every registered object of ``kind``."""
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
    if isinstance(exc, SystemExit):
        return f"SystemExit: the plugin called sys.exit({'' if exc.code is None else repr(exc.code)})"
    return f"{type(exc).__name__}: {exc}"


def _package(plugin: str, version: str, builtin: bool) -> str:
    label = f"{plugin} {version}".strip()
    return f"{label} (built-in)" if builtin else label


def _failure(registry: Registry, plugin: str, version: str, stage: str, error: str, message: str,
             builtin: bool = False, entry_point: str = "") -> None:
    registry.failures.append(PluginFailure(plugin, version, stage, error, builtin, message, entry_point))
    registry.warnings.append(message)


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
            except PLUGIN_FAULTS as exc:  # a broken built-in must not break the tool either
                _failure(registry, module_name, _pmkit_version(), "import", _describe(exc),
                         f"built-in plugin {module_name} failed to import and was skipped: {_describe(exc)}",
                         builtin=True)

    if entry_points is None:
        entry_points = os.environ.get(DISABLE_ENV, "").strip().lower() not in {"1", "true", "yes"}
    if entry_points:
        for ep in _entry_points():
            dist = getattr(ep, "dist", None)
            label = dist.name if dist is not None else ep.name
            version = dist.version if dist is not None else ""
            stage = "import"
            try:
                obj = ep.load()
                stage = "register"
                pm.register(obj, name=f"{label}:{ep.name}")
                origins[f"{label}:{ep.name}"] = (label, False)
                _remember_module(registry, obj, _package(label, version, False))
            except PLUGIN_FAULTS as exc:
                package = _package(label, version, False)
                where = f"{ep.name} = {ep.value}"
                _failure(registry, label, version, stage, _describe(exc),
                         f"plugin {package} failed to {stage} and was skipped: {_describe(exc)} (entry point {where})",
                         entry_point=where)

    for i, obj in enumerate(plugins):
        label = getattr(obj, "__name__", None) or type(obj).__name__
        name = f"{label}#{i}"
        try:
            pm.register(obj, name=name)
            origins[name] = (label, False)
            _remember_module(registry, obj, label)
        except PLUGIN_FAULTS as exc:
            _failure(registry, label, "", "import", _describe(exc),
                     f"plugin {label} failed to register and was skipped: {_describe(exc)}")

    for kind, (hook_name, _) in hookspecs.KINDS.items():
        _collect(registry, pm, kind, hook_name, origins)

    for message in registry.warnings:
        warnings.warn(message, PluginWarning, stacklevel=2)
    return registry


def _remember_module(registry: Registry, obj: Any, package: str) -> None:
    module = obj.__name__ if isinstance(obj, type(os)) else type(obj).__module__
    top = module.partition(".")[0]
    if top and top != "pmkit":
        registry.modules.setdefault(top, package)


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
        except PLUGIN_FAULTS as exc:
            kept = [str(getattr(obj, "name", "?")) for obj in collected]
            outcome = (f"kept the {kind}s it registered before: {', '.join(kept)}" if kept
                       else f"it registers no {kind}; its other objects are unaffected")
            _failure(registry, plugin, version, f"register {kind}s", _describe(exc),
                     f"plugin {_package(plugin, version, builtin)}: its {hook_name} hook raised {_describe(exc)}; "
                     f"{outcome}", builtin=builtin)
        for obj in collected:
            try:
                _add(registry, kind, obj, plugin, version, builtin)
            except PLUGIN_FAULTS as exc:  # an object whose attributes raise when pmkit looks at them
                _failure(registry, plugin, version, f"register {kind}s", _describe(exc),
                         f"plugin {_package(plugin, version, builtin)}: a {kind} it registered was skipped: looking "
                         f"at it raised {_describe(exc)}; its other objects are used", builtin=builtin)


def _add(registry: Registry, kind: str, obj: Any, plugin: str, version: str, builtin: bool) -> None:
    name = getattr(obj, "name", None)
    protocol = hookspecs.KINDS[kind][1]
    package = _package(plugin, version, builtin)
    if not isinstance(name, str) or not name:
        error = f"registered a {kind} without a name: {obj!r}"
        _failure(registry, plugin, version, f"register {kind}s", error,
                 f"plugin {package}: a {kind} without a name ({obj!r}) was skipped; its other objects are used",
                 builtin=builtin)
        return
    new = Registration(kind, name, obj, plugin, version, builtin)
    if not isinstance(obj, protocol):
        missing = [m for m in ("description", "options", *_methods(kind)) if not hasattr(obj, m)]
        error = f"not a {kind}: lacks {', '.join(missing)}"
        registry.rejected.append(Registration(kind, name, obj, plugin, version, builtin, "rejected", error))
        registry.warnings.append(f"plugin {package}: {kind} {name!r} was skipped ({error}); its other objects "
                                 "are used")
        return
    existing = registry.registrations[kind].get(name)
    if existing is None:
        registry.registrations[kind][name] = new
        return
    both = f"{kind} {name!r} is registered by both {existing.package} and {package}; using {existing.package}'s"
    if builtin and not existing.builtin:
        registry.rejected.append(Registration(kind, name, obj, plugin, version, builtin, "overridden",
                                              f"overridden by {existing.plugin}"))
        registry.warnings.append(f"{both}, which replaces pmkit's built-in {kind}")
        return
    registry.rejected.append(Registration(kind, name, obj, plugin, version, builtin, "duplicate",
                                          f"{kind} name {name!r} is registered by both "
                                          f"{existing.plugin} and {plugin}; keeping {existing.plugin}"))
    registry.warnings.append(f"{both} (rename one of them, or uninstall one)")


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


# Calling plugin objects: failures become PluginError naming the object and its package.

def call(entry: Registration, method: str, /, *args: Any, **kwargs: Any) -> Any:
    """``entry.obj.<method>(*args, **kwargs)``; what it raises besides pmkit's own errors is a PluginError.

    :class:`~pmkit.errors.InputError` and :class:`~pmkit.errors.UsageError` pass unchanged (a reader
    naming a bad file, a modeler refusing an option); anything else — ``sys.exit()`` included —
    becomes a :class:`~pmkit.errors.PluginError` naming the object and its package, chained to the
    original so ``PMKIT_DEBUG=1`` shows where it came from.
    """
    try:
        return getattr(entry.obj, method)(*args, **kwargs)
    except PmkitError:
        raise
    except PLUGIN_FAULTS as exc:
        raise PluginError(entry.label, f"{method}() raised {_describe(exc)}") from exc


def returned(entry: Registration, method: str, result: Any, expected: type | tuple[type, ...], what: str) -> Any:
    """``result`` if it is an ``expected``; otherwise a PluginError saying what ``method`` returned instead."""
    if not isinstance(result, expected):
        raise PluginError(entry.label, f"{method}() returned {type(result).__name__}, not {what}")
    return result


class Guarded:
    """A plugin's result whose methods are called through :func:`call` (e.g. a prior's loaded knowledge).

    Attributes read through; a method that raises fails as a PluginError naming the plugin, and
    ``checks`` maps method names to ``(expected type, description)`` of what they must return.
    """

    def __init__(self, obj: Any, entry: Registration,
                 checks: dict[str, tuple[type | tuple[type, ...], str]] | None = None) -> None:
        self._obj = obj
        self._entry = entry
        self._checks = checks or {}

    @property
    def wrapped(self) -> Any:
        """The plugin's own object."""
        return self._obj

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._obj, name)
        if not callable(value):
            return value
        shim = replace(self._entry, obj=self._obj)

        def method(*args: Any, **kwargs: Any) -> Any:
            result = call(shim, name, *args, **kwargs)
            if name in self._checks:
                returned(shim, name, result, *self._checks[name])
            return result

        return method


def _debug() -> bool:
    return bool(os.environ.get(DEBUG_ENV))


def _sniff_timeout() -> float:
    text = os.environ.get(SNIFF_TIMEOUT_ENV, "").strip()
    try:
        value = float(text) if text else SNIFF_TIMEOUT
    except ValueError:
        raise UsageError(f"{SNIFF_TIMEOUT_ENV}={text!r} is not a number of seconds") from None
    if not value > 0:
        raise UsageError(f"{SNIFF_TIMEOUT_ENV} must be a positive number of seconds, got {text!r}")
    return value


def sniff(registry: Registry, entry: Registration, path: Path) -> bool:
    """Whether the reader ``entry`` recognises ``path``; a failing or slow sniff counts as no and is reported.

    Built-ins run in this process.  A third-party sniff runs in a forked child process that is
    killed after :data:`SNIFF_TIMEOUT` seconds — a thread cannot be stopped in Python, and one that
    holds the GIL (a regular expression, a C extension) would stall pmkit too; where ``fork`` is
    unavailable it runs in a daemon thread that pmkit stops waiting for.  A third party's failure
    is a :class:`PluginWarning` naming it and its package; a built-in's only with ``PMKIT_DEBUG``
    (with the traceback), since a built-in sniff fails on unreadable input the read then reports.
    """
    if entry.builtin:
        try:
            outcome, value, trace = _verdict(entry.obj.sniff(path))
        except PLUGIN_FAULTS as exc:
            outcome, value, trace = "raised", _describe(exc), traceback.format_exc()
        if outcome == "answer":
            return bool(value)
        if _debug():
            _sniff_warning(entry, path, _problem(outcome, value), trace)
        return False
    if entry.name in registry.unresponsive:
        return False
    timeout = _sniff_timeout()
    outcome, value, trace = _bounded(entry.obj.sniff, path, timeout)
    if outcome == "answer":
        return bool(value)
    if outcome == "timeout":
        registry.unresponsive.add(entry.name)
        value = timeout
    _sniff_warning(entry, path, _problem(outcome, value), trace)
    return False


def _verdict(answer: Any) -> tuple[str, Any, str]:
    """("answer", bool, "") for True or False (numpy's bool too), else ("wrong", what it was, "")."""
    if isinstance(answer, bool) or type(answer).__name__ == "bool_":
        return "answer", bool(answer), ""
    return "wrong", f"{type(answer).__name__} {answer!r:.60}", ""


def _problem(outcome: str, value: Any) -> str:
    if outcome == "wrong":
        return f"returned {value}, not True or False; taken as no"
    if outcome == "timeout":
        return (f"gave no answer within {value:g} s; pmkit stopped waiting and will not ask it again in this run "
                f"(choose the reader with --reader, or allow more time with {SNIFF_TIMEOUT_ENV}=SECONDS)")
    return f"raised {value}; taken as no"


def _sniff_warning(entry: Registration, path: Path, problem: str, trace: str) -> None:
    detail = f"\n{trace.rstrip()}" if trace and _debug() else ""
    warnings.warn(f"{entry.label}: sniff() of {path} {problem}{detail}", PluginWarning, stacklevel=3)


def _bounded(function: Callable[[Path], Any], path: Path, timeout: float) -> tuple[str, Any, str]:
    """``function(path)`` given at most ``timeout`` seconds, as (outcome, value, traceback): outcome
    "answer" (value a bool), "wrong" (value says what came back), "raised" (value the error) or "timeout"."""
    if hasattr(os, "fork") and sys.platform != "darwin":
        return _in_child(function, path, timeout)
    return _in_thread(function, path, timeout)


def _in_child(function: Callable[[Path], Any], path: Path, timeout: float) -> tuple[str, Any, str]:
    # The child writes its outcome, value and traceback separated by NUL bytes, then exits at once.
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child's coverage is its answer
        try:
            os.close(read_end)
            try:
                outcome, value, trace = _verdict(function(path))
            except BaseException as exc:
                outcome, value, trace = "raised", _describe(exc), traceback.format_exc()
            data = "\0".join((outcome, str(value), trace)).encode("utf-8", "replace")
            while data:
                data = data[os.write(write_end, data):]
        finally:
            os._exit(0)
    os.close(write_end)
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    finished = False
    try:
        while not finished:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([read_end], [], [], left)[0]:
                break
            chunk = os.read(read_end, 65536)
            chunks.append(chunk)
            finished = not chunk
    finally:
        os.close(read_end)
        if not finished:
            _kill(pid)
        os.waitpid(pid, 0)
    if not finished:
        return "timeout", None, ""
    outcome, _, rest = b"".join(chunks).decode("utf-8", "replace").partition("\0")
    value, _, trace = rest.partition("\0")
    if outcome == "answer":
        return outcome, value == "True", ""
    if outcome in ("wrong", "raised"):
        return outcome, value, trace
    return "raised", "its process ended without an answer", ""


def _kill(pid: int) -> None:
    import signal

    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _in_thread(function: Callable[[Path], Any], path: Path, timeout: float) -> tuple[str, Any, str]:
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["answer"] = function(path)
        except BaseException as exc:
            box["error"] = (_describe(exc), traceback.format_exc())

    worker = threading.Thread(target=run, name="pmkit-sniff", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        return "timeout", None, ""
    if "error" in box:
        return "raised", *box["error"]
    return _verdict(box.get("answer"))


def blame(exc: BaseException) -> str | None:
    """The third-party plugin package whose code raised ``exc`` (innermost frame first), or None.

    Uses the process-wide registry if it has been built; names the package and the function.
    """
    registry = _REGISTRY
    if registry is None or not registry.modules:
        return None
    frames = []
    tb = exc.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    for frame in reversed(frames):
        module = str(frame.f_globals.get("__name__", ""))
        package = registry.modules.get(module.partition(".")[0])
        if package:
            return f"plugin {package} ({module}.{frame.f_code.co_name})"
    return None
