# SPDX-License-Identifier: Apache-2.0
# kh_embed_files(TARGET NAMESPACE BASE_DIR FILES...): compiles files into the target as a
# table of {relative path, bytes}, so templates and policy data stay real files in the repo
# while the binaries need nothing at run time.
set(_KH_EMBED_SCRIPT "${CMAKE_CURRENT_LIST_DIR}/embed_generate.cmake")

function(kh_embed_files target)
  cmake_parse_arguments(ARG "" "NAMESPACE;BASE_DIR;FUNCTION" "FILES" ${ARGN})
  set(out "${CMAKE_CURRENT_BINARY_DIR}/${target}_${ARG_FUNCTION}_embedded.cpp")
  set(list_file "${CMAKE_CURRENT_BINARY_DIR}/${target}_${ARG_FUNCTION}_embedded.list")
  string(REPLACE ";" "\n" file_lines "${ARG_FILES}")
  file(WRITE "${list_file}.tmp" "${file_lines}")
  file(COPY_FILE "${list_file}.tmp" "${list_file}" ONLY_IF_DIFFERENT)
  set(abs_files "")
  foreach(f IN LISTS ARG_FILES)
    list(APPEND abs_files "${ARG_BASE_DIR}/${f}")
  endforeach()
  add_custom_command(
    OUTPUT "${out}"
    COMMAND ${CMAKE_COMMAND} -DBASE_DIR=${ARG_BASE_DIR} -DLIST_FILE=${list_file}
            -DOUTPUT=${out} -DNAMESPACE=${ARG_NAMESPACE} -DFUNCTION=${ARG_FUNCTION}
            -P "${_KH_EMBED_SCRIPT}"
    DEPENDS ${abs_files} "${list_file}" "${_KH_EMBED_SCRIPT}"
    COMMENT "Embedding ${ARG_FUNCTION} files"
    VERBATIM)
  target_sources(${target} PRIVATE "${out}")
  # Each generated file names its arrays k_data_N and k_files: kept out of unity batches.
  set_source_files_properties("${out}" PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
endfunction()
