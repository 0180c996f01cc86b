#!/bin/sh
# Build LLNL's mpiP (a user-given source checkout; its code never enters this repository)
# against one Debian MPI library, for bench/mpip_compare.py.
#   bench/mpip_build.sh MPIP_SRC openmpi|mpich OUTDIR   -> OUTDIR/libmpiP.so
# Needs binutils-dev and libunwind-dev (source lookup and stack walks), and LOGNAME set
# (mpiP's configure records it).
set -eu
[ $# -eq 3 ] || { echo "usage: $0 MPIP_SRC openmpi|mpich OUTDIR" >&2; exit 2; }
src=$1 mpi=$2 out=$3
case $mpi in openmpi|mpich) ;; *) echo "$0: MPI must be openmpi or mpich, not $mpi" >&2; exit 2 ;; esac
[ -x "$src/configure" ] || { echo "$0: $src has no mpiP configure script" >&2; exit 2; }
command -v "mpicc.$mpi" >/dev/null || { echo "$0: mpicc.$mpi not found" >&2; exit 2; }
export LOGNAME="${LOGNAME:-$(id -un)}"
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -rf "$out/src"
cp -r "$src" "$out/src"
cd "$out/src"
./configure --with-cc="mpicc.$mpi" --with-cxx="mpicxx.$mpi" --with-f77="mpif77.$mpi" >"$out/configure.log" 2>&1 || { tail -20 "$out/configure.log" >&2; exit 1; }
make -j2 shared >"$out/make.log" 2>&1 || { tail -20 "$out/make.log" >&2; exit 1; }
cp libmpiP.so "$out/libmpiP.so"
echo "$out/libmpiP.so"
