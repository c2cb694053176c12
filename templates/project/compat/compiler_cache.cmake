# CMake's compiler detection, once per toolchain instead of once per build tree. A fresh build
# tree compiles CMake's compiler-id source and its ABI source with every language's compiler:
# with nvcc that is two device compiles, about 3 s of a cuda variant's configure (of 4 s,
# profiled with `cmake --profiling-format=google-trace`), and 0.3 s with g++. What they find
# is written to CMakeFiles/<cmake version>/CMake<LANG>Compiler.cmake, which CMake loads instead
# of detecting again when it is there, as in a build tree configured before. This file keeps
# those files, and the results of the project's compiler checks, in a folder kernel-builder
# passes (-DKERNELHUB_COMPILER_CACHE, beside the private libstdc++ archives), keyed by
# everything that can change what detection finds: CMake's version and generator, the
# compiler variables and environment CMake reads, PATH, and each compiler by real path, size
# and mtime; and seeds a fresh build tree from it before project().
include_guard(GLOBAL)

# The key, or "" when a compiler cannot be named (then nothing is cached).
function(kernelhub_compiler_cache_key languages out)
  set(key "${CMAKE_VERSION}\n${CMAKE_GENERATOR}\n${languages}\n")
  foreach(variable CMAKE_CXX_COMPILER CMAKE_CUDA_COMPILER CMAKE_CUDA_HOST_COMPILER
      CMAKE_CXX_FLAGS CMAKE_CUDA_FLAGS CMAKE_EXE_LINKER_FLAGS CMAKE_SHARED_LINKER_FLAGS
      CMAKE_MODULE_LINKER_FLAGS CMAKE_TOOLCHAIN_FILE CMAKE_SYSROOT CMAKE_BUILD_TYPE)
    string(APPEND key "${variable}=${${variable}}\n")
  endforeach()
  foreach(variable CC CXX CXXFLAGS CUDACXX CUDAHOSTCXX CUDAFLAGS LDFLAGS CUDA_PATH PATH)
    string(APPEND key "ENV ${variable}=$ENV{${variable}}\n")
  endforeach()
  if(CMAKE_TOOLCHAIN_FILE AND EXISTS "${CMAKE_TOOLCHAIN_FILE}")
    file(SHA256 "${CMAKE_TOOLCHAIN_FILE}" toolchain)
    string(APPEND key "toolchain file ${toolchain}\n")
  endif()
  # The programs themselves: the C++ compiler CMake picks (CMAKE_CXX_COMPILER, else $CXX, else
  # the first of its names in PATH) and nvcc, so an upgrade in place makes a new key.
  set(programs "")
  if(CMAKE_CXX_COMPILER)
    list(APPEND programs "${CMAKE_CXX_COMPILER}")
  elseif(DEFINED ENV{CXX})
    separate_arguments(cxx UNIX_COMMAND "$ENV{CXX}")
    list(GET cxx 0 cxx)
    list(APPEND programs "${cxx}")
  else()
    find_program(cxx NAMES c++ g++ clang++ NO_CACHE)
    list(APPEND programs "${cxx}")
  endif()
  if("CUDA" IN_LIST languages)
    list(APPEND programs "${CMAKE_CUDA_COMPILER}")
  endif()
  foreach(program IN LISTS programs)
    if(NOT IS_ABSOLUTE "${program}")
      find_program(found "${program}" NO_CACHE)
      set(program "${found}")
    endif()
    get_filename_component(real "${program}" REALPATH)
    if(NOT program OR NOT EXISTS "${real}" OR IS_DIRECTORY "${real}")
      set(${out} "" PARENT_SCOPE)
      return()
    endif()
    file(SIZE "${real}" size)
    file(TIMESTAMP "${real}" time "%s" UTC)
    string(APPEND key "${program} ${real} ${size} ${time}\n")
  endforeach()
  string(SHA256 key "${key}")
  set(${out} "${key}" PARENT_SCOPE)
endfunction()

