# SPDX-License-Identifier: Apache-2.0
# KERNELHUB_PORTABLE=ON: the build that goes into the wheel (docs/wheels.md). Its programs and
# its Python extension run on any x86_64 Linux with glibc 2.28 or newer (manylinux_2_28), with
# no library beyond glibc, libstdc++ and libgcc_s:
#   - every source gets templates/project/compat/glibc_pins.h (-include), as kernels do;
#   - third-party libraries are the static archives scripts/wheel/build-deps.sh puts in
#     KERNELHUB_PORTABLE_DEPS (curl and libgit2 built from Debian's sources, Debian's OpenSSL,
#     zlib, http-parser and cmark-gfm archives with their glibc references pinned); toml++ and
#     fmt are compiled in;
#   - libstdc++ is linked statically from a pinned copy of libstdc++.a, and the glibc
#     functions with no version at or below 2.28 that the code or libstdc++ calls (the stat
#     family, arc4random, __libc_single_threaded) get hidden definitions
#     (cmake/portable/glibc_shims.c);
#   - executables start from cmake/portable/start.S instead of glibc 2.36's Scrt1.o;
#   - the C++ API's shared library (kh_portable_link_shared) links the system's shared
#     libstdc++, whose std::string it shares with the program, and private copies of only the
#     libstdc++ objects above GLIBCXX_3.4.24 (stdcxx_nonshared.py, as kernels).
set(KERNELHUB_PORTABLE_DEPS "" CACHE PATH "Prefix of the static libraries (scripts/wheel/build-deps.sh)")
if(NOT EXISTS "${KERNELHUB_PORTABLE_DEPS}/lib/libcurl.a")
  message(FATAL_ERROR "KERNELHUB_PORTABLE needs KERNELHUB_PORTABLE_DEPS, the prefix that "
                      "scripts/wheel/build-deps.sh fills (no lib/libcurl.a in "
                      "\"${KERNELHUB_PORTABLE_DEPS}\")")
endif()
if(NOT CMAKE_SYSTEM_PROCESSOR STREQUAL "x86_64")
  message(FATAL_ERROR "KERNELHUB_PORTABLE: only x86_64 has a start file (cmake/portable/start.S)")
endif()

set(kh_compat_dir "${PROJECT_SOURCE_DIR}/templates/project/compat")
set(kh_glibc_pins "${kh_compat_dir}/glibc_pins.h")
add_compile_options("SHELL:-include ${kh_glibc_pins}")
add_compile_definitions(KERNELHUB_PORTABLE=1)

find_package(Threads REQUIRED)
set(kh_deps_lib "${KERNELHUB_PORTABLE_DEPS}/lib")

# kh_static_import(TARGET FILE [LINK ...]): an imported static archive of the deps prefix.
function(kh_static_import target file)
  add_library(${target} STATIC IMPORTED GLOBAL)
  set_target_properties(${target} PROPERTIES
    IMPORTED_LOCATION "${kh_deps_lib}/${file}"
    INTERFACE_INCLUDE_DIRECTORIES "${KERNELHUB_PORTABLE_DEPS}/include"
    INTERFACE_LINK_LIBRARIES "${ARGN}")
endfunction()

kh_static_import(ZLIB::ZLIB libz.a)
kh_static_import(OpenSSL::Crypto libcrypto.a Threads::Threads ${CMAKE_DL_LIBS})
kh_static_import(OpenSSL::SSL libssl.a OpenSSL::Crypto)
kh_static_import(CURL::libcurl libcurl.a OpenSSL::SSL OpenSSL::Crypto ZLIB::ZLIB Threads::Threads)
set_property(TARGET CURL::libcurl APPEND PROPERTY INTERFACE_COMPILE_DEFINITIONS CURL_STATICLIB)
kh_static_import(kh_http_parser libhttp_parser.a)
kh_static_import(PkgConfig::LIBGIT2 libgit2.a kh_http_parser ZLIB::ZLIB Threads::Threads)
kh_static_import(kh_cmark_gfm libcmark-gfm.a)
kh_static_import(PkgConfig::CMARK_GFM libcmark-gfm-extensions.a kh_cmark_gfm)
set(OPENSSL_FOUND TRUE)

