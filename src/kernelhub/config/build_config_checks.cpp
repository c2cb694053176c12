// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/config/build_config_checks.hpp>

#include <algorithm>

#include <fmt/format.h>

namespace kernelhub::config::detail {

namespace {

bool lists(const General& general, types::Backend backend) {
  return std::find(general.backends.begin(), general.backends.end(), backend) !=
         general.backends.end();
}

// The reference builds only general.backends: a kernel of another backend is silently dropped.
void check_kernel_backends(ReadContext& ctx, const BuildConfig& config) {
  for (const auto& kernel : config.kernels) {
    if (lists(config.general, kernel.backend)) {
      continue;
    }
    const auto backend = types::to_string(kernel.backend);
    ctx.report(util::Severity::warning, ctx.where(fmt::format("kernel.{}.backend", kernel.name)),
               fmt::format("kernel \"{}\" has backend \"{}\", which general.backends does not list",
                           kernel.name, backend),
               fmt::format("it is never built: add \"{}\" to general.backends or remove the kernel",
                           backend));
  }
}

// Per-backend stable-ABI entries for unlisted backends are ignored by the reference.
void check_stable_abi(ReadContext& ctx, const BuildConfig& config) {
  const auto* torch = std::get_if<Torch>(&config.framework);
  if (torch == nullptr || !torch->stable_abi) {
    return;
  }
  const auto* table = std::get_if<std::map<types::Backend, types::Version>>(&*torch->stable_abi);
  if (table == nullptr) {
    return;
  }
  for (const auto& [backend, version] : *table) {
    if (lists(config.general, backend)) {
      continue;
    }
    const auto name = types::to_string(backend);
    ctx.report(util::Severity::warning, ctx.where(fmt::format("torch.stable-abi.{}", name)),
               fmt::format("torch.stable-abi sets backend \"{}\", which general.backends does not "
                           "list",
                           name),
               "the entry is ignored");
  }
}

void check_license(ReadContext& ctx, const BuildConfig& config, int source_edition) {
  if (!config.general.license.empty() || source_edition >= 4) {
    return;
  }
  ctx.report(util::Severity::warning, ctx.where("general"),
             fmt::format("[general] has no license (edition {} did not require one)",
                         source_edition),
             source_edition == 3
                 ? "add license = \"<SPDX identifier>\": `kernel-builder update-build` needs it"
                 : "set license in [general] once `kernel-builder update-build` has upgraded "
                   "the file");
}

}  // namespace

void check_build_config(ReadContext& ctx, const BuildConfig& config, int source_edition) {
  if (source_edition >= 3) {
    // Editions 1 and 2 derive general.backends from the kernels.
    check_kernel_backends(ctx, config);
  }
  check_stable_abi(ctx, config);
  check_license(ctx, config, source_edition);
}

}  // namespace kernelhub::config::detail
