# -DLOCKSTEP_LIBFUZZER=ON (docs/fuzzing.md): a clang build in which every
# target is compiled with libFuzzer's coverage instrumentation and ASan +
# UBSan, so that coverage reaches the libraries the fuzz targets link and a
# sanitizer report anywhere is a finding. fuzz/CMakeLists.txt then links each
# fuzz/<name>_fuzz.cc a second time, as <name>_fuzz_libfuzzer, with
# -fsanitize=fuzzer (libFuzzer's main). UBSan stays recoverable here so that
# fuzz/ubsan.supp can silence RapidJSON's headers; halt_on_error=1 in
# UBSAN_OPTIONS makes every other report fatal.
if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "LOCKSTEP_LIBFUZZER=ON | needs clang, not "
          "${CMAKE_CXX_COMPILER_ID}. Note: configure with "
          "-DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++")
endif()
set(LOCKSTEP_SANITIZERS address,undefined)
add_compile_options(-fsanitize=fuzzer-no-link,${LOCKSTEP_SANITIZERS}
                    -fno-omit-frame-pointer -gline-tables-only)
add_link_options(-fsanitize=${LOCKSTEP_SANITIZERS})
# What the fuzz binaries and their tests run with (docs/fuzzing.md).
set(LOCKSTEP_UBSAN_OPTIONS
    "halt_on_error=1:print_stacktrace=1:suppressions=${CMAKE_SOURCE_DIR}/fuzz/ubsan.supp")
message(STATUS "lockstep: libFuzzer + ASan/UBSan build (fuzz/*_libfuzzer)")
