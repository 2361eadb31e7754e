"""``pmkit plugins``: every registered reader, modeler, prior and detector, and the plugins that failed."""

from __future__ import annotations

import argparse
from typing import Any

from pmkit.cli.common import EXIT_OK, output, output_console, plugin_registry, write_json


def add_parser(sub: Any) -> None:
    p_plugins = sub.add_parser("plugins", help="list readers, modelers, priors and detectors",
                               description="List every registered plugin object and every plugin that failed.")
    p_plugins.add_argument("--json", action="store_true", help="print the list as JSON (options included)")
    p_plugins.add_argument("--options", "-o", action="store_true",
                           help="also list each plugin's options (for -R, -O, -P and -D name=value)")
    p_plugins.set_defaults(run=run_plugins)


def run_plugins(args: argparse.Namespace) -> int:
    from pmkit.ui.plugin_table import plugin_table

    registry = plugin_registry(quiet=True)
    if args.json:
        write_json({"schema": "pmkit.plugins/1", "plugins": [r.to_json() for r in registry.rows()]}, None)
    else:
        with output(None) as stream:
            output_console(stream, None).print(plugin_table(registry, options=args.options))
    return EXIT_OK
