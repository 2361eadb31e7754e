"""``pmkit-extrap-gui``: Extra-P's GUI with pmkit's modelers in its *Model generator* list.

Every argument is Extra-P's own (``pmkit-extrap-gui --cube DIR``, ``pmkit-extrap-gui exp.extra-p``).
pmkit's modelers — built-in and from installed pmkit plugins — appear as ``pmkit-<name>`` beside
Extra-P's, with their options under *Advanced options*.  A model set is named after the modeler
that made it (``pmkit-refining``) instead of Extra-P's "New Model", unless the user types a name.

Two changes to Extra-P's GUI, made for this process only while it runs (:func:`pmkit_in_extrap_gui`):
its main window class gains the naming, and its formula formatter shows a one-term function
without a constant as text — Extra-P 4.2.5's ``formatFormula`` raises on ``p^(1)`` (coefficient 1,
constant 0, which pmkit's exact fits give), and PySide then crashes the GUI.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from typing import Any

from pmkit_extrap.modelers import register

DEFAULT_MODEL_NAME = "New Model"
"""The model-set name Extra-P's *Model name* field starts with; replaced by the modeler's name."""

FORMULA_USERS = ("extrap.gui.Utils", "extrap.gui.TreeModel", "extrap.gui.GraphWidget")
"""Extra-P's GUI modules that import ``formatFormula`` by name."""


def name_after_modeler(modeler_widget: Any) -> None:
    """Make ``modeler_widget`` (Extra-P's ``ModelerWidget``) name each model set after the selected modeler.

    The *Model name* field follows the *Model generator* selection until the user edits it
    (``QLineEdit.isModified``); a name the user typed is kept.
    """
    selector, name_edit = modeler_widget._model_selector, modeler_widget.model_name_edit

    def follow(_index: int) -> None:
        if selector.currentText() and (not name_edit.isModified() or name_edit.text() == DEFAULT_MODEL_NAME):
            name_edit.setText(selector.currentText())

    selector.currentIndexChanged.connect(follow)
    follow(selector.currentIndex())


def tolerant_formula(format_formula: Callable[[str], str]) -> Callable[[str], str]:
    """Extra-P's ``formatFormula``, showing the formula as it is where Extra-P cannot format it."""

    def format_or_keep(formula: str) -> str:
        try:
            return format_formula(formula)
        except ValueError:  # a single term without operators, e.g. "p^(1)", taken for a number
            return formula

    return format_or_keep


@contextmanager
def _patched(module_name: str, attribute: str, value: Any) -> Iterator[None]:
    import importlib

    module = importlib.import_module(module_name)
    previous = getattr(module, attribute)
    setattr(module, attribute, value)
    try:
        yield
    finally:
        setattr(module, attribute, previous)


@contextmanager
def pmkit_in_extrap_gui() -> Iterator[None]:
    """While active, Extra-P's GUI names model sets after their modelers and formats every pmkit function."""
    from extrap.gui import Utils
    from extrap.gui.MainWidget import MainWidget

    class PmkitMainWidget(MainWidget):
        """Extra-P's main window, whose modeler panel names model sets after the modeler."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            name_after_modeler(self.modeler_widget)

    with ExitStack() as stack:
        stack.enter_context(_patched("extrap.extrap.extrapgui", "MainWidget", PmkitMainWidget))
        formula = tolerant_formula(Utils.formatFormula)
        for module_name in FORMULA_USERS:
            stack.enter_context(_patched(module_name, "formatFormula", formula))
        yield


def main(args: Sequence[str] | None = None) -> None:
    """Register pmkit's modelers with Extra-P, then run Extra-P's GUI until its window closes."""
    from extrap.extrap import extrapgui

    register()
    with pmkit_in_extrap_gui():
        extrapgui.main(args=list(args) if args is not None else None)


if __name__ == "__main__":
    main(sys.argv[1:])
