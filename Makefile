# Caracal — the two commands:  make demo   and   make test
# Both install what is missing first (scripts/setup.sh), then build.
#   MPI=openmpi (default) builds into build/, MPI=mpich into build-mpich/.

MPI ?= openmpi
BUILD_openmpi := build
BUILD_mpich   := build-mpich
BUILD := $(BUILD_$(MPI))
JOBS ?= 2
# The package is taken from this checkout's python/ even when .venv is shared
# with another worktree whose editable install points elsewhere.
export PYTHONPATH := $(CURDIR)/python$(if $(PYTHONPATH),:$(PYTHONPATH))
CARACAL := .venv/bin/caracal

.PHONY: all setup build build-openmpi build-mpich demo test test-c test-python bench clean help \
        test-asan build-asan-openmpi build-asan-mpich fuzz fuzz-regress

all: build

help:
	@echo "make demo   install what is missing, build, profile examples/asp on 2 ranks, print the report"
	@echo "make test   install what is missing, build for Open MPI and MPICH, run every test"
	@echo "make build [MPI=openmpi|mpich]   build only (library in build/lib, programs in build/bin)"

setup:
	@bash scripts/setup.sh

build: setup build-$(MPI)

build-openmpi build-mpich: build-%: setup
	@cmake -S . -B $(BUILD_$*) -DCARACAL_MPI=$* -DCMAKE_BUILD_TYPE=RelWithDebInfo >$(BUILD_$*).cmake.log 2>&1 || { cat $(BUILD_$*).cmake.log; exit 1; }
	@cmake --build $(BUILD_$*) -j $(JOBS) -- --no-print-directory >$(BUILD_$*).build.log 2>&1 || \
	  { grep -vE '^\[ *[0-9]+%\]|(Entering|Leaving) directory' $(BUILD_$*).build.log; echo "build failed for $* (log: $(BUILD_$*).build.log)" >&2; exit 1; }
	@echo "built $* in $(BUILD_$*)/ (library $(BUILD_$*)/lib/libcaracal.so)"

demo: build-openmpi
	@mkdir -p demo-out
	$(CARACAL) run -n 2 --profile demo-out/asp-profile.json --force -- build/bin/asp 512
	$(CARACAL) report demo-out/asp-profile.json --html demo-out/asp-report.html --plots demo-out/plots

test: build-openmpi build-mpich
	@$(MAKE) --no-print-directory test-c test-python

test-c:
	cd build && ctest --output-on-failure --timeout 300
	cd build-mpich && ctest --output-on-failure --timeout 300

test-python:
	.venv/bin/python -m pytest -q tests/python

bench: build-openmpi build-mpich
	.venv/bin/python bench/profiler_overhead.py --mpi openmpi
	.venv/bin/python bench/profiler_overhead.py --mpi mpich

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

clean:
	rm -rf build build-mpich build-asan-openmpi build-asan-mpich build-fuzz build*.log
