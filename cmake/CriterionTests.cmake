# Register every test of a Criterion executable as its own ctest test,
# named SUITE.TEST, so ctest shows each one (and can run them in parallel).
# The list is read from `EXE --list` after each build, the way
# gtest_discover_tests works.
function(redlock_add_criterion_tests target)
  cmake_parse_arguments(ARG "" "TIMEOUT" "LABELS" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 120)
  endif()
  set(include_file "${CMAKE_CURRENT_BINARY_DIR}/${target}_tests.cmake")
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND "${CMAKE_COMMAND}"
      -D "EXE=$<TARGET_FILE:${target}>"
      -D "OUT=${include_file}"
      -D "TIMEOUT=${ARG_TIMEOUT}"
      -D "LABELS=${ARG_LABELS}"
      -P "${PROJECT_SOURCE_DIR}/cmake/CriterionDiscover.cmake"
    VERBATIM)
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${include_file}")
endfunction()
