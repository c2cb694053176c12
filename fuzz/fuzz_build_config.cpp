// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the build.toml reader (every edition, detection and upgrade included):
// any input must give a config or located errors, never a crash, an out-of-bounds access
// (ASan), undefined behaviour (UBSan) or an exception. Commands: fuzz/README.md.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include <kernelhub/config/build_config_reader.hpp>
#include <kernelhub/util/diagnostic.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  kernelhub::util::DiagnosticCollector sink;
  const auto inspection = kernelhub::config::inspect_build_config(text, "build.toml", sink);
  // The reader's contract, checked on every input: a config exactly when nothing was an error,
  // and every diagnostic located inside the file and renderable.
  if (inspection.loaded.has_value() == sink.has_errors()) {
    std::abort();
  }
  for (const auto& diagnostic : sink.sorted()) {
    if (diagnostic.location.line == 0 || diagnostic.location.column == 0 ||
        diagnostic.message.empty()) {
      std::abort();
    }
    (void)kernelhub::util::render(diagnostic);
  }
  if (inspection.loaded) {
    const auto& config = inspection.loaded->config;
    (void)config.backends_with_kernels();
    for (const auto backend : config.general.backends) {
      (void)config.python_depends_for(backend);
    }
  }
  return 0;
}
