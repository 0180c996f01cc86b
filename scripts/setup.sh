#!/usr/bin/env bash
# Install what Caracal needs on Debian 12, then create the Python venv.
#   scripts/setup.sh [MPI...]   also installs the named MPI libraries that come from the
#   Python package index (openmpi5, mpich5, impi; abi needs mpich5) into .mpi/<name>/, each
#   its own venv, when missing (python/caracal/mpilibs.py has the table).
# As root, missing Debian packages are installed with apt-get; otherwise we
# print the exact command to run and stop.
set -euo pipefail
cd "$(dirname "$0")/.."

PKGS=(build-essential cmake gfortran pkg-config binutils
      openmpi-bin libopenmpi-dev mpich libmpich-dev
      hwloc libhwloc-dev python3 python3-venv python3-dev netpipe-openmpi
      lmod    # lmod: the modulefile test (tests/install); it conflicts with environment-modules
      libsimgrid-dev  # SimGrid SMPI (smpicc, smpirun): caracal simulate, tests/python/test_simulate.py
      libscalapack-openmpi-dev libscalapack-mpich-dev  # examples/pdgetrf.c, the PDGETRF baseline
      python3-jsonschema python3-rich python3-jinja2)  # what an installed CLI run by Debian's
      # python3 imports (pyproject.toml's dependencies; the venv below gets them from PyPI)
mpilibs() { PYTHONPATH="$PWD/python" /usr/bin/python3 -m caracal.mpilibs "$@"; }
names=(); for a in "$@"; do if [ "${a#-}" = "$a" ]; then names+=("$a"); fi; done   # library names, not --fuzz
if [ ${#names[@]} -gt 0 ] && [ -x /usr/bin/python3 ]; then
  # shellcheck disable=SC2207
  PKGS+=($(mpilibs debian "${names[@]}"))   # e.g. Intel MPI's libfabric
fi

# --fuzz: also clang with its libFuzzer and sanitizer runtimes (fuzz/, make fuzz)
if [ "${1:-}" = "--fuzz" ]; then
  PKGS+=(clang-14 libclang-rt-14-dev)
fi

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "setup: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "setup: missing Debian packages; run: sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
fi

# The venv uses Debian's python3 so that python3-venv (installed above) is what makes it.
PY=/usr/bin/python3
stamp=.venv/.caracal-installed
if [ ! -x .venv/bin/python ] || [ pyproject.toml -nt "$stamp" ]; then
  [ -x .venv/bin/python ] || "$PY" -m venv .venv
  .venv/bin/pip install -q --upgrade pip >/dev/null
  .venv/bin/pip install -q -e '.[test]'
  touch "$stamp"
fi

# MPI libraries from the Python package index, where named and missing
if [ ${#names[@]} -gt 0 ]; then
  mpilibs install "${names[@]}"
fi
