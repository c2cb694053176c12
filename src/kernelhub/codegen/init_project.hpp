// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <kernelhub/codegen/file_set.hpp>
#include <kernelhub/codegen/init_request.hpp>
#include <kernelhub/types/backend.hpp>
#include <kernelhub/util/embedded_file.hpp>
#include <kernelhub/util/expected.hpp>

// The files of a new kernel project, rendered from the templates in templates/init/ (compiled
// into the binary). templates/init/manifest.toml lists which template becomes which file and
// when; the templates' context is init_context().
namespace kernelhub::codegen {

struct InitProject {
  KernelRepoName name;
  std::string license;
  std::vector<types::Backend> backends;  // in build.toml order, no duplicates
};

// The template context: kernel_name, kernel_name_normalized, kernel_name_class, repo_id,
// owner, license, backends, has_cpu, has_cuda, has_rocm, has_metal, has_xpu (the reference's
// names, so its templates' placeholders mean the same here).
nlohmann::json init_context(const InitProject& project);

// The embedded templates/init/ folder.
std::span<const util::EmbeddedFile> init_template_files();

// Renders the project from `templates` (a manifest.toml plus the files it names). A pure
// function: nothing is written.
util::Expected<FileSet> render_init_project(const InitProject& project,
                                            std::span<const util::EmbeddedFile> templates);

inline util::Expected<FileSet> render_init_project(const InitProject& project) {
  return render_init_project(project, init_template_files());
}

}  // namespace kernelhub::codegen
