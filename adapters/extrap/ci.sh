#!/usr/bin/env bash
# CI for pmkit-extrap: a separate virtual environment with Extra-P (numpy<2), pmkit and this adapter,
# then the adapter's tests.  Run from anywhere; real data is found through PMKIT_SHARED_DATA or
# ../shared/data beside the repository.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
venv="${PMKIT_EXTRAP_VENV:-$here/.venv}"
export PMKIT_SHARED_DATA="${PMKIT_SHARED_DATA:-$(cd "$repo/.." && pwd)/shared/data}"
# The GUI tests draw headless: Qt's offscreen platform unless a platform is chosen (e.g. QT_QPA_PLATFORM=xcb
# with DISPLAY=:99 from `Xvfb :99 &`, which needs the libxcb-cursor0 family of system libraries).
export QT_QPA_PLATFORM="${QT_QPA_PLATFORM:-offscreen}"

python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --upgrade pip
"$venv/bin/python" -m pip install -q "numpy<2" extrap -e "$repo" -e "$here[test]"
"$venv/bin/python" -c "import numpy, extrap, pmkit, pmkit_extrap; print('numpy', numpy.__version__, '| extrap', extrap.__version__)"
cd "$here"
"$venv/bin/python" -m pytest tests "$@"
