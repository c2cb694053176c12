# Same inputs, same bytes (docs/build.md, "Reproducible builds"): one commit built in two
# folders, at two times, by two users gives a byte-identical module. Every measure below is
# the toolchain's own; nothing rewrites the finished module. kernel-builder also sets
# SOURCE_DATE_EPOCH (the commit's time) for the compilers' __DATE__ and __TIME__.
include_guard(GLOBAL)
include(CheckCXXCompilerFlag)
check_cxx_compiler_flag(-ffile-prefix-map=/kernelhub=. KERNELHUB_HAS_FILE_PREFIX_MAP)

# The prefix maps of this build: the folders whose absolute path would otherwise reach the
# module (through __FILE__ in assertions, and nvcc's host code), each to a fixed name. GCC and
# Clang apply the last map that matches, so a folder inside another comes after it.
function(kernelhub_prefix_maps out)
  # Torch's headers are read through the build tree's link to them (CMakeLists.txt): named as
  # they would be without it.
  set(maps "${KERNEL_SOURCE_DIR}=." "${CMAKE_CURRENT_SOURCE_DIR}=kernelhub-project"
           "${CMAKE_CURRENT_BINARY_DIR}=kernelhub-build"
           "${CMAKE_CURRENT_BINARY_DIR}/torch-include=torch/include")
  if(TORCH_PACKAGE_DIR)
    list(APPEND maps "${TORCH_PACKAGE_DIR}=torch")
  endif()
  foreach(include IN LISTS Python_INCLUDE_DIRS)
    list(APPEND maps "${include}=python-include")
  endforeach()
  if(CMAKE_CUDA_COMPILER)
    get_filename_component(cuda_bin "${CMAKE_CUDA_COMPILER}" DIRECTORY)
    get_filename_component(cuda_root "${cuda_bin}" DIRECTORY)
    list(APPEND maps "${cuda_root}=cuda")
  endif()
  # ccache with the kernel's folder as base_dir (kernel-builder sets it) hands the compiler the
  # paths under that folder relative to this build tree ("../../../../csrc/x.cu"): the same
  # names for those spellings, so a module compiled through ccache has the same bytes as one
  # compiled without it. The build tree itself is the working folder; nothing compiled lives
  # there. (ccache leaves the prefix maps out of its hash, so these cost it no hit.)
  set(relative_maps "")
  foreach(map IN LISTS maps)
    string(FIND "${map}" "=" equals REVERSE)
    string(SUBSTRING "${map}" 0 ${equals} old)
    math(EXPR after "${equals} + 1")
    string(SUBSTRING "${map}" ${after} -1 new)
    cmake_path(IS_PREFIX KERNEL_SOURCE_DIR "${old}" NORMALIZE under_kernel)
    if(under_kernel AND NOT old STREQUAL CMAKE_CURRENT_BINARY_DIR)
      file(RELATIVE_PATH relative "${CMAKE_CURRENT_BINARY_DIR}" "${old}")
      string(REGEX REPLACE "/$" "" relative "${relative}")  # "../../../../" for a parent
      list(APPEND relative_maps "${relative}=${new}")
    endif()
  endforeach()
  list(APPEND maps ${relative_maps})
  set(${out} "${maps}" PARENT_SCOPE)
endfunction()

function(kernelhub_reproducible target)
  if(KERNELHUB_HAS_FILE_PREFIX_MAP)
    kernelhub_prefix_maps(maps)
    # nvcc gets the maps as they are, not through -Xcompiler: it passes an option it does not
    # know to the host compiler (CMake gives it --forward-unknown-to-host-compiler), and ccache
    # then knows them for prefix maps and leaves the folders out of its hash; inside -Xcompiler
    # they made every .cu object specific to the kernel's folder.
    foreach(map IN LISTS maps)
      target_compile_options(${target} PRIVATE
        "$<$<COMPILE_LANGUAGE:C,CXX,OBJC,OBJCXX,CUDA>:-ffile-prefix-map=${map}>")
    endforeach()
  endif()
  if(CMAKE_CUDA_COMPILER_ID STREQUAL "NVIDIA")
    # nvcc names its intermediate files tmpxft_<pid>_<counter>-<n>_<name>..., and the host
    # object keeps that name (its STT_FILE symbol and its _GLOBAL__sub_I_ initialiser): with
    # --objdir-as-tempdir they are named after the object file instead, whose path is fixed.
    # cudafe++ derives the module id that prefixes every internal-linkage device symbol
    # (_GLOBAL__N__<id>_7_relu_cu_...) from the source's absolute path, which it takes from
    # --orig_src_path_name: given last, the path relative to the kernel's folder replaces it.
    target_compile_options(${target} PRIVATE "$<$<COMPILE_LANGUAGE:CUDA>:--objdir-as-tempdir>")
    get_target_property(sources ${target} SOURCES)
    foreach(source IN LISTS sources)
      get_filename_component(source_path "${source}" ABSOLUTE)
      file(RELATIVE_PATH relative "${KERNEL_SOURCE_DIR}" "${source_path}")
      # nvcc splits -Xcudafe's value at commas; such a path keeps nvcc's own name.
      if(NOT relative MATCHES ",")
        set_property(SOURCE "${source}" APPEND PROPERTY COMPILE_OPTIONS
          "$<$<COMPILE_LANGUAGE:CUDA>:-Xcudafe=--orig_src_path_name=${relative}>")
      endif()
    endforeach()
  endif()
  # The GNU build id as a hash of the module's contents (the default of some distributions
  # only), so it is as reproducible as the bytes it names.
  if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
    target_link_options(${target} PRIVATE "LINKER:--build-id=sha1")
  endif()
  kernelhub_write_toolchain()
endfunction()

# kernelhub-toolchain.json in the build tree: the tools and flags of this build, which
# kernel-builder records in the variant's provenance. Only names and versions, and the flags
# CMake and the environment gave (no prefix maps, so no folder of this machine through them).
function(kernelhub_write_toolchain)
  set(json "{}")
  string(JSON json SET "${json}" "cmake" "\"${CMAKE_VERSION}\"")
  string(JSON json SET "${json}" "build-type" "\"${CMAKE_BUILD_TYPE}\"")
  string(TOUPPER "${CMAKE_BUILD_TYPE}" config)
  foreach(language CXX CUDA)
    if(CMAKE_${language}_COMPILER_ID)
      string(TOLOWER "${language}" key)
      set(entry "{}")
      foreach(field id version)
        string(TOUPPER "${field}" upper)
        set(value "${CMAKE_${language}_COMPILER_${upper}}")
        string(JSON entry SET "${entry}" "${field}" "\"${value}\"")
      endforeach()
      string(STRIP "${CMAKE_${language}_FLAGS} ${CMAKE_${language}_FLAGS_${config}}" flags)
      string(REPLACE "\\" "\\\\" flags "${flags}")
      string(REPLACE "\"" "\\\"" flags "${flags}")
      string(JSON entry SET "${entry}" "flags" "\"${flags}\"")
      string(JSON json SET "${json}" "${key}" "${entry}")
    endif()
  endforeach()
  file(WRITE "${CMAKE_CURRENT_BINARY_DIR}/kernelhub-toolchain.json" "${json}\n")
endfunction()
