#!/usr/bin/env bash
# Installs what tools/plot_attention.py needs (Python 3, matplotlib, NumPy; Debian 12 packages).
# Optional: the C++ build, the tests and the main job do not need these.
set -euo pipefail
exec "$(dirname "$0")/install-deps.sh" python3 python3-matplotlib python3-numpy
