#!/usr/bin/env bash
# Installs what tools/bench-pytorch.py needs: PyTorch 1.13 (Debian 12's python3-torch) and OpenBLAS
# for its f32 matmuls (Debian's torch calls the system libblas.so.3, which is otherwise the slow
# reference BLAS; Intel MKL is not in Debian's main archive).
# Optional: only the side-by-side benchmark against PyTorch uses it.
set -euo pipefail
exec "$(dirname "$0")/install-deps.sh" python3 python3-torch libopenblas0-openmp
