# One CMake library per component, tests beside it.
#
#   commlens_library(NAME model SOURCES a.cc b.cc DEPS commlens_common)
#     -> static library commlens_model, alias commlens::model, include root src/
#   commlens_test(NAME model_test SOURCES x_test.cc DEPS commlens::model [LABELS gpu])
#     -> GoogleTest executable registered with CTest; label "gpu" marks tests that need
#        a GPU (they exit with code 77 = skipped when none is present).

set(COMMLENS_WARNINGS -Wall -Wextra -Wno-unused-parameter)

function(commlens_library)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(commlens_${ARG_NAME} STATIC ${ARG_SOURCES})
  add_library(commlens::${ARG_NAME} ALIAS commlens_${ARG_NAME})
  target_include_directories(commlens_${ARG_NAME} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_compile_options(commlens_${ARG_NAME} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:${COMMLENS_WARNINGS}>)
  target_link_libraries(commlens_${ARG_NAME} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
endfunction()

function(commlens_test)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${ARG_NAME} ${ARG_SOURCES})
  target_include_directories(${ARG_NAME} PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/tests)
  target_compile_options(${ARG_NAME} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:${COMMLENS_WARNINGS}>)
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main)
  target_compile_definitions(${ARG_NAME} PRIVATE
    COMMLENS_SOURCE_DIR="${PROJECT_SOURCE_DIR}" COMMLENS_BINARY_DIR="${PROJECT_BINARY_DIR}")
  add_test(NAME ${ARG_NAME} COMMAND ${ARG_NAME})
  set_tests_properties(${ARG_NAME} PROPERTIES SKIP_RETURN_CODE 77)
  if(ARG_LABELS)
    set_tests_properties(${ARG_NAME} PROPERTIES LABELS "${ARG_LABELS}")
  endif()
endfunction()
