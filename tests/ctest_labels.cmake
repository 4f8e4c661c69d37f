# Writes the ctest labels of attn_tests' test cases (run after each build of attn_tests, as
# Catch2's own test discovery is; tests/CMakeLists.txt includes the result in ctest's tests):
#   a test case under tests/apps/         -> programs (it runs the programs)
#   a test case under tests/<folder>/     -> unit;<folder>
#   a test case directly under tests/     -> unit;meta
#   a test case tagged [slow], [mpi], [serve] or [tools] -> also slow, mpi, serve, tools (-LE slow
#   leaves the slow ones out of a loop; [tools]: it checks a tool of tools/ as well)
# Usage: cmake -D TEST_EXECUTABLE=<attn_tests> -D LABELS_FILE=<out.cmake> -P ctest_labels.cmake
cmake_policy(VERSION 3.16)
set(label_tags slow mpi serve tools)

# The test cases' names, one a line; a name holds no ';' (tests/test_names.cpp).
function(list_test_cases out)
  execute_process(COMMAND "${TEST_EXECUTABLE}" ${ARGN} --list-test-names-only
                  OUTPUT_VARIABLE listing RESULT_VARIABLE result)
  # Catch2 exits with the number of test cases listed; anything else is a crash.
  if(NOT result MATCHES "^[0-9]+$")
    message(FATAL_ERROR "${TEST_EXECUTABLE} --list-test-names-only failed: ${result}")
  endif()
  string(REGEX REPLACE "\n$" "" listing "${listing}")
  string(REPLACE "\n" ";" listing "${listing}")
  set(${out} "${listing}" PARENT_SCOPE)
endfunction()

foreach(tag IN LISTS label_tags)
  list_test_cases(tagged_${tag} "[${tag}]")
endforeach()

# With --verbosity high each line is "<name>\t@<source file>:<line>".
list_test_cases(located --verbosity high)
set(script "")
foreach(line IN LISTS located)
  if(NOT line MATCHES "^(.+)\t@(.+):[0-9]+$")
    # A ';' in a test case's name splits its line here, as it splits any CMake list.
    message(FATAL_ERROR "unexpected line from ${TEST_EXECUTABLE} --list-test-names-only: ${line} "
                        "(a test case's name may not hold ';')")
  endif()
  set(name "${CMAKE_MATCH_1}")
  set(source "${CMAKE_MATCH_2}")
  # The folder under the last "tests/" of the path (absolute, or relative under ccache's base_dir).
  if(source MATCHES "(^|/)tests/apps/[^/]+$")
    set(labels programs)
  elseif(source MATCHES "(^|/)tests/([^/]+)/[^/]+$")
    set(labels unit ${CMAKE_MATCH_2})
  elseif(source MATCHES "(^|/)tests/[^/]+$")
    set(labels unit meta)
  else()
    message(FATAL_ERROR "test case \"${name}\" is in ${source}, not under tests/")
  endif()
  foreach(tag IN LISTS label_tags)
    if("${name}" IN_LIST tagged_${tag})
      list(APPEND labels ${tag})
    endif()
  endforeach()
  list(REMOVE_DUPLICATES labels)
  string(APPEND script "set_tests_properties([==[${name}]==] PROPERTIES LABELS \"${labels}\")\n")
endforeach()
file(WRITE "${LABELS_FILE}" "${script}")