# Before project(): the compiler files and check results of this toolchain into a fresh build
# tree, when the cache has them. `checks` names the cache variables of the compiler checks.
macro(kernelhub_compiler_cache_restore languages checks)
  set(kernelhub_compiler_cache_entry "")
  set(kernelhub_compiler_cache_languages "${languages}")
  set(kernelhub_compiler_cache_checks "${checks}")
  set(kernelhub_compiler_cache_restored FALSE)
  set(kernelhub_platform_dir "${CMAKE_BINARY_DIR}/CMakeFiles/${CMAKE_VERSION}")
  if(KERNELHUB_COMPILER_CACHE AND NOT EXISTS "${kernelhub_platform_dir}/CMakeCXXCompiler.cmake")
    kernelhub_compiler_cache_key("${kernelhub_compiler_cache_languages}"
      kernelhub_compiler_cache_key_value)
    if(kernelhub_compiler_cache_key_value)
      set(kernelhub_compiler_cache_entry
        "${KERNELHUB_COMPILER_CACHE}/compilers-${kernelhub_compiler_cache_key_value}")
      if(EXISTS "${kernelhub_compiler_cache_entry}/checks.cmake")
        # Copied into the build tree, checks.cmake too: what the configure includes becomes a
        # dependency of build.ninja, which must not name a file of the cache.
        foreach(file IN LISTS kernelhub_compiler_cache_languages ITEMS checks)
          if(NOT file STREQUAL "checks")
            set(file "CMake${file}Compiler")
          endif()
          file(COPY "${kernelhub_compiler_cache_entry}/${file}.cmake"
            DESTINATION "${kernelhub_platform_dir}")
        endforeach()
        include("${kernelhub_platform_dir}/checks.cmake")
        # CMake deletes a build tree's compiler files, and detects again, until this says the
        # platform information of the tree is complete.
        set(CMAKE_PLATFORM_INFO_INITIALIZED 1 CACHE INTERNAL "")
        set(kernelhub_compiler_cache_restored TRUE)
      endif()
    endif()
  endif()
endmacro()

# After the checks: what this configure detected, into the cache, when it did detect it. The
# entry is written under a temporary name and renamed, so a build beside this one reads either
# no entry or a whole one.
function(kernelhub_compiler_cache_store)
  if(NOT kernelhub_compiler_cache_entry OR kernelhub_compiler_cache_restored)
    return()
  endif()
  string(RANDOM LENGTH 12 suffix)
  set(staging "${kernelhub_compiler_cache_entry}.${suffix}")
  file(MAKE_DIRECTORY "${staging}")
  foreach(language IN LISTS kernelhub_compiler_cache_languages)
    set(file "${kernelhub_platform_dir}/CMake${language}Compiler.cmake")
    if(NOT EXISTS "${file}")
      file(REMOVE_RECURSE "${staging}")
      return()
    endif()
    file(COPY "${file}" DESTINATION "${staging}")
  endforeach()
  set(checks "")
  foreach(check IN LISTS kernelhub_compiler_cache_checks)
    if(NOT DEFINED "${check}")
      file(REMOVE_RECURSE "${staging}")
      return()
    endif()
    string(APPEND checks "set(${check} \"${${check}}\" CACHE INTERNAL \"from the compiler cache\")\n")
  endforeach()
  # What detection leaves in the cache besides the compiler files: the compilers and the
  # binutils CMakeFindBinUtils found (the private libstdc++ archive needs nm, ar and objcopy).
  foreach(tool IN ITEMS CMAKE_CXX_COMPILER CMAKE_CXX_COMPILER_AR CMAKE_CXX_COMPILER_RANLIB
      CMAKE_AR CMAKE_RANLIB CMAKE_LINKER CMAKE_NM CMAKE_OBJCOPY CMAKE_OBJDUMP CMAKE_READELF
      CMAKE_STRIP CMAKE_ADDR2LINE CMAKE_DLLTOOL CMAKE_EXECUTABLE_FORMAT)
    if(DEFINED CACHE{${tool}})
      string(APPEND checks "set(${tool} \"$CACHE{${tool}}\" CACHE INTERNAL \"from the compiler cache\")\n")
    endif()
  endforeach()
  # checks.cmake last: its presence says the entry is whole.
  file(WRITE "${staging}/checks.cmake" "${checks}")
  file(RENAME "${staging}" "${kernelhub_compiler_cache_entry}" RESULT status)
  if(NOT status EQUAL 0)
    file(REMOVE_RECURSE "${staging}")
  endif()
endfunction()
