# specsim_test(NAME SOURCES... LIBS ...): a GoogleTest binary discovered by CTest. Test code is
# compiled at -O1 (after the build type's flags, so it wins): it mostly calls the libraries, which
# keep the build's optimisation, and -O1 compiles it in 30% less time than -O2. Not -O0: the
# linker keeps one copy of each inline function, often the test object's, and unoptimised copies
# of the containers' and protobuf's inline code made whole tests 1.4x to 12x slower.
function(specsim_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  # Unity build: the target's test files compiled 8 to a translation unit, so that gtest's,
  # protobuf's and the standard library's headers are parsed once per batch, not once per file.
  set_target_properties(${name} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 8)
  target_compile_options(${name} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-O1>)
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE SPECSIM_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  include(GoogleTest)
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 600)
endfunction()

# Warnings for our own targets.
function(specsim_warnings target)
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wno-unused-parameter>)
endfunction()
