#!/usr/bin/env bash
# The CUDA runner must start on a GPU host that has the NVIDIA driver and none of the build
# machine's libraries: its NEEDED entries may name only glibc's own libraries (not libcuda.so.1:
# the CUDA runtime, linked in, opens the driver itself; not cuBLASLt & co: dlopen'ed when it
# starts; not protobuf, zlib, libstdc++, oneDNN, OpenBLAS, OpenMP or MPI), and ALLOWED, the
# libraries a runner needs by design (libmpi.so.40 for the data-parallel runner: its ranks are
# mpirun's, whose hosts have MPI).
# Usage: check-portable-runner.sh PROGRAM [ALLOWED...]
set -euo pipefail
program="${1:?usage: check-portable-runner.sh PROGRAM [ALLOWED...]}"
shift
allowed=" $* "
needed="$(readelf -d "$program" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')"
[ -n "$needed" ] || { echo "no NEEDED entries read from $program"; exit 1; }
status=0
for library in $needed; do
  case "$library" in
    libc.so.6 | libm.so.6 | libdl.so.2 | libpthread.so.0 | librt.so.1 | ld-linux-x86-64.so.2)
      echo "ok: $library" ;;
    *) if [[ "$allowed" == *" $library "* ]]; then echo "ok by design: $library"; continue; fi
       echo "NOT PORTABLE: $program needs $library"; status=1 ;;
  esac
done
exit $status
