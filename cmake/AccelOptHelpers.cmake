# Thin wrappers that keep options uniform across targets (in the style of absl_cc_library).
#
#   accelopt_cc_library(NAME n SRCS ... DEPS ...)   static library `n`, include root = repo root
#   accelopt_cc_binary(NAME n OUTPUT_NAME o SRCS ... DEPS ...)
#   accelopt_cc_test(NAME n SRCS ... DEPS ...)      one gtest binary, discovered before each test run; links
#                                                   accelopt_scratch_dir (libs/testing/scratch_dir.h)
#   accelopt_cc_benchmark(NAME n SRCS ... DEPS ...) Google Benchmark binary (not run by ctest)

function(_accelopt_common target)
  target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR})
  target_compile_options(${target} PRIVATE ${ACCELOPT_WARNING_FLAGS})
endfunction()

function(accelopt_cc_library)
  cmake_parse_arguments(A "" "NAME" "SRCS;DEPS" ${ARGN})
  add_library(${A_NAME} STATIC ${A_SRCS})
  _accelopt_common(${A_NAME})
  target_link_libraries(${A_NAME} PUBLIC ${A_DEPS})
endfunction()

function(accelopt_cc_binary)
  cmake_parse_arguments(A "" "NAME;OUTPUT_NAME" "SRCS;DEPS" ${ARGN})
  add_executable(${A_NAME} ${A_SRCS})
  _accelopt_common(${A_NAME})
  target_link_libraries(${A_NAME} PRIVATE ${A_DEPS})
  if(A_OUTPUT_NAME)
    set_target_properties(${A_NAME} PROPERTIES OUTPUT_NAME ${A_OUTPUT_NAME})
  endif()
  set_target_properties(${A_NAME} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bin)
endfunction()

function(accelopt_cc_test)
  if(NOT ACCELOPT_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(A "" "NAME" "SRCS;DEPS" ${ARGN})
  add_executable(${A_NAME} ${A_SRCS})
  _accelopt_common(${A_NAME})
  target_link_libraries(${A_NAME} PRIVATE ${A_DEPS} accelopt_scratch_dir GTest::gmock GTest::gtest_main)
  target_compile_definitions(${A_NAME} PRIVATE
    ACCELOPT_SOURCE_DIR="${PROJECT_SOURCE_DIR}" ACCELOPT_BINARY_DIR="${PROJECT_BINARY_DIR}")
  gtest_discover_tests(${A_NAME} DISCOVERY_MODE PRE_TEST
    PROPERTIES ENVIRONMENT "ACCELOPT_BIN_DIR=${PROJECT_BINARY_DIR}/bin")
endfunction()

function(accelopt_cc_benchmark)
  if(NOT ACCELOPT_BUILD_BENCHMARKS)
    return()
  endif()
  cmake_parse_arguments(A "" "NAME" "SRCS;DEPS" ${ARGN})
  add_executable(${A_NAME} EXCLUDE_FROM_ALL ${A_SRCS})
  _accelopt_common(${A_NAME})
  target_link_libraries(${A_NAME} PRIVATE ${A_DEPS} benchmark::benchmark)
  set_target_properties(${A_NAME} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bench)
endfunction()
