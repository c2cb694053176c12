# SPDX-License-Identifier: Apache-2.0
# kh_add_layer(NAME SOURCES ... DEPS ...): one static library per layer, includes rooted at src/.
function(kh_add_layer name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(kh_${name} STATIC ${ARG_SOURCES})
  target_include_directories(kh_${name} PUBLIC "${PROJECT_SOURCE_DIR}/src")
  target_link_libraries(kh_${name} PUBLIC ${ARG_DEPS})
  target_compile_options(kh_${name} PRIVATE -Wall -Wextra -Wpedantic -Werror=return-type)
  if(KERNELHUB_WERROR)
    # Our code builds warning-free (issue 13 item 12); CI keeps it so.
    target_compile_options(kh_${name} PRIVATE -Werror)
  endif()
  if(KERNELHUB_UNITY_BUILD)
    # Most of a layer's compile time is the same header-only libraries (CLI11, Boost.Beast,
    # nlohmann-json) generated again in every file: CLI11's inline code alone is ~6 s of a
    # 10 s command file at -O2. Compiling a dozen files as one shares that work (the cli layer:
    # ~440 CPU-seconds cold, ~95 as a unity build).
    set_target_properties(kh_${name} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 12)
  endif()
  add_library(kernelhub::${name} ALIAS kh_${name})
endfunction()
