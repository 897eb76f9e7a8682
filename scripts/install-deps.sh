#!/usr/bin/env bash
# Installs every Debian package eppsim needs to build, test and plot. Idempotent: packages already
# present are left as they are. Run as root (or with sudo available) on Debian 12.
set -euo pipefail

packages=(
  build-essential cmake pkg-config git
  libsimgrid-dev libboost-dev libboost-graph-dev libboost-program-options-dev
  libprotobuf-dev protobuf-compiler
  libfmt-dev
  libjemalloc-dev   # the allocator of eppsim's programs (CMakeLists.txt EPPSIM_ALLOCATOR)
  clang libclang-rt-14-dev   # the sanitizer and fuzz build: clang's sanitizers and libFuzzer, whose runtimes libclang-rt-14-dev ships
  lld               # clang's programs link with LLVM's linker (CMakeLists.txt)
  libgtest-dev libgmock-dev libbenchmark-dev
  libopenmpi-dev openmpi-bin
  coinor-libcbc-dev coinor-libcgl-dev coinor-libclp-dev coinor-libosi-dev coinor-libcoinutils-dev
  libopenblas-dev   # BLAS for the runtime's kernels; its LAPACK (liblapack.so) for eppsim calibrate's least squares
  python3 python3-matplotlib python3-protobuf
  python3-venv      # the venv below
  time              # GNU time: wall time and peak memory in scripts/hybrid-validate.sh
  chromium          # headless, for the test that loads the --html report page (tests/plots/html_test.py)
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present" >&2
else
  echo "install-deps: installing ${missing[*]}" >&2
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

# Perfetto's own compiled trace schema (PyPI: perfetto), which tests/traces/perfetto_schema_test.py
# reads `eppsim export perfetto` with. Its generated code needs protobuf >= 6.31, newer than
# Debian 12's python3-protobuf, hence a venv of its own (tests/CMakeLists.txt EPPSIM_PERFETTO_PYTHON).
perfetto_venv=/opt/eppsim-perfetto
if ! "$perfetto_venv/bin/python3" -c "from perfetto.protos.perfetto.trace import perfetto_trace_pb2" 2>/dev/null; then
  echo "install-deps: making $perfetto_venv (pip install perfetto==0.59.1)" >&2
  "${sudo_cmd[@]}" python3 -m venv "$perfetto_venv"
  "${sudo_cmd[@]}" "$perfetto_venv/bin/pip" install -q perfetto==0.59.1 >&2
fi

# cudnn-frontend, NVIDIA's header-only C++ API of the cuDNN 9 graph (PyPI:
# nvidia-cudnn-frontend; Debian has no package), for the CUDA backend's flash
# attention (runtime/cuda/cudnn_attention.h). Only its include/ is kept, in
# /opt/eppsim-cudnn-frontend/include, where CMakeLists.txt looks; the wheel is
# fetched for CPython 3.11 whatever python3 is here (the headers are the same).
# Only where the CUDA toolkit is: without it the backend is not built at all.
cudnn_frontend_dir=/opt/eppsim-cudnn-frontend
if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then
  if [ ! -f "$cudnn_frontend_dir/include/cudnn_frontend.h" ]; then
    echo "install-deps: nvidia-cudnn-frontend==1.32.0's headers into $cudnn_frontend_dir/include" >&2
    "${sudo_cmd[@]}" python3 -m venv "$cudnn_frontend_dir/venv"
    wheels=$(mktemp -d)
    "$cudnn_frontend_dir/venv/bin/pip" download -q --no-deps --only-binary=:all: --python-version 3.11 \
      --implementation cp --platform manylinux_2_28_x86_64 -d "$wheels" nvidia-cudnn-frontend==1.32.0 >&2
    "${sudo_cmd[@]}" "$cudnn_frontend_dir/venv/bin/python3" -c '
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as wheel:
    wheel.extractall(sys.argv[2], [n for n in wheel.namelist() if n.startswith("include/")])
' "$wheels"/nvidia_cudnn_frontend-*.whl "$cudnn_frontend_dir"
    rm -rf "$wheels"
  fi
fi
