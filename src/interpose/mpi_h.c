/* Preprocessed at build time so that gen_wrappers.py reads the exact API of this MPI. */
#include <mpi.h>
