// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/loader/file_state.hpp>

#include <sys/stat.h>

namespace kernelhub::loader {

namespace {

long long stat_time_ns(const timespec& time) {
  return static_cast<long long>(time.tv_sec) * 1000000000LL + time.tv_nsec;
}

}  // namespace

std::optional<FileState> FileState::of(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    return std::nullopt;
  }
  return FileState{S_ISDIR(info.st_mode),
                   static_cast<long long>(info.st_size),
                   stat_time_ns(info.st_mtim),
                   stat_time_ns(info.st_ctim),
                   static_cast<unsigned long long>(info.st_dev),
                   static_cast<unsigned long long>(info.st_ino)};
}

}  // namespace kernelhub::loader
