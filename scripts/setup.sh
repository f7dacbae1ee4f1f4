#!/usr/bin/env bash
#===- scripts/setup.sh - install dependencies, configure and build -------===#
#
# Idempotent: installs the Debian packages that are missing (needs root and
# apt), configures build/ once, and builds everything. Quiet when there is
# nothing to do. Environment:
#   BUILD_DIR   build directory (default: build)
#   BUILD_TYPE  CMake build type (default: Release)
#   CMAKE_ARGS  extra arguments for the first configure
#
#===----------------------------------------------------------------------===#
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
BUILD_TYPE=${BUILD_TYPE:-Release}
LLVM_PREFIX=/usr/lib/llvm-22

# python3-torch (PyTorch 1.13, CPU only): nvfp4.torch's tests run on the
# CPU up to the launch (shapes, dtypes, devices, convert's policy); its GPU
# half is integration_test/run_torch_suite.sh. NVFP4_NO_TORCH=1 skips it.
PACKAGES=(cmake ninja-build g++ python3 python3-dev python3-numpy pybind11-dev
          libgtest-dev llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools)
[[ ${NVFP4_NO_TORCH:-0} == 1 ]] || PACKAGES+=(python3-torch)

missing=()
for pkg in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$pkg")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [[ $(id -u) -ne 0 ]] && SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [[ ! -f $BUILD_DIR/build.ninja ]]; then
  echo "setup: configuring $BUILD_DIR ($BUILD_TYPE)"
  cmake -G Ninja -S "$ROOT" -B "$BUILD_DIR" \
    -DCMAKE_BUILD_TYPE="$BUILD_TYPE" \
    -DMLIR_DIR="$LLVM_PREFIX/lib/cmake/mlir" \
    -DLLVM_EXTERNAL_LIT="$LLVM_PREFIX/bin/lit" \
    ${CMAKE_ARGS:-} >"$BUILD_DIR.configure.log" 2>&1 \
    || { cat "$BUILD_DIR.configure.log"; exit 1; }
fi

# `ninja` prints nothing but "no work to do" when everything is up to date.
if ! ninja -C "$BUILD_DIR" -n 2>/dev/null | grep -q "no work to do"; then
  echo "setup: building in $BUILD_DIR"
  ninja -C "$BUILD_DIR" >"$BUILD_DIR.build.log" 2>&1 \
    || { tail -n 60 "$BUILD_DIR.build.log"; echo "setup: build failed (full log: $BUILD_DIR.build.log)"; exit 1; }
fi
