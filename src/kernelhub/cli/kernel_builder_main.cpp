// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/cli/program.hpp>

int main(int argc, char** argv) {
  return kernelhub::cli::run_program(kernelhub::cli::kernel_builder_program(), argc, argv);
}
