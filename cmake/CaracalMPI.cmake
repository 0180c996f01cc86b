# The MPI library of this build. Included before project(): the compiler wrappers decide
# everything (include paths, libraries), so they must be known first.
#
# Every way the libraries differ lives in one table, python/caracal/mpilibs.py (the CLI uses
# the same one to launch). Here we only ask it: `python -m caracal.mpilibs cmake <build>`
# prints the settings below and writes, into the build tree, caracal-mpiexec (the launcher
# every test runs through, with the environment its library needs) and, where the library
# needs an environment to compile, caracal-mpicc.
#
#   CARACAL_MPI_LIBRARY   the library (openmpi, openmpi5, mpich, mpich5, impi)
#   CARACAL_MPI_FAMILY    whose launcher and progress: openmpi (ranks yield when oversubscribed;
#                         mpiexec -x VAR=VALUE) or mpich (Hydra; ranks busy-poll; -genv VAR VALUE)
#   CARACAL_MPI_ABI       openmpi, mpich (libmpi.so.12 and MPICH's handle values) or mpi5 (the
#                         MPI-5 standard ABI: mpi_abi.h, libmpi_abi.so.1)
#   CARACAL_MPI_CC/FC     the compiler wrappers (FC empty: no Fortran bindings)
#   CARACAL_MPIEXEC       the launcher; CARACAL_MPIEXEC_ENVFLAG its flag for a rank's variable
#   CARACAL_MPI_RUNTIMES  the other libraries this build's programs run on unchanged
#                         (ctest with CARACAL_TEST_MPI=<name>)
set(CARACAL_MPI "openmpi" CACHE STRING
    "MPI build: openmpi, openmpi5, mpich, mpich5, impi, or abi (MPI-5 standard ABI, MPICH 5's mpicc_abi)")
set_property(CACHE CARACAL_MPI PROPERTY STRINGS openmpi openmpi5 mpich mpich5 impi abi)
set(CARACAL_MPI_PREFIX "" CACHE PATH
    "Another installation of the kind of library CARACAL_MPI names (its bin/mpicc, bin/mpiexec)")

find_program(CARACAL_PYTHON3 NAMES python3 REQUIRED)
set(_mpi_args cmake ${CARACAL_MPI} ${CMAKE_BINARY_DIR})
if(CARACAL_MPI_PREFIX)
  list(APPEND _mpi_args --prefix ${CARACAL_MPI_PREFIX})
endif()
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${CMAKE_CURRENT_LIST_DIR}/../python
          ${CARACAL_PYTHON3} -m caracal.mpilibs ${_mpi_args}
  OUTPUT_FILE ${CMAKE_BINARY_DIR}/caracal-mpi.cmake
  ERROR_VARIABLE _mpi_err
  RESULT_VARIABLE _mpi_rc)
if(NOT _mpi_rc EQUAL 0)
  message(FATAL_ERROR "CARACAL_MPI=${CARACAL_MPI}: ${_mpi_err}")
endif()
include(${CMAKE_BINARY_DIR}/caracal-mpi.cmake)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
             ${CMAKE_CURRENT_LIST_DIR}/../python/caracal/mpilibs.py)
message(STATUS "MPI: ${CARACAL_MPI_TITLE} (build ${CARACAL_MPI}, ${CARACAL_MPI_ABI} ABI); "
               "compiler ${CARACAL_MPI_CC}; also runs on: ${CARACAL_MPI_RUNTIMES}")

if(NOT CMAKE_C_COMPILER)
  set(CMAKE_C_COMPILER ${CARACAL_MPI_CC})
endif()
if(NOT CMAKE_Fortran_COMPILER AND CARACAL_MPI_FC)
  set(CMAKE_Fortran_COMPILER ${CARACAL_MPI_FC})
endif()

# What this library declares, for the tests (the library's own code learns the same from
# gen_funcs.h): called after project().
macro(caracal_mpi_features)
  include(CheckCSourceCompiles)
  check_c_source_compiles("#include <mpi.h>
int main(void) { char b[1]; return MPI_Bcast_c(b, (MPI_Count)1, MPI_BYTE, 0, MPI_COMM_SELF); }"
    CARACAL_MPI_HAS_LARGE_COUNT)
  check_c_source_compiles("#include <mpi.h>
int main(void) { MPI_Request r; return MPI_Bcast_init(0, 0, MPI_BYTE, 0, MPI_COMM_SELF, MPI_INFO_NULL, &r); }"
    CARACAL_MPI_HAS_PERSISTENT_COLL)
endmacro()
