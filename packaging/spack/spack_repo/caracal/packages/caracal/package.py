# Spack recipe of Caracal, kept with its sources (packaging/spack; docs/install.md says how it
# was installed with a real Spack). tests/python/test_install.py checks offline that its
# versions, variants and CMake options match the build (packaging/spack/check_recipe.py).

import glob
import os

from spack_repo.builtin.build_systems.cmake import CMakePackage

from spack.package import *


class Caracal(CMakePackage):
    """Caracal makes MPI communication fast on the machine you have: a PMPI interposition
    library that runs MPI collectives through hierarchical algorithms (shared memory inside
    a node, point-to-point between nodes), with a profiler, a topology probe, rank
    placement and the `caracal` command-line interface, on top of an unmodified Open MPI or
    MPICH-family library."""

    # Caracal has no public download location yet: install it from a source tree or from the
    # tarball of `make dist` with `spack develop --path DIR caracal@=VERSION` (docs/install.md).

    # python/caracal/VERSION: the version of the library, the tools and the CLI
    version("0.1.0")

    variant("cli", default=True,
            description="Install the caracal command-line interface (Python) and its man pages")

    depends_on("c", type="build")
    depends_on("fortran", type="build")  # the project's test programs include Fortran ones
    depends_on("cmake@3.18:", type="build")
    depends_on("pkgconfig", type="build")
    depends_on("python@3.9:", type="build")  # generates the MPI wrappers from mpi.h
    depends_on("python@3.9:", type="run", when="+cli")
    # what the CLI imports (pyproject.toml's dependencies)
    depends_on("py-jsonschema@4:", type="run", when="+cli")
    depends_on("py-rich@12:", type="run", when="+cli")
    depends_on("py-jinja2@3:", type="run", when="+cli")
    # numpy and matplotlib only draw the plots of `caracal report --plots/--html` (imported
    # for them only; without them those options say so in one line): on by default, as
    # pyproject.toml has them; ~plots leaves out matplotlib's large dependency tree
    variant("plots", default=True, when="+cli",
            description="The plotting packages of caracal report --plots/--html (matplotlib, numpy)")
    depends_on("py-numpy@1.21:", type="run", when="+cli +plots")
    depends_on("py-matplotlib@3.5:", type="run", when="+cli +plots")
    depends_on("mpi")
    depends_on("hwloc@2:")

    @property
    def mpi_family(self):
        """Open MPI or an MPICH-ABI library (MPICH, MVAPICH, Intel MPI, Cray MPICH): decides the
        launcher conventions of the tests and what `caracal run --mpi` expects."""
        return "openmpi" if self.spec.satisfies("^openmpi") else "mpich"

    def mpi_wrapper(self, name, default):
        """The MPI provider's compiler wrapper. Debian installs Open MPI and MPICH side by side
        in /usr, where mpicc is whichever the alternatives system chose: an external MPI there
        has its own wrapper as mpicc.openmpi / mpicc.mpich."""
        own = join_path(self.spec["mpi"].prefix.bin, f"{name}.{self.mpi_family}")
        return own if os.path.exists(own) else default

    def cmake_args(self):
        mpi = self.spec["mpi"]
        python = self.spec["python"].command.path
        # an MPI outside /usr: Caracal's launcher and the environment it needs are that
        # installation's (cmake/CaracalMPI.cmake detects its kind from its files); Debian's in
        # /usr are the table's own openmpi/mpich entries
        prefix = [] if str(mpi.prefix) == "/usr" else [self.define("CARACAL_MPI_PREFIX", str(mpi.prefix))]
        return prefix + [
            self.define("CARACAL_MPI", self.mpi_family),
            self.define("CMAKE_C_COMPILER", self.mpi_wrapper("mpicc", mpi.mpicc)),
            self.define("CMAKE_Fortran_COMPILER", self.mpi_wrapper("mpifort", mpi.mpifc)),
            self.define("Python3_EXECUTABLE", python),
            self.define("CARACAL_INSTALL_PYTHON", python),
            self.define_from_variant("CARACAL_INSTALL_CLI", "cli"),
            # the test programs only for `spack install --test=root` (Spack passes no
            # BUILD_TESTING itself, and the build's default is ON)
            self.define("BUILD_TESTING", self.run_tests),
        ]

    def setup_run_environment(self, env):
        # what the modulefile of `cmake --install` sets too (cmake/caracal-modulefile.tcl.in)
        env.set("CARACAL_PREFIX", self.prefix)
        env.set("CARACAL_LIBRARY", join_path(self.prefix.lib, "libcaracal.so"))
        if self.spec.satisfies("+cli"):
            # Spack puts an external Python package on PYTHONPATH at the path the external
            # Python's own scheme names (Debian's: local/lib/python3.X/dist-packages), which is
            # not where `pip install --prefix` put it (lib/python3.X/site-packages): the CLI
            # then could not import it (docs/install.md). Every site directory that exists in
            # a Python dependency's prefix goes on PYTHONPATH, whatever its layout.
            for dep in self.spec.dependencies(deptype="run"):
                if dep.name.startswith("py-"):
                    for path in python_site_dirs(dep.prefix):
                        env.prepend_path("PYTHONPATH", path)


def python_site_dirs(prefix):
    """The site directories of an installation prefix, in every layout pip or a distribution
    writes: lib/lib64 pythonX.Y/site-packages, Debian's dist-packages and local/ variants."""
    found = []
    for pattern in ("lib/python3*/site-packages", "lib64/python3*/site-packages",
                    "lib/python3*/dist-packages", "lib/python3/dist-packages",
                    "local/lib/python3*/dist-packages", "local/lib/python3*/site-packages"):
        found += sorted(glob.glob(os.path.join(str(prefix), pattern)))
    return [d for d in dict.fromkeys(found) if os.path.isdir(d)]
