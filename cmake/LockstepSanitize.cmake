# -DLOCKSTEP_SANITIZE=ON (docs/fuzzing.md, "The whole suite under
# ASan/UBSan"): every target of the build, LibTorch's layer, the Python
# library and the tests included, compiled and linked with AddressSanitizer
# and UndefinedBehaviorSanitizer, gcc or clang, no libFuzzer. LibTorch itself
# stays uninstrumented (Debian's libtorch 1.13).
#
# UBSan halts on its first report (-fno-sanitize-recover), except the one
# check that fuzz/ubsan.supp silences in RapidJSON's headers: a suppression
# only applies to a recoverable check, so pointer-overflow stays recoverable
# and halt_on_error=1 in UBSAN_OPTIONS makes every unsuppressed report of it
# fatal too.
if(NOT CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  message(FATAL_ERROR "LOCKSTEP_SANITIZE=ON | needs gcc or clang, not "
          "${CMAKE_CXX_COMPILER_ID}")
endif()
if(LOCKSTEP_LIBFUZZER)
  message(FATAL_ERROR "LOCKSTEP_SANITIZE=ON | and LOCKSTEP_LIBFUZZER=ON: "
          "the libFuzzer build is already sanitized; choose one")
endif()
set(LOCKSTEP_SANITIZERS address,undefined)
set(LOCKSTEP_SANITIZE_FLAGS -fsanitize=${LOCKSTEP_SANITIZERS}
    -fno-omit-frame-pointer -fno-sanitize-recover=all
    -fsanitize-recover=pointer-overflow)
set(LOCKSTEP_SANITIZE_LINK -fsanitize=${LOCKSTEP_SANITIZERS})
if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  # One shared runtime for the programs and liblockstep_py.so (gcc's
  # default), so that Python can preload it.
  list(APPEND LOCKSTEP_SANITIZE_FLAGS -gline-tables-only)
  list(APPEND LOCKSTEP_SANITIZE_LINK -shared-libsan)
  set(asan_runtime libclang_rt.asan-x86_64.so)
else()
  list(APPEND LOCKSTEP_SANITIZE_FLAGS -g1)  # line numbers in the reports
  set(asan_runtime libasan.so)
endif()
add_compile_options(${LOCKSTEP_SANITIZE_FLAGS})
add_link_options(${LOCKSTEP_SANITIZE_LINK})

# The runtime the Python tests preload into /usr/bin/python3 (the
# interpreter is not built with ASan; the runtime must come first).
execute_process(
  COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=${asan_runtime}
  OUTPUT_VARIABLE LOCKSTEP_ASAN_RUNTIME OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT IS_ABSOLUTE "${LOCKSTEP_ASAN_RUNTIME}" OR
   NOT EXISTS "${LOCKSTEP_ASAN_RUNTIME}")
  message(FATAL_ERROR "LOCKSTEP_SANITIZE=ON | ${asan_runtime} not found "
          "by ${CMAKE_CXX_COMPILER} -print-file-name")
endif()
# And the C++ library: the runtime finds the __cxa_throw it intercepts only
# in a library loaded before it (python3 does not link libstdc++; without it
# the first C++ exception stops the process with "CHECK failed ...
# real___cxa_throw").
execute_process(
  COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libstdc++.so.6
  OUTPUT_VARIABLE LOCKSTEP_CXX_RUNTIME OUTPUT_STRIP_TRAILING_WHITESPACE)
get_filename_component(LOCKSTEP_CXX_RUNTIME "${LOCKSTEP_CXX_RUNTIME}" REALPATH)
if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  # The programs find the shared runtime where the compiler keeps it.
  get_filename_component(dir ${LOCKSTEP_ASAN_RUNTIME} DIRECTORY)
  add_link_options("LINKER:-rpath,${dir}")
endif()

# What every test of this build runs with (tests/CMakeLists.txt,
# fuzz/CMakeLists.txt). LibTorch allocates at exit what it never frees, by
# design: no leak detection.
set(LOCKSTEP_ASAN_OPTIONS
    "detect_leaks=0:halt_on_error=1:abort_on_error=0:print_stacktrace=1")
set(LOCKSTEP_UBSAN_OPTIONS
    "halt_on_error=1:print_stacktrace=1:suppressions=${CMAKE_SOURCE_DIR}/fuzz/ubsan.supp")
# -DLOCKSTEP_SANITIZE_LOG=<dir>: every report goes to <dir>/asan.<pid> or
# <dir>/ubsan.<pid> instead of stderr, those of the programs a test runs and
# whose output it keeps to itself included; an empty <dir> after ctest is a
# clean run.
set(LOCKSTEP_SANITIZE_LOG "" CACHE PATH
    "Directory for the sanitizer reports of the tests (empty: stderr)")
if(LOCKSTEP_SANITIZE_LOG)
  file(MAKE_DIRECTORY ${LOCKSTEP_SANITIZE_LOG})
  string(APPEND LOCKSTEP_ASAN_OPTIONS ":log_path=${LOCKSTEP_SANITIZE_LOG}/asan")
  string(APPEND LOCKSTEP_UBSAN_OPTIONS ":log_path=${LOCKSTEP_SANITIZE_LOG}/ubsan")
endif()
set(LOCKSTEP_SANITIZE_TEST_ENV
    "ASAN_OPTIONS=${LOCKSTEP_ASAN_OPTIONS}"
    "UBSAN_OPTIONS=${LOCKSTEP_UBSAN_OPTIONS}")
# And of the tests that run /usr/bin/python3 with liblockstep_py.so
# (tests/CMakeLists.txt): an interpreter not built with ASan needs the
# runtime loaded before any library. Only theirs: preloaded into every
# program a test runs, it stops others (chromium) from starting.
set(LOCKSTEP_SANITIZE_PYTHON_ENV
    "LD_PRELOAD=${LOCKSTEP_ASAN_RUNTIME} ${LOCKSTEP_CXX_RUNTIME}")
message(STATUS "lockstep: ASan/UBSan build (LOCKSTEP_SANITIZE; runtime "
        "${LOCKSTEP_ASAN_RUNTIME})")
