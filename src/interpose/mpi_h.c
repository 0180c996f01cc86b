/* Preprocessed at build time so that gen_wrappers.py reads the exact API of this MPI. */
#include <mpi.h>
#ifdef CARACAL_MPI_EXT /* Open MPI's extensions: MPIX_ persistent collectives (src/CMakeLists.txt) */
#include <mpi-ext.h>
#endif
