/* SPDX-License-Identifier: Apache-2.0 */
/* glibc functions newer than 2.28 (no version at or below it) that code in the wheel's binaries
   calls, each given a hidden definition built from what glibc 2.28 has (docs/wheels.md).

   stat, fstat, lstat and fstatat became real glibc functions at 2.33 (GLIBC_2.33, no older
   version); before that the headers turned each call into __xstat(_STAT_VER, ...) and friends,
   which every glibc still exports at GLIBC_2.2.5/2.4. Code compiled against glibc 2.36 headers
   (ours and the static libraries in the wheel) calls the new names: these hidden definitions
   take those calls inside each binary and make them the way a glibc 2.28 build would, so no
   GLIBC_2.33 reference reaches the dynamic symbol table (docs/wheels.md). */
#include <fcntl.h>
#include <sys/stat.h>

/* x86_64's struct stat version for the __xstat family (glibc's _STAT_VER_LINUX). */
#define KERNELHUB_STAT_VER 1

extern int __xstat(int, const char*, struct stat*);
extern int __lxstat(int, const char*, struct stat*);
extern int __fxstat(int, int, struct stat*);
extern int __fxstatat(int, int, const char*, struct stat*, int);
__asm__(".symver __xstat, __xstat@GLIBC_2.2.5");
__asm__(".symver __lxstat, __lxstat@GLIBC_2.2.5");
__asm__(".symver __fxstat, __fxstat@GLIBC_2.2.5");
__asm__(".symver __fxstatat, __fxstatat@GLIBC_2.4");

#define KERNELHUB_HIDDEN __attribute__((visibility("hidden")))

KERNELHUB_HIDDEN int stat(const char* path, struct stat* buf) {
  return __xstat(KERNELHUB_STAT_VER, path, buf);
}
KERNELHUB_HIDDEN int lstat(const char* path, struct stat* buf) {
  return __lxstat(KERNELHUB_STAT_VER, path, buf);
}
KERNELHUB_HIDDEN int fstat(int fd, struct stat* buf) {
  return __fxstat(KERNELHUB_STAT_VER, fd, buf);
}
KERNELHUB_HIDDEN int fstatat(int dirfd, const char* path, struct stat* buf, int flags) {
  return __fxstatat(KERNELHUB_STAT_VER, dirfd, path, buf, flags);
}
/* On x86_64 the *64 names are the same functions (one struct stat). */
KERNELHUB_HIDDEN int stat64(const char* path, struct stat64* buf) {
  return __xstat(KERNELHUB_STAT_VER, path, (struct stat*)buf);
}
KERNELHUB_HIDDEN int lstat64(const char* path, struct stat64* buf) {
  return __lxstat(KERNELHUB_STAT_VER, path, (struct stat*)buf);
}
KERNELHUB_HIDDEN int fstat64(int fd, struct stat64* buf) {
  return __fxstat(KERNELHUB_STAT_VER, fd, (struct stat*)buf);
}
KERNELHUB_HIDDEN int fstatat64(int dirfd, const char* path, struct stat64* buf, int flags) {
  return __fxstatat(KERNELHUB_STAT_VER, dirfd, path, (struct stat*)buf, flags);
}

/* arc4random (GLIBC_2.36), which std::random_device calls in libstdc++'s random.o (a private
   copy, stdcxx_nonshared.py), is defined in templates/project/compat/glibc_compat.cpp, which
   kernels and this build both compile. */