# toml++ and fmt: compiled into our layers instead of Debian's shared libraries.
add_library(kh_tomlplusplus STATIC "${PROJECT_SOURCE_DIR}/cmake/portable/tomlplusplus_impl.cpp")
target_compile_definitions(kh_tomlplusplus PUBLIC TOML_HEADER_ONLY=0)
target_compile_features(kh_tomlplusplus PUBLIC cxx_std_17)
add_library(tomlplusplus::tomlplusplus ALIAS kh_tomlplusplus)
add_library(kh_fmt INTERFACE)
target_compile_definitions(kh_fmt INTERFACE FMT_HEADER_ONLY=1)
add_library(fmt::fmt ALIAS kh_fmt)

# Hidden definitions every final binary links (kh_portable_link below).
add_library(kh_portable_compat OBJECT
  "${kh_compat_dir}/glibc_compat.cpp"
  "${PROJECT_SOURCE_DIR}/cmake/portable/glibc_shims.c")
target_compile_definitions(kh_portable_compat PRIVATE _GNU_SOURCE)

# libstdc++ linked statically, from a copy of the compiler's libstdc++.a with its glibc
# references pinned (scripts/wheel/pin_archive.py), found first through -L. Not the
# nonshared archive kernels use: that mixes private copies of some libstdc++ objects with the
# shared library, and a private copy of, say, the locale facets' ids then disagrees with the
# facets the shared library installed (std::regex threw std::bad_cast). A binary of the wheel
# shares no C++ object with another library, so a whole private libstdc++ is safe; with
# --exclude-libs,ALL none of it is exported.
set(kh_portable_lib "${CMAKE_BINARY_DIR}/portable/lib")
file(MAKE_DIRECTORY "${kh_portable_lib}")
find_package(Python3 COMPONENTS Interpreter REQUIRED)
execute_process(COMMAND "${CMAKE_CXX_COMPILER}" -print-file-name=libstdc++.a
                OUTPUT_VARIABLE kh_libstdcxx OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT IS_ABSOLUTE "${kh_libstdcxx}" OR NOT EXISTS "${kh_libstdcxx}")
  message(FATAL_ERROR "KERNELHUB_PORTABLE: no static libstdc++.a next to ${CMAKE_CXX_COMPILER}")
endif()
execute_process(
  COMMAND "${Python3_EXECUTABLE}" "${PROJECT_SOURCE_DIR}/scripts/wheel/pin_archive.py"
          --pins "${kh_glibc_pins}" --objcopy "${CMAKE_OBJCOPY}" "${kh_libstdcxx}"
          "${kh_portable_lib}/libstdc++.a"
  COMMAND_ERROR_IS_FATAL ANY)

# The start file (Scrt1.o, found first through -B) for executables.
set(kh_startfiles "${CMAKE_BINARY_DIR}/portable/startfiles")
file(MAKE_DIRECTORY "${kh_startfiles}")
execute_process(
  COMMAND "${CMAKE_C_COMPILER}" -c -fPIC "${PROJECT_SOURCE_DIR}/cmake/portable/start.S"
          -o "${kh_startfiles}/start.o"
  COMMAND_ERROR_IS_FATAL ANY)
execute_process(
  COMMAND "${CMAKE_C_COMPILER}" -c -fPIC -O2 "${PROJECT_SOURCE_DIR}/cmake/portable/start_init.c"
          -o "${kh_startfiles}/start_init.o"
  COMMAND_ERROR_IS_FATAL ANY)
execute_process(
  COMMAND "${CMAKE_LINKER}" -r "${kh_startfiles}/start.o" "${kh_startfiles}/start_init.o"
          -o "${kh_startfiles}/Scrt1.o"
  COMMAND_ERROR_IS_FATAL ANY)

# At the end of every link line. libpthread, libdl and librt are named (by their .so.N files:
# glibc 2.34 and later install only empty .a archives under the -l names) even though 2.34
# moved their functions into libc: on glibc 2.28 the pinned references
# (pthread_create@GLIBC_2.2.5, ...) are found only in them.
set(CMAKE_CXX_STANDARD_LIBRARIES
    "-Wl,--push-state,--no-as-needed -l:libpthread.so.0 -l:libdl.so.2 -l:librt.so.1 -Wl,--pop-state")

