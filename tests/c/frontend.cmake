# The fuzzers' corpora replayed through their harnesses in the ordinary suite
# (tests/c/fuzz_replay.c, fuzz/, docs/fuzzing.md). No MPI launch: the readers are pure C;
# the rules harness uses libcaracal's selection without MPI_Init (as before MPI_Init).
# Each target's corpus is one test.
set(_fz ${PROJECT_SOURCE_DIR}/fuzz)
add_executable(fuzz_replay fuzz_replay.c ${_fz}/fuzz_json.c ${_fz}/fuzz_topology.c ${_fz}/fuzz_qaplib.c
               ${_fz}/fuzz_rules.c)  # the readers themselves come from libcaracal
target_include_directories(fuzz_replay PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/src/core)
target_link_libraries(fuzz_replay PRIVATE caracal m)
foreach(t json topology qaplib rules)
  set_source_files_properties(${_fz}/fuzz_${t}.c PROPERTIES COMPILE_DEFINITIONS
    "LLVMFuzzerTestOneInput=caracal_fuzz_${t};LLVMFuzzerInitialize=caracal_fuzz_${t}_init")
  add_test(NAME fuzz_corpus_${t} COMMAND fuzz_replay ${t} ${_fz}/corpus/${t})
endforeach()
