"""The OTF2 library, reached through the ``otf2`` package: its import, its C functions, its errors.

The ``otf2`` package (the extra ``pmkit-hpc[otf2]``) ships ``libotf2`` inside its ``_otf2``
module.  pmkit uses its Python API for the (small) definitions and calls the C API directly for
the (large) event files, with compiled callbacks (see :mod:`pmkit.readers.otf2_events`).  OTF2
reports errors by printing them; pmkit installs its own error handler so that they become one
:class:`~pmkit.errors.InputError` naming the file instead of lines on the terminal.
"""

from __future__ import annotations

import ctypes
import platform
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from pmkit.errors import InputError, UsageError

MISSING = "reading OTF2 traces needs the otf2 package: pip install 'pmkit-hpc[otf2]' (or pip install otf2)"
"""What to tell a user whose environment lacks the ``otf2`` package."""

_ERROR_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_uint64, ctypes.c_char_p,
                                   ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p)
_errors = threading.local()


def import_otf2() -> Any:
    """The ``otf2`` package, or a UsageError saying what to install."""
    try:
        import otf2
    except ImportError:
        raise UsageError(MISSING) from None
    return otf2


def _record_error(user_data: Any, file: bytes, line: int, function: bytes, code: int, fmt: bytes, va: Any) -> int:
    text = fmt.decode("utf-8", "replace") if fmt else ""
    if fmt and platform.machine() in ("x86_64", "AMD64"):
        buffer = ctypes.create_string_buffer(512)
        _vsnprintf()(buffer, len(buffer), fmt, va)
        text = buffer.value.decode("utf-8", "replace")
    messages = getattr(_errors, "messages", None)
    if messages is not None:
        messages.append((code, text))
    return code


@cache
def _vsnprintf() -> Any:
    libc = ctypes.CDLL(None)
    function = libc.vsnprintf
    function.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_void_p]
    function.restype = ctypes.c_int
    return function


_HANDLER = _ERROR_CALLBACK(_record_error)


@cache
def library() -> SimpleNamespace:
    """The C functions of libotf2 pmkit calls, with their prototypes; OTF2's errors go to pmkit."""
    import_otf2()
    from _otf2.Config import lib_path

    lib = ctypes.CDLL(lib_path())
    vp, u64, i32 = ctypes.c_void_p, ctypes.c_uint64, ctypes.c_int
    prototypes = {
        "Reader_Open": (vp, ctypes.c_char_p),
        "Reader_Close": (i32, vp),
        "Reader_SetSerialCollectiveCallbacks": (i32, vp),
        "Reader_SelectLocation": (i32, vp, u64),
        "Reader_OpenDefFiles": (i32, vp),
        "Reader_CloseDefFiles": (i32, vp),
        "Reader_OpenEvtFiles": (i32, vp),
        "Reader_CloseEvtFiles": (i32, vp),
        "Reader_GetDefReader": (vp, vp, u64),
        "Reader_CloseDefReader": (i32, vp, vp),
        "Reader_ReadAllLocalDefinitions": (i32, vp, vp, ctypes.POINTER(u64)),
        "Reader_GetEvtReader": (vp, vp, u64),
        "Reader_CloseEvtReader": (i32, vp, vp),
        "Reader_RegisterEvtCallbacks": (i32, vp, vp, vp, vp),
        "Reader_ReadLocalEvents": (i32, vp, vp, u64, ctypes.POINTER(u64)),
        "EvtReaderCallbacks_New": (vp,),
        "EvtReaderCallbacks_Delete": (None, vp),
        "Error_GetDescription": (ctypes.c_char_p, i32),
    }
    functions: dict[str, Any] = {}
    for name, (restype, *argtypes) in prototypes.items():
        function = getattr(lib, f"OTF2_{name}")
        function.restype = restype
        function.argtypes = argtypes
        functions[name] = function
    register = lib.OTF2_Error_RegisterCallback
    register.restype = ctypes.c_void_p
    register.argtypes = [_ERROR_CALLBACK, ctypes.c_void_p]
    register(_HANDLER, None)
    functions["lib"] = lib
    return SimpleNamespace(**functions)


def set_callback(callbacks: int, event: str, address: int) -> None:
    """Make the compiled function at ``address`` the reader callback of ``event`` (``Enter``, ``MpiSend``, ...)."""
    function = getattr(library().lib, f"OTF2_EvtReaderCallbacks_Set{event}Callback")
    function.restype = ctypes.c_int
    function.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    code = function(callbacks, address)
    if code != 0:
        raise RuntimeError(f"OTF2 refused the {event} callback (error {code})")


@contextmanager
def otf2_errors(path: str | Path, what: str) -> Iterator[list[tuple[int, str]]]:
    """Collect OTF2's error messages while the block runs; a failure inside becomes an InputError.

    ``what`` says what was being done (``reading the definitions``); OTF2's own messages, most
    specific first, complete the one-line error.
    """
    library()
    messages: list[tuple[int, str]] = []
    previous = getattr(_errors, "messages", None)
    _errors.messages = messages
    try:
        yield messages
    except InputError:
        raise
    except Exception as exc:
        raise InputError(path, f"{what} failed: {describe(messages) or exc}") from None
    finally:
        _errors.messages = previous


def describe(messages: list[tuple[int, str]]) -> str:
    """OTF2's messages as one phrase: the first (most specific) ones with the error's description."""
    if not messages:
        return ""
    code = messages[0][0]
    raw = library().Error_GetDescription(code)
    meaning = raw.decode("utf-8", "replace") if raw else ""
    texts: list[str] = []
    for _, text in messages[:3]:
        if text and text not in texts:
            texts.append(text.rstrip(".!"))
    return f"{meaning.rstrip('.')} ({'; '.join(texts)})" if meaning else "; ".join(texts)


def check(code: int, path: str | Path, what: str, messages: list[tuple[int, str]]) -> None:
    """Raise an InputError naming ``path`` if an OTF2 call returned the error ``code``."""
    if code != 0:
        detail = describe(messages) or f"OTF2 error {code}"
        raise InputError(path, f"{what}: {detail}")
