// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <kernelhub/cli/command.hpp>

// The two steps `build-and-upload` chains, with the options `build` and `upload` declare, so
// the three commands share one definition of each option.
namespace kernelhub::cli::commands {

struct BuildCommandOptions {
  std::string dir = ".";
  std::string python = "python3";
  std::string unique_id;
  std::string torch;  // --torch 2.14,2.15; empty: the torch of --python
  std::vector<std::string> variants;  // --variant (repeatable); empty: every buildable one
  std::string abi_check = "error";
  bool skip_checks = false;  // check-ops/-layout/-imports before, check-load after
  bool json = false;
  bool verbose = false;  // the loader's whole output when a load check fails
  bool no_sandbox = false;  // --no-sandbox (or KERNELHUB_NO_SANDBOX=1)
};

struct UploadOptions {
  std::string dir = ".";
  std::string repo_id;
  std::string branch;
  std::string repo_type = "kernel";
  std::string output_json;
  std::string token;
  bool is_private = false;
  bool create_pr = false;
  // Empty: the defaults of hub::describe_upload.
  std::string commit_message;
  std::string commit_description;
  std::string pr_title;
  std::string pr_description;
  bool quiet = false;
  // The interpreter that load-checks variants without a record of their last check (upload
  // only; build-and-upload passes the build's) and --no-check.
  std::string python = "python3";
  bool no_check = false;
};

// Adds DIR and the build options to `sub`.
void add_build_options(CLI::App& sub, BuildCommandOptions& options);
// Adds the upload options; DIR too unless the command declared it already.
void add_upload_options(CLI::App& sub, UploadOptions& options, bool with_dir);

// Sets state.exit_code to 1 when a check after the build failed; throws on a failed build.
void run_build(const BuildCommandOptions& options, RunState& state);
void run_upload(const UploadOptions& options);

}  // namespace kernelhub::cli::commands