# kh_portable_link(TARGET): what each executable or Python extension of the wheel links on
# top of its own libraries.
function(kh_portable_link target)
  target_sources(${target} PRIVATE $<TARGET_OBJECTS:kh_portable_compat>)
  target_link_options(${target} PRIVATE "-L${kh_portable_lib}" -static-libstdc++
                      "LINKER:--exclude-libs,ALL" "LINKER:--as-needed")
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "EXECUTABLE")
    target_link_options(${target} PRIVATE "-B${kh_startfiles}")
  endif()
endfunction()

# libkernelhub (the C++ API) hands std::string, std::filesystem::path and exceptions to the
# program, so it must use the program's libstdc++: the system's shared one, not a private copy.
# What it calls that libstdc++ exports only above GLIBCXX_3.4.24 (std::filesystem, ...) comes
# from private copies of those objects, the archive kernels link (docs/build.md): in each copy
# the symbols the shared library exports at an allowed version are made local, so the library
# keeps calling the system's copies of those (and its locale facets' ids). The weak ones that the
# library's own objects define too stay global (--keep-weak-defined-by): made local, they break
# the link with "defined in discarded section" (toml++'s basic_stringbuf destructor). So the
# archive is made when the library is linked, from its objects and the static libraries it links.
set(kh_stdcxx_nonshared_dir "${CMAKE_BINARY_DIR}/portable/shared")
file(MAKE_DIRECTORY "${kh_stdcxx_nonshared_dir}")

# kh_static_closure(OUT TARGET...): our static libraries that TARGETs link, transitively.
function(kh_static_closure out)
  set(found "")
  set(pending ${ARGN})
  while(pending)
    list(POP_FRONT pending item)
    if(NOT TARGET "${item}")
      continue()
    endif()
    get_target_property(aliased "${item}" ALIASED_TARGET)
    if(aliased)
      set(item "${aliased}")
    endif()
    get_target_property(type "${item}" TYPE)
    get_target_property(imported "${item}" IMPORTED)
    if(NOT type STREQUAL "STATIC_LIBRARY" OR imported OR item IN_LIST found)
      continue()
    endif()
    list(APPEND found "${item}")
    get_target_property(linked "${item}" LINK_LIBRARIES)
    if(linked)
      list(APPEND pending ${linked})
    endif()
  endwhile()
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

# kh_portable_link_shared(TARGET): kh_portable_link for a shared library that links the shared
# libstdc++. The archive must follow every static library of the link and precede the driver's
# -lstdc++, so it goes first in this directory's standard libraries (which CMake reads per
# directory): call it from the directory of TARGET, the only C++ library linked there, after
# its target_link_libraries.
function(kh_portable_link_shared target)
  target_sources(${target} PRIVATE $<TARGET_OBJECTS:kh_portable_compat>)
  target_link_options(${target} PRIVATE "LINKER:--exclude-libs,ALL" "LINKER:--as-needed")
  get_target_property(linked ${target} LINK_LIBRARIES)
  kh_static_closure(archives ${linked})
  set(files "")
  foreach(archive IN LISTS archives)
    list(APPEND files "$<TARGET_FILE:${archive}>")
  endforeach()
  set(output "${kh_stdcxx_nonshared_dir}/lib${target}_stdcxx_nonshared.a")
  add_custom_command(TARGET ${target} PRE_LINK
    COMMAND "${Python3_EXECUTABLE}" "${kh_compat_dir}/stdcxx_nonshared.py"
            --cxx "${CMAKE_CXX_COMPILER}" --nm "${CMAKE_NM}" --ar "${CMAKE_AR}"
            --objcopy "${CMAKE_OBJCOPY}" --pins "${kh_glibc_pins}" --output "${output}"
            --keep-weak-defined-by "$<TARGET_OBJECTS:${target}>" ${files}
    COMMAND_EXPAND_LISTS VERBATIM)
  set(CMAKE_CXX_STANDARD_LIBRARIES "${output} ${CMAKE_CXX_STANDARD_LIBRARIES}" PARENT_SCOPE)
endfunction()
