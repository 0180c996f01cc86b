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

.PHONY: all setup build build-openmpi build-mpich demo test test-c test-python bench install dist clean help

all: build

help:
	@echo "make demo   install what is missing, build, profile examples/asp on 2 ranks, print the report"
	@echo "make test   install what is missing, build for Open MPI and MPICH, run every test"
	@echo "make build [MPI=openmpi|mpich]   build only (library in build/lib, programs in build/bin)"
	@echo "make install PREFIX=DIR [MPI=...]   build, then install into DIR (docs/install.md)"
	@echo "make dist   source tarball dist/caracal-VERSION.tar.gz"

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

# One prefix per MPI library: make install PREFIX=/opt/caracal/openmpi; make install MPI=mpich PREFIX=...
PREFIX ?= /usr/local
install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

dist:
	@bash scripts/dist.sh

clean:
	rm -rf build build-mpich build*.log
