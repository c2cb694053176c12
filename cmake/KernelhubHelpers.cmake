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
  add_library(kernelhub::${name} ALIAS kh_${name})
endfunction()
