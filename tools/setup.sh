#!/usr/bin/env bash
# Installs everything memc needs to build and test, from Debian 12 packages. Idempotent: when
# every package is already installed it changes nothing and needs no network.
set -euo pipefail

packages=(
  cmake ninja-build g++ python3
  llvm-19-dev libmlir-19-dev mlir-19-tools llvm-19-tools
  libprotobuf-dev protobuf-compiler libonnx-dev
  googletest libgtest-dev libopenblas-dev libdnnl-dev ocl-icd-opencl-dev zlib1g-dev
  coinor-libcbc-dev pkg-config openmpi-bin libopenmpi-dev
  python3-onnx python3-numpy libonnx-testdata
)
# ocl-icd-opencl-dev: oneDNN's CMake config finds OpenCL, and libdnnl-dev only recommends it
# (--no-install-recommends below skips it). openmpi-bin, libopenmpi-dev: data-parallel programs
# run their ranks under mpirun and talk over MPI (runtime/comm/).

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$package")
done
# Node.js and npm run ONNX Runtime in the tests (tools/install-onnxruntime.sh); any installed
# Node.js will do (the machines may carry one not from Debian's packages).
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  missing+=(nodejs npm)
fi
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages are installed"
  exit 0
fi

echo "setup: installing ${missing[*]}"
sudo=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup: installing needs root or sudo" >&2; exit 1; }
  sudo=(sudo)
fi
# env: sudo drops the caller's environment, and a prompt with no terminal would stop the install.
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
