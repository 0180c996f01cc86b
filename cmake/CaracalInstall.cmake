# What `cmake --install BUILD --prefix PREFIX` (and `make install PREFIX=...`) lays out:
#
#   PREFIX/lib/libcaracal.so*            the PMPI library (soname libcaracal.so.MAJOR.MINOR)
#   PREFIX/lib/libcaracal-*.so           helper preloads (the MPICH testbed finalize fix)
#   PREFIX/include/caracal.h             the public C API
#   PREFIX/bin/caracal-*                 the C tools (run from anywhere: RPATH $ORIGIN/../lib)
#   PREFIX/bin/caracal                   the command-line interface (Python; its package in
#                                        PREFIX/lib/caracal/python)
#   PREFIX/share/man/man1/caracal*.1     man pages, generated from the CLI's own --help texts
#   PREFIX/share/doc/caracal/            README, CHANGELOG, docs/
#   PREFIX/lib/cmake/Caracal/            find_package(Caracal) -> Caracal::caracal
#   PREFIX/lib/pkgconfig/caracal.pc      pkg-config (relocatable: paths from ${pcfiledir})
#   PREFIX/share/modulefiles/caracal/V   Environment Modules / Lmod modulefile (Tcl)
#   PREFIX/share/caracal/install.json    what this installation was built for (the CLI reads it)
#
# One prefix holds one build, i.e. one MPI library: install the Open MPI and the MPICH builds
# into different prefixes (as Spack and module trees do).

include(CMakePackageConfigHelpers)

option(CARACAL_INSTALL_CLI "Install the caracal command-line interface (Python) and its man pages" ON)
# The interpreter itself, not a launcher shim (pyenv's) that picks one by directory
execute_process(COMMAND ${Python3_EXECUTABLE} -c "import sys; print(sys.executable)"
                OUTPUT_VARIABLE CARACAL_PYTHON_REAL OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT CARACAL_PYTHON_REAL)
  set(CARACAL_PYTHON_REAL "${Python3_EXECUTABLE}")
endif()
set(CARACAL_INSTALL_PYTHON "${CARACAL_PYTHON_REAL}" CACHE FILEPATH
    "Python interpreter the installed caracal command runs with")

set(CARACAL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/Caracal)
set(CARACAL_PYDIR ${CMAKE_INSTALL_LIBDIR}/caracal/python)
set(CARACAL_MODULEDIR ${CMAKE_INSTALL_DATADIR}/modulefiles)

# --- the library and the header ---------------------------------------------------------------
install(TARGETS caracal EXPORT CaracalTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_SOURCE_DIR}/include/caracal.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

# --- the C tools -------------------------------------------------------------------------------
# Installed programs find libcaracal beside them whatever the prefix ($ORIGIN), after the
# paths a packager put in CMAKE_INSTALL_RPATH (Spack: its dependencies' lib directories).
set(CARACAL_INSTALLED_PROGRAMS caracal-info caracal-qap caracal-nodemap caracal-probe
    caracal-collbench caracal-tune-bench)
