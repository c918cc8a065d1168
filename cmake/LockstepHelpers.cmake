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

# lockstep_add_tests(layer libs...): one test executable per
# tests/<layer>/*_test.cc, discovered by CTest.
function(lockstep_add_tests layer)
  file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/test_tmp)
  file(GLOB tests CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/${layer}/*_test.cc)
  foreach(t ${tests})
    get_filename_component(n ${t} NAME_WE)
    # Tests that read shared/fixtures are left out (and said so) where the
    # fixtures are absent, e.g. in a clone without ../shared beside it.
    file(READ ${t} content)
    string(FIND "${content}" "LOCKSTEP_FIXTURES_DIR" uses_fixtures)
    if(uses_fixtures GREATER -1 AND NOT EXISTS "${LOCKSTEP_FIXTURES_DIR}/msprobe")
      message(STATUS "lockstep: ${n} skipped: no fixtures at ${LOCKSTEP_FIXTURES_DIR}")
      continue()
    endif()
    add_executable(${n} ${t})
    target_link_libraries(${n} PRIVATE ${ARGN} GTest::gtest GTest::gtest_main)
    target_include_directories(${n} PRIVATE ${CMAKE_SOURCE_DIR}/tests ${CMAKE_SOURCE_DIR}/src)
    target_compile_definitions(${n} PRIVATE
      LOCKSTEP_SOURCE_DIR="${CMAKE_SOURCE_DIR}"
      LOCKSTEP_FIXTURES_DIR="${LOCKSTEP_FIXTURES_DIR}"
      LOCKSTEP_BIN_DIR="${CMAKE_BINARY_DIR}/bin")
    if(layer STREQUAL "torch")
      target_compile_definitions(${n} PRIVATE NDEBUG)
    endif()
    # ::testing::TempDir() is the build's own test_tmp/ (not /tmp/), so that
    # the tests of two checkouts on one machine never share a scratch path.
    gtest_discover_tests(${n} DISCOVERY_TIMEOUT 60 PROPERTIES LABELS ${layer}
                         ENVIRONMENT "TEST_TMPDIR=${CMAKE_BINARY_DIR}/test_tmp/")
  endforeach()
endfunction()
