# lockstep_add_layer(name): a static library lockstep_<name> from
# src/<name>/*.cc with the public headers in include/.
function(lockstep_add_layer name)
  file(GLOB srcs CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/${name}/*.cc)
  add_library(lockstep_${name} STATIC ${srcs})
  # Unity build: a batch of sources per translation unit parses the shared
  # headers (the standard library, RapidJSON, LibTorch) once per batch,
  # which halves a fresh build on two cores.
  set_target_properties(lockstep_${name} PROPERTIES UNITY_BUILD ON
                                                    UNITY_BUILD_BATCH_SIZE 8)
  target_include_directories(lockstep_${name} PUBLIC ${CMAKE_SOURCE_DIR}/include
                                            PRIVATE ${CMAKE_SOURCE_DIR}/src)
endfunction()

# The tests' compile flags, shared by every test executable and by the two
# targets that hold their precompiled headers (a precompiled header is used
# only where flags and macros match). Tests compile at -O1: their own code
# is glue around the libraries (built at -O3), and the headers they parse
# (GoogleTest, ATen) dominate; with -O1 and the shared precompiled headers a
# fresh build of the tests takes about half the time (DEVELOPERS.md).
function(lockstep_test_flags t)
  target_include_directories(${t} PRIVATE ${CMAKE_SOURCE_DIR}/tests ${CMAKE_SOURCE_DIR}/src)
  target_compile_definitions(${t} PRIVATE
    LOCKSTEP_SOURCE_DIR="${CMAKE_SOURCE_DIR}"
    LOCKSTEP_FIXTURES_DIR="${LOCKSTEP_FIXTURES_DIR}"
    LOCKSTEP_BIN_DIR="${CMAKE_BINARY_DIR}/bin")
  target_compile_options(${t} PRIVATE -O1)
endfunction()

# lockstep_test_pch(name HEADERS headers... LIBS libs... [DEFINES defs...]):
# a stub program whose only job is the precompiled header that tests reuse
# (REUSE_FROM): a program, because a library's objects compile with -fPIC
# and the tests' with -fPIE, and GCC refuses a header built with the other.
function(lockstep_test_pch name)
  cmake_parse_arguments(P "" "" "HEADERS;LIBS;DEFINES" ${ARGN})
  set(stub ${CMAKE_BINARY_DIR}/${name}.cc)
  if(NOT EXISTS ${stub})
    file(WRITE ${stub} "// the precompiled header's own translation unit\n")
  endif()
  add_executable(${name} ${stub})
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/pch)
  target_link_libraries(${name} PRIVATE ${P_LIBS} GTest::gtest GTest::gtest_main)
  lockstep_test_flags(${name})
  if(P_DEFINES)
    target_compile_definitions(${name} PRIVATE ${P_DEFINES})
  endif()
  target_precompile_headers(${name} PRIVATE ${P_HEADERS})
endfunction()

# lockstep_add_tests(layer libs...): one test executable per
# tests/<layer>/*_test.cc, discovered by CTest, labelled with the layer, and
# also `torch` when it exercises LibTorch: the torch layer's tests, and those
# named in LOCKSTEP_TORCH_PROGRAM_TESTS (tests of programs that link it:
# lenet, lockstep-torch). With LOCKSTEP_TESTS_TORCH_ONLY only those are
# built (the torch 2.x build of scripts/test.sh: the other layers' code and
# tests do not depend on the torch version).
function(lockstep_add_tests layer)
  file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/test_tmp)
  set(pch lockstep_test_pch)
  if(layer STREQUAL "torch")
    set(pch lockstep_torch_test_pch)
  endif()
  file(GLOB tests CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/${layer}/*_test.cc)
  foreach(t ${tests})
    get_filename_component(n ${t} NAME_WE)
    set(labels ${layer})
    if(layer STREQUAL "torch" OR n IN_LIST LOCKSTEP_TORCH_PROGRAM_TESTS)
      list(APPEND labels torch)
    elseif(LOCKSTEP_TESTS_TORCH_ONLY)
      continue()
    endif()
    # Tests that read the fixtures are left out (and said so) where
    # LOCKSTEP_FIXTURES_DIR names no copy of them.
    file(READ ${t} content)
    string(FIND "${content}" "LOCKSTEP_FIXTURES_DIR" uses_fixtures)
    if(uses_fixtures GREATER -1 AND NOT EXISTS "${LOCKSTEP_FIXTURES_DIR}/msprobe")
      message(STATUS "lockstep: ${n} skipped: no fixtures at ${LOCKSTEP_FIXTURES_DIR}")
      # Listed in tests_left_out.txt too, which scripts/test.sh prints.
      set_property(GLOBAL APPEND PROPERTY LOCKSTEP_TESTS_LEFT_OUT ${n})
      continue()
    endif()
    add_executable(${n} ${t})
    target_link_libraries(${n} PRIVATE ${ARGN} GTest::gtest GTest::gtest_main)
    lockstep_test_flags(${n})
    if(layer STREQUAL "torch")  # as lockstep_torch: LibTorch asserts otherwise
      target_compile_definitions(${n} PRIVATE NDEBUG)
    endif()
    if(TARGET ${pch})
      target_precompile_headers(${n} REUSE_FROM ${pch})
    endif()
    # A test program that drives headless Chromium (report/chromium_page.h)
    # is one CTest test: its cases share the pages their suite loads once
    # (a test per case loaded them again for each, six browsers at a time),
    # and the lock keeps two of them from starting browsers at once, which
    # on two cores pushed page loads past their deadlines (CI of stop 39).
    string(FIND "${content}" "report/chromium_page.h" uses_browser)
    if(uses_browser GREATER -1)
      add_test(NAME ${n} COMMAND ${n})
      set_tests_properties(${n} PROPERTIES LABELS "${labels};browser"
                                           RESOURCE_LOCK chromium)
      set(${n}_TESTS ${n})
    else()
      gtest_discover_tests(${n} DISCOVERY_TIMEOUT 60 PROPERTIES LABELS "${labels}")
    endif()
    # The environment of the tests found: ::testing::TempDir() is the
    # build's own test_tmp/ (not /tmp/), so that the tests of two checkouts
    # on one machine never share a scratch path; and the sanitizer options
    # of a LOCKSTEP_SANITIZE build (with the runtime preloaded into Python
    # for LOCKSTEP_PYTHON_PROBE_TESTS). Set by a CTest script included
    # after the one that adds the tests: a list given to
    # gtest_discover_tests's PROPERTIES keeps only its first element
    # (CMake 3.25).
    set(env "TEST_TMPDIR=${CMAKE_BINARY_DIR}/test_tmp/" ${LOCKSTEP_SANITIZE_TEST_ENV})
    if(n IN_LIST LOCKSTEP_PYTHON_PROBE_TESTS)
      list(APPEND env ${LOCKSTEP_SANITIZE_PYTHON_ENV})
    endif()
    if(uses_browser GREATER -1)
      set_tests_properties(${n} PROPERTIES ENVIRONMENT "${env}")
      continue()
    endif()
    set(script ${CMAKE_CURRENT_BINARY_DIR}/${n}_environment.cmake)
    file(WRITE ${script}
         "if(${n}_TESTS)\n"
         "  set_tests_properties(\${${n}_TESTS} PROPERTIES ENVIRONMENT [==[${env}]==])\n"
         "endif()\n")
    set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${script})
  endforeach()
endfunction()

# lockstep_sanitize_tests(): in a LOCKSTEP_SANITIZE build, the sanitizer
# options (LOCKSTEP_SANITIZE_TEST_ENV) added to the environment of every test
# that add_test made in the calling directory so far.
function(lockstep_sanitize_tests)
  get_property(tests DIRECTORY PROPERTY TESTS)
  if(LOCKSTEP_SANITIZE_TEST_ENV AND tests)
    set_property(TEST ${tests} APPEND PROPERTY ENVIRONMENT ${LOCKSTEP_SANITIZE_TEST_ENV})
  endif()
endfunction()
