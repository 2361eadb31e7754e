"""pmkit inside Extra-P: pmkit's modelers in Extra-P, experiments converted both ways, ``.extra-p`` files.

``register()`` makes every pmkit modeler available to Extra-P's ``ModelGenerator`` as
``pmkit-<name>``; ``to_pmkit`` / ``to_extrap`` convert experiments and model sets;
``write_extrap`` / ``read_extrap`` go through Extra-P's own file format.
"""

from pmkit_extrap.convert import to_extrap, to_pmkit
from pmkit_extrap.experiment_file import read_extrap, write_extrap
from pmkit_extrap.functions import to_extrap_function, to_pmkit_function
from pmkit_extrap.modelers import adapter_classes, extrap_name, register

__all__ = ["adapter_classes", "extrap_name", "read_extrap", "register", "to_extrap", "to_extrap_function",
           "to_pmkit", "to_pmkit_function", "write_extrap"]
