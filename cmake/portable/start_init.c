/* SPDX-License-Identifier: Apache-2.0 */
/* The init function start.S passes to __libc_start_main: the program's constructors, in the
   order the ELF gABI gives them (preinit array, the .init section, the init array), which is
   what glibc up to 2.33 linked into every program from libc_nonshared.a. */
#include <stddef.h>

typedef void (*kernelhub_init_fn)(int, char**, char**);
/* Defined by the linker around the program's own arrays. */
extern kernelhub_init_fn __preinit_array_start[] __attribute__((visibility("hidden")));
extern kernelhub_init_fn __preinit_array_end[] __attribute__((visibility("hidden")));
extern kernelhub_init_fn __init_array_start[] __attribute__((visibility("hidden")));
extern kernelhub_init_fn __init_array_end[] __attribute__((visibility("hidden")));
/* From crti.o: the .init section's prologue. */
extern void _init(void);

__attribute__((visibility("hidden"))) void kernelhub_start_init(int argc, char** argv,
                                                                char** envp) {
  const size_t preinit = (size_t)(__preinit_array_end - __preinit_array_start);
  for (size_t i = 0; i < preinit; ++i) {
    __preinit_array_start[i](argc, argv, envp);
  }
  _init();
  const size_t init = (size_t)(__init_array_end - __init_array_start);
  for (size_t i = 0; i < init; ++i) {
    __init_array_start[i](argc, argv, envp);
  }
}
