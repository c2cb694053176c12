// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <kernelhub/cli/command.hpp>

// One declare function per subcommand, each in its own file under cli/commands/.
namespace kernelhub::cli::commands {

void declare_init(CLI::App& app, RunState& state);
void declare_update_build(CLI::App& app, RunState& state);
void declare_check_config(CLI::App& app, RunState& state);
void declare_list_variants(CLI::App& app, RunState& state);
void declare_check_abi(CLI::App& app, RunState& state);
void declare_check_builds(CLI::App& app, RunState& state);
void declare_generate_docs(CLI::App& app, RunState& state);
void declare_create_project(CLI::App& app, RunState& state);
void declare_build(CLI::App& app, RunState& state);
void declare_build_and_copy(CLI::App& app, RunState& state);
void declare_upload(CLI::App& app, RunState& state);
void declare_build_and_upload(CLI::App& app, RunState& state);
void declare_check_ops(CLI::App& app, RunState& state);
void declare_check_layout(CLI::App& app, RunState& state);
void declare_check_imports(CLI::App& app, RunState& state);
void declare_check_load(CLI::App& app, RunState& state);
void declare_hash(CLI::App& app, RunState& state);
void declare_verify_build(CLI::App& app, RunState& state);
void declare_sign(CLI::App& app, RunState& state);
void declare_keygen(CLI::App& app, RunState& state);
void declare_serve(CLI::App& app, RunState& state);
void declare_download(CLI::App& app, RunState& state);
void declare_versions(CLI::App& app, RunState& state);
void declare_lock(CLI::App& app, RunState& state);
void declare_info(CLI::App& app, RunState& state);
void declare_verify(CLI::App& app, RunState& state);
void declare_benchmark(CLI::App& app, RunState& state);
void declare_pr(CLI::App& app, RunState& state);
void declare_verify_signature(CLI::App& app, RunState& state);
void declare_fill_card(CLI::App& app, RunState& state);
void declare_test(CLI::App& app, RunState& state);
void declare_completions(CLI::App& app, RunState& state);
void declare_clean(CLI::App& app, RunState& state);

}  // namespace kernelhub::cli::commands