foreach(t IN LISTS CARACAL_INSTALLED_PROGRAMS)
  set_property(TARGET ${t} APPEND PROPERTY INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
endforeach()
install(TARGETS ${CARACAL_INSTALLED_PROGRAMS} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET caracal-ucx-finalize)
  install(TARGETS caracal-ucx-finalize LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()

# --- what this installation is (read by the CLI: python/caracal/paths.py) ----------------------
configure_file(${PROJECT_SOURCE_DIR}/cmake/install.json.in ${PROJECT_BINARY_DIR}/install/install.json @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/install/install.json DESTINATION ${CMAKE_INSTALL_DATADIR}/caracal)

# --- the command-line interface and its man pages ----------------------------------------------
if(CARACAL_INSTALL_CLI)
  # the CLI's Python dependencies (pyproject.toml; numpy and matplotlib only for plots): said
  # now rather than by the first `caracal report` of the installation
  execute_process(COMMAND ${CARACAL_INSTALL_PYTHON} -c "import jsonschema, rich, jinja2"
                  RESULT_VARIABLE _caracal_cli_deps OUTPUT_QUIET ERROR_QUIET)
  if(NOT _caracal_cli_deps EQUAL 0)
    message(WARNING "${CARACAL_INSTALL_PYTHON} lacks jsonschema, rich or jinja2, which the installed "
            "caracal command imports: install them for it (Debian: python3-jsonschema python3-rich "
            "python3-jinja2) or set -DCARACAL_INSTALL_PYTHON to a Python that has them")
  endif()
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/python/caracal DESTINATION ${CARACAL_PYDIR}
          PATTERN __pycache__ EXCLUDE PATTERN "*.pyc" EXCLUDE)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/caracal-cli.sh.in ${PROJECT_BINARY_DIR}/install/caracal @ONLY)
  install(PROGRAMS ${PROJECT_BINARY_DIR}/install/caracal DESTINATION ${CMAKE_INSTALL_BINDIR})

  # One page per command and subcommand, written from the argparse parsers themselves at
  # build time, so a page can never disagree with `caracal COMMAND --help`.
  file(GLOB CARACAL_CLI_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/python/caracal/*.py
       ${PROJECT_SOURCE_DIR}/python/caracal/commands/*.py)
  set(CARACAL_MAN_DIR ${PROJECT_BINARY_DIR}/man/man1)
  add_custom_command(
    OUTPUT ${PROJECT_BINARY_DIR}/man/stamp
    COMMAND ${CMAKE_COMMAND} -E rm -rf ${CARACAL_MAN_DIR}
    COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${PROJECT_SOURCE_DIR}/python PYTHONDONTWRITEBYTECODE=1
            ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/scripts/gen_manpages.py ${CARACAL_MAN_DIR}
    COMMAND ${CMAKE_COMMAND} -E touch ${PROJECT_BINARY_DIR}/man/stamp
    DEPENDS ${CARACAL_CLI_SOURCES} ${PROJECT_SOURCE_DIR}/scripts/gen_manpages.py
            ${PROJECT_SOURCE_DIR}/python/caracal/VERSION
    COMMENT "Writing the man pages from caracal --help")
  add_custom_target(caracal-man ALL DEPENDS ${PROJECT_BINARY_DIR}/man/stamp)
  install(DIRECTORY ${CARACAL_MAN_DIR} DESTINATION ${CMAKE_INSTALL_MANDIR})
endif()

# --- documentation -----------------------------------------------------------------------------
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/CHANGELOG.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR})

# --- CMake package: find_package(Caracal) gives Caracal::caracal -------------------------------
install(EXPORT CaracalTargets NAMESPACE Caracal:: DESTINATION ${CARACAL_CMAKEDIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/CaracalConfig.cmake.in
  ${PROJECT_BINARY_DIR}/install/CaracalConfig.cmake INSTALL_DESTINATION ${CARACAL_CMAKEDIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_LIBDIR)
# Before 1.0 a minor release may change the API: only the same major.minor satisfies a request.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/install/CaracalConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/install/CaracalConfig.cmake
              ${PROJECT_BINARY_DIR}/install/CaracalConfigVersion.cmake
        DESTINATION ${CARACAL_CMAKEDIR})

# --- pkg-config ---------------------------------------------------------------------------------
file(RELATIVE_PATH CARACAL_PC_TO_PREFIX ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig
     ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" CARACAL_PC_TO_PREFIX "${CARACAL_PC_TO_PREFIX}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/caracal.pc.in ${PROJECT_BINARY_DIR}/install/caracal.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/install/caracal.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# --- Environment Modules / Lmod modulefile ------------------------------------------------------
# Written at install time: it names the prefix actually installed to (cmake --install --prefix),
# not the one configured. DESTDIR (staged installs) is not part of the path it names.
set(CARACAL_MODULE_PREFIX "@CARACAL_MODULE_PREFIX@")   # kept for the install-time pass
configure_file(${PROJECT_SOURCE_DIR}/cmake/caracal-modulefile.tcl.in
               ${PROJECT_BINARY_DIR}/install/modulefile.tcl.in @ONLY)
install(CODE "
  set(CARACAL_MODULE_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
  configure_file(\"${PROJECT_BINARY_DIR}/install/modulefile.tcl.in\"
                 \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CARACAL_MODULEDIR}/caracal/${PROJECT_VERSION}\" @ONLY)
  message(STATUS \"Installing: \$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CARACAL_MODULEDIR}/caracal/${PROJECT_VERSION}\")
")
