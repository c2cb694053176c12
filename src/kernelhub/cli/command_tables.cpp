// SPDX-License-Identifier: Apache-2.0
#include <array>

#include <kernelhub/cli/command.hpp>
#include <kernelhub/cli/commands/commands.hpp>

namespace kernelhub::cli {

namespace {

using namespace commands;

const std::array k_kernel_builder_commands = {
    Command{"init", "create a new kernel project from templates", &declare_init},
    Command{"update-build", "rewrite build.toml to the newest edition", &declare_update_build},
    Command{"check-config", "validate build.toml and report every problem",
            &declare_check_config},
    Command{"list-variants", "list the build variants this machine can build",
            &declare_list_variants},
    Command{"check-abi", "check built variants against the manylinux, abi3 and Torch ABI rules",
            &declare_check_abi},
    Command{"check-builds",
            "say which variants of the compliance matrix build/ lacks or has unexpectedly",
            &declare_check_builds},
    Command{"create-project",
            "write the kernel's CMake project and its pyproject.toml/setup.py (IDEs, pip "
            "install -e)",
            &declare_create_project},
    Command{"build", "build the kernel's variants this machine can build into build/",
            &declare_build},
    Command{"build-and-copy", "build the kernel's variants into build/ (same as build)",
            &declare_build_and_copy},
    Command{"clean",
            "remove what build wrote into build/ (its records prove it), never the author's files",
            &declare_clean},
    Command{"upload", "upload the build variants and the card to the Hub", &declare_upload},
    Command{"build-and-upload", "build the variants, then upload them and the card to the Hub",
            &declare_build_and_upload},
    Command{"check-ops",
            "check that op registrations (Python and C++/CUDA) use the build's own namespace",
            &declare_check_ops},
    Command{"check-layout", "check the kernel's Python package and the sources build.toml lists",
            &declare_check_layout},
    Command{"check-imports",
            "check that the kernel's Python imports only itself (relatively), the standard "
            "library, torch and its python-depends",
            &declare_check_imports},
    Command{"check-load", "load built variants with the reference kernels.get_local_kernel",
            &declare_check_load},
    Command{"hash", "print (or store) the digest of built variants", &declare_hash},
    Command{"verify-build",
            "rebuild a published variant from its commit and compare it with the hub's, file by "
            "file",
            &declare_verify_build},
    Command{"sign", "sign built variants' metadata.json with a team key (a keyed Sigstore bundle)",
            &declare_sign},
    Command{"keygen", "create a key pair for `sign` (the public key is what a hub trusts)",
            &declare_keygen},
    Command{"fill-card", "render the kernel's CARD.md with its repo id, functions and layers",
            &declare_fill_card},
    Command{"test", "run the kernel's kernels_ci tests against a built variant", &declare_test},
    Command{"completions", "print a bash, zsh or fish completion script for this program",
            &declare_completions},
    Command{"generate-docs", "print the CLI reference in Markdown", &declare_generate_docs,
            /*hidden=*/true},
};

const std::array k_kernelhub_commands = {
    Command{"serve", "serve a Hub-compatible kernel hub from bare git repositories",
            &declare_serve},
    Command{"download", "download a kernel's variant for this machine (or all) into the cache",
            &declare_download},
    Command{"versions", "list a kernel's versions and which variants fit this machine",
            &declare_versions},
    Command{"lock", "lock a project's kernel dependencies to commits in kernels.lock",
            &declare_lock},
    Command{"info", "describe a kernel: name, version, license, dependencies and backends",
            &declare_info},
    Command{"verify", "check installed variants' files against their metadata digest",
            &declare_verify},
    Command{"verify-signature", "check variants' Sigstore signatures, then their digests", &declare_verify_signature},
    Command{"benchmark", "time a kernel's benchmarks on this machine (JSON, charts, upload)",
            &declare_benchmark},
    Command{"pr", "review a repository's pull requests: list, show (with the diff), comment, merge, close",
            &declare_pr},
    Command{"completions", "print a bash, zsh or fish completion script for this program",
            &declare_completions},
    Command{"generate-docs", "print the CLI reference in Markdown", &declare_generate_docs,
            /*hidden=*/true},
};

}  // namespace

std::span<const Command> kernel_builder_commands() { return k_kernel_builder_commands; }
std::span<const Command> kernelhub_commands() { return k_kernelhub_commands; }

}  // namespace kernelhub::cli
