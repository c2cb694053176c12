// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/builder/build_kernel.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <variant>

#include <fmt/format.h>

#include <kernelhub/builder/build_inputs.hpp>
#include <kernelhub/builder/dev_unique_id.hpp>
#include <kernelhub/builder/git_state.hpp>
#include <kernelhub/builder/incremental.hpp>
#include <kernelhub/builder/job_limit.hpp>
#include <kernelhub/builder/probe_cache.hpp>
#include <kernelhub/builder/sandbox_inputs.hpp>
#include <kernelhub/builder/torch_versions.hpp>
#include <kernelhub/builder/torch_versions_env.hpp>
#include <kernelhub/builder/tvm_ffi_build.hpp>
#include <kernelhub/builder/variant_assembly.hpp>
#include <kernelhub/builder/variant_metadata.hpp>
#include <kernelhub/builder/variant_selection.hpp>
#include <kernelhub/codegen/create_project.hpp>
#include <kernelhub/config/build_config_reader.hpp>
#include <kernelhub/metadata/kernel_id.hpp>
#include <kernelhub/util/file_io.hpp>

#include <kernelhub/builder/step.hpp>

namespace kernelhub::builder {

namespace {

namespace fs = std::filesystem;

// The OS this builder runs on, as variant names spell it (it builds for its own machine).
#if defined(__APPLE__)
constexpr const char* k_host_os = "darwin";
#elif defined(_WIN32)
constexpr const char* k_host_os = "windows";
#else
constexpr const char* k_host_os = "linux";
#endif

bool has_backend(const config::BuildConfig& config, types::Backend backend) {
  const auto& backends = config.general.backends;
  return std::find(backends.begin(), backends.end(), backend) != backends.end();
}

// The interpreter as an absolute path (not resolving links, which would leave a venv).
util::Expected<fs::path> find_python(const std::string& python, CommandRunner& runner) {
  const auto found = runner.find_program(python);
  if (!found) {
    return util::fail(fmt::format(
        "python \"{}\" was not found; install Python 3 with torch or pass --python PATH", python));
  }
  return fs::absolute(*found);
}

util::Expected<HostTools> detect_host(const config::BuildConfig& config,
                                      const BuildOptions& options, CommandRunner& runner,
                                      fs::path& python, std::optional<std::string>& fingerprint) {
  HostTools host;
  host.os = k_host_os;
  if (has_backend(config, types::Backend::cuda) &&
      !std::holds_alternative<config::TorchNoarch>(config.framework)) {
    const char* cuda_home = std::getenv("CUDA_HOME");
    host.cuda_toolkit = KH_TRY(detect_cuda_toolkit(
        runner, cuda_home != nullptr ? std::optional<std::string_view>(cuda_home) : std::nullopt));
  }
  host.nvcc = host.cuda_toolkit.has_value() || runner.find_program("nvcc").has_value();
  host.hipcc = runner.find_program("hipcc").has_value();
  host.icpx = runner.find_program("icpx").has_value();
  if (std::holds_alternative<config::TvmFfi>(config.framework)) {
    // [tvm-ffi] kernels compile against apache-tvm-ffi, not torch (tvm_ffi.hpp).
    python = KH_TRY(find_python(options.python, runner));
    host.tvm_ffi = KH_TRY(detect_tvm_ffi(python, runner));
    return host;
  }
  // Only Torch arch cpu and cuda builds compile against torch; noarch variants are plain
  // files, and a cuda build without nvcc is skipped before torch matters.
  if (!std::holds_alternative<config::Torch>(config.framework) ||
      (!has_backend(config, types::Backend::cpu) && !host.cuda_toolkit)) {
    return host;
  }
  python = KH_TRY(find_python(options.python, runner));
  if (options.probe_cache) {
    fingerprint = modules_fingerprint(python, {"torch", "kernels"}, runner);
  }
  const auto probe =
      cached_probe(python, torch_probe_script(), runner, options.probe_cache, fingerprint);
  if (!probe) {
    return util::fail(fmt::format("\"{}\" cannot import torch; install it with `{} -m pip install "
                                  "torch` or pass --python PATH",
                                  python.string(), python.string()));
  }
  host.torch = KH_TRY(parse_torch_probe(*probe));
  return host;
}

util::Expected<void> require_build_tools(CommandRunner& runner) {
  if (!runner.find_program("cmake")) {
    return util::fail("cmake was not found in PATH; install CMake 3.22 or newer (`pip install cmake`)");
  }
  if (!runner.find_program("ninja")) {
    return util::fail("ninja was not found in PATH; install Ninja (`pip install ninja`)");
  }
  if (!runner.find_program("c++") && !runner.find_program("g++") &&
      !runner.find_program("clang++")) {
    return util::fail("no C++ compiler (c++, g++ or clang++) was found in PATH; install g++");
  }
  return {};
}

// The project's _ops.py becomes the variant's.
codegen::FileSet ops_file(const codegen::FileSet& project, const std::string& python_name) {
  codegen::FileSet files;
  if (const auto* ops = project.find(fmt::format("torch-ext/{}/_ops.py", python_name))) {
    (void)files.add("_ops.py", ops->content);
  }
  return files;
}

codegen::CudaProjectOptions cuda_project_options(const CudaBuild& cuda) {
  codegen::CudaProjectOptions options;
  for (const auto& kernel : cuda.kernels) {
    options.kernel_flags[kernel.kernel] = kernel.nvcc_flags;
  }
  return options;
}

// The toolkit the plan chose, for CMake's CUDA language (which would otherwise look in PATH and
// /usr/local/cuda on its own); the project finds the toolkit's headers and runtime through it.
void add_cuda_cmake_args(const CudaBuild& cuda, bool use_ccache, Command& configure) {
  configure.argv.push_back("-DCMAKE_CUDA_COMPILER=" + cuda.nvcc.string());
  if (use_ccache) {
    configure.argv.push_back("-DCMAKE_CUDA_COMPILER_LAUNCHER=ccache");
  }
}

// nvcc compiles a source's archs in parallel (`--threads`, job_limit.hpp's nvcc_threads).
// Given through NVCC_APPEND_FLAGS, which nvcc reads, so that the compile commands, and with
// them ninja's and ccache's view of each object, stay the same when the free memory (and so
// the count) differs between two builds: the threads change how fast, not what, nvcc makes.
void add_nvcc_threads(const config::BuildConfig& config, const CudaBuild& cuda, Command& ninja) {
  std::size_t sources = 0;
  std::size_t archs = 0;
  for (const auto& target : cuda.kernels) {
    archs = std::max(archs, target.archs.size());
    for (const auto& kernel : config.kernels) {
      if (kernel.name == target.kernel) {
        sources += static_cast<std::size_t>(std::count_if(
            kernel.src.begin(), kernel.src.end(),
            [](const std::string& source) { return source.ends_with(".cu"); }));
      }
    }
  }
  const auto threads = nvcc_threads(
      job_limit(available_cores(), available_memory(), CompilerKind::device), sources, archs);
  if (threads < 2) {
    return;
  }
  const char* user = std::getenv("NVCC_APPEND_FLAGS");
  const std::string given = user != nullptr ? user : "";
  ninja.env.emplace_back("NVCC_APPEND_FLAGS",
                         (given.empty() ? "" : given + " ") + fmt::format("--threads {}", threads));
}

// The sandbox of one target's steps: what every step shares, the folders of the kernel's
// sources outside its folder, and the folders `python` loads from (cached with the probes).
util::Expected<StepSandbox> target_sandbox(const StepSandbox& shared,
                                           const BuildOptions& options,
                                           const TorchTarget& target, CommandRunner& runner) {
  auto sandbox = shared;
  if (!target.python.empty()) {
    const auto paths = cached_probe(target.python, python_paths_script(), runner,
                                    options.probe_cache, target.fingerprint);
    if (!paths) {
      return util::fail(fmt::format("\"{}\" cannot say where it loads modules from, which the "
                                    "build sandbox needs to know",
                                    target.python.string()));
    }
    for (const auto& path : program_roots(target.python)) {
      sandbox.mounts.read_only.push_back(path);
    }
    for (const auto& path : parse_python_paths(*paths)) {
      sandbox.mounts.read_only.push_back(path);
    }
  }
  return sandbox;
}

struct BuildContext {
  const config::BuildConfig& config;
  fs::path kernel_dir;
  std::string unique_id;
  std::optional<metadata::GitStatus> kernel_git;
  BuildSource source;  // origin and SOURCE_DATE_EPOCH, for the compilers and provenance
  const BuildOptions& options;
  fs::path python;
  std::optional<TorchEnvironment> torch;  // the probe of `python` (arch variants)
  std::optional<StepSandbox> sandbox;     // for `python`'s target; nullopt: --no-sandbox
};

util::Expected<BuiltVariant> build_arch_variant(const BuildContext& context,
                                                const PlannedVariant& planned,
                                                CommandRunner& runner) {
  const auto& config = context.config;
  const auto& torch = std::get<config::Torch>(config.framework);
  const auto id = KH_TRY(
      metadata::checked_kernel_id(config.general.name, planned.backend, context.unique_id));
  const auto work = context.kernel_dir / "build" / ".kernelhub" / planned.name;
  const auto cuda_options = planned.cuda ? cuda_project_options(*planned.cuda)
                                         : std::optional<codegen::CudaProjectOptions>();
  // The sources are read to find those that name TORCH_EXTENSION_NAME (create_project).
  const codegen::SourceReader read_source = [](const fs::path& path) -> std::optional<std::string> {
    auto text = util::read_file(path);
    return text ? std::optional<std::string>(std::move(*text)) : std::nullopt;
  };
  const auto project = KH_TRY(codegen::create_project(config, context.kernel_dir,
                                                      context.unique_id, planned.backend,
                                                      cuda_options ? &*cuda_options : nullptr,
                                                      read_source));
  KH_STEP(codegen::write_file_set(project, work / "project", codegen::Overwrite::yes));

  const bool ccache = runner.find_program("ccache").has_value();
  auto commands = cmake_commands(work / "project", work / "cmake", context.python.string(), ccache,
                                 context.kernel_dir);
  if (context.torch && !context.torch->cmake_prefix_path.empty()) {
    // <torch>/share/cmake -> <torch>: the project then need not locate torch itself.
    const auto torch_dir = fs::path(context.torch->cmake_prefix_path).parent_path().parent_path();
    commands.front().argv.push_back("-DTORCH_PACKAGE_DIR=" + torch_dir.string());
  }
  if (context.torch && !context.torch->python_include.empty()) {
    // Python.h's folder from the same probe: the project then skips FindPython.
    commands.front().argv.push_back("-DKERNELHUB_PYTHON_INCLUDE_DIR=" +
                                    context.torch->python_include);
  }
  if (context.options.probe_cache) {
    // Beside the probes: the project keeps its private libstdc++ archive there, one per
    // compiler and binutils, instead of extracting it again for every kernel, and CMake's
    // compiler detection and checks, one per toolchain (compat/compiler_cache.cmake).
    const auto cache = (context.options.probe_cache->parent_path() / "stdcxx").string();
    commands.front().argv.push_back("-DKERNELHUB_STDCXX_CACHE=" + cache);
    commands.front().argv.push_back("-DKERNELHUB_COMPILER_CACHE=" + cache);
  }
  if (planned.cuda) {
    add_cuda_cmake_args(*planned.cuda, ccache, commands.front());
    add_nvcc_threads(config, *planned.cuda, commands.back());
  }
  set_source_date_epoch(commands, context.source);
  KH_STEP(prepare_build_tree(work / "cmake", context.sandbox.has_value()));
  const auto incremental = prepare_incremental(commands, work / "cmake", planned.backend);
  watch_for_work(commands, planned.backend, context.kernel_dir, context.options.on_compile);
  // One header per variant: the tools' own output is shown only when they fail (or with -v).
  const auto sandbox =
      context.sandbox ? std::optional(variant_sandbox(*context.sandbox, context.kernel_dir, work,
                                                      planned.cuda
                                                          ? toolkit_roots(planned.cuda->nvcc)
                                                          : std::vector<fs::path>{}))
                      : std::nullopt;
  KH_STEP(run_build_steps(commands, planned.name, sandbox, runner));
  KH_STEP(finish_incremental(incremental, work / "cmake"));
  // The build tree's module has a name without the unique part (codegen::module_target), so
  // a new id rebuilds only the sources that embed it; the variant's copy has the id's name.
  const auto module =
      work / "cmake" / (codegen::module_target(config.general.name, planned.backend) + ".abi3.so");
  if (!fs::exists(module)) {
    return util::fail(fmt::format("the build of {} did not produce \"{}\"", planned.name,
                                  module.string()));
  }

  VariantContents contents{variant_metadata(config, planned.backend, id, context.kernel_git,
                                            context.options.builder_version)};
  if (planned.cuda && !planned.cuda->archs.empty()) {
    contents.metadata.backend.archs = planned.cuda->archs;  // what nvcc compiled, sorted
  }
  std::map<std::string, std::string> tools;
  if (context.torch && !context.torch->torch_release.empty()) {
    tools["torch"] = context.torch->torch_release;
  }
  contents.metadata.provenance->build = build_provenance(context.source, work / "cmake", tools);
  contents.metadata.provenance->sandboxed = context.sandbox.has_value();
  contents.package_dir = context.kernel_dir / "torch-ext" / config.general.name.python_name();
  contents.data_extensions = torch.pyext.value_or(std::vector<std::string>{});
  contents.generated = ops_file(project, config.general.name.python_name());
  contents.native_files = {NativeFile{module, id + ".abi3.so"}};
  const auto path = KH_TRY(assemble_variant(contents, context.kernel_dir / "build", planned.name));
  return BuiltVariant{planned.name, planned.backend, id, path};
}

util::Expected<BuiltVariant> build_noarch_variant(const BuildContext& context,
                                                  const PlannedVariant& planned) {
  const auto& config = context.config;
  const auto id = KH_TRY(
      metadata::checked_kernel_id(config.general.name, planned.backend, context.unique_id));
  const auto project = KH_TRY(
      codegen::create_project(config, context.kernel_dir, context.unique_id, planned.backend));
  VariantContents contents{variant_metadata(config, planned.backend, id, context.kernel_git,
                                            context.options.builder_version)};
  contents.metadata.provenance->build = build_provenance(context.source, std::nullopt, {});
  contents.package_dir = context.kernel_dir / "torch-ext" / config.general.name.python_name();
  contents.copy = VariantContents::Copy::all_files;  // as the reference's build_kernel command
  contents.generated = ops_file(project, config.general.name.python_name());
  const auto path = KH_TRY(assemble_variant(contents, context.kernel_dir / "build", planned.name));
  return BuiltVariant{planned.name, planned.backend, id, path};
}

// What the kernel is built against: the torch of --python, or with --torch one cached
// environment per release (made on first use). Kernels that compile nothing against torch
// ignore --torch.
util::Expected<std::vector<TorchTarget>> torch_targets(const config::BuildConfig& config,
                                                       const BuildOptions& options,
                                                       CommandRunner& runner) {
  std::vector<TorchTarget> targets;
  if (options.torch_versions.empty() || !needs_torch(config)) {
    TorchTarget target;
    target.host = KH_TRY(detect_host(config, options, runner, target.python, target.fingerprint));
    targets.push_back(std::move(target));
    return targets;
  }
  const auto base_python = KH_TRY(find_python(options.python, runner));
  const auto root = options.torch_envs_root.empty() ? torch_envs_root() : options.torch_envs_root;
  for (const auto& version : options.torch_versions) {
    auto env_options = options;
    env_options.python = KH_TRY(ensure_torch_env(root, version, base_python, runner)).string();
    TorchTarget target;
    target.host =
        KH_TRY(detect_host(config, env_options, runner, target.python, target.fingerprint));
    targets.push_back(std::move(target));
  }
  return targets;
}

std::string describe_skips(const std::vector<SkippedBackend>& skipped) {
  std::string text;
  for (const auto& skip : skipped) {
    text += fmt::format("{}{}: {}", text.empty() ? "" : "; ", types::to_string(skip.backend),
                        skip.reason);
  }
  return text;
}

}  // namespace

std::vector<Command> cmake_commands(const fs::path& project_dir, const fs::path& build_tree,
                                    const std::string& python, bool use_ccache,
                                    const fs::path& kernel_dir) {
  Command configure{{"cmake", "-S", project_dir.string(), "-B", build_tree.string(), "-G",
                     "Ninja", "-DCMAKE_BUILD_TYPE=Release", "-DPython_EXECUTABLE=" + python},
                    {}};
  Command ninja{{"ninja", "-C", build_tree.string()}, {}};
  if (use_ccache) {
    configure.argv.push_back("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache");
    // Every compile command names the kernel's folder (sources, include paths, the build tree
    // inside it). With the folder as ccache's base_dir, ccache hashes those paths relative to
    // the build tree, so the same kernel in another folder (a clone, a worktree, a copy) hits
    // the objects this one compiled. The project maps the relative spellings, which ccache then
    // hands the compiler, to the same names as the absolute ones (compat/reproducible.cmake),
    // so the module's bytes do not depend on it. A base_dir the user chose is kept.
    const char* user = std::getenv("CCACHE_BASEDIR");
    if (!kernel_dir.empty() && (user == nullptr || *user == '\0')) {
      ninja.env.emplace_back("CCACHE_BASEDIR", kernel_dir.string());
    }
  }
  return {configure, ninja};
}

util::Expected<BuildResult> build_kernel(const fs::path& dir, const BuildOptions& options,
                                         CommandRunner& runner, util::DiagnosticSink& sink) {
  const auto kernel_dir = fs::absolute(dir).lexically_normal();
  const auto loaded = KH_TRY(config::load_build_config(kernel_dir, sink));
  const auto& config = loaded.config;

  const auto git = read_git_state(kernel_dir);
  metadata::UniqueIdSource source;
  source.given = options.unique_id;
  if (git) {
    source.git_tree_id = git->tree_id;
    source.git_dirty = git->status.dirty;
  } else if (!source.given) {
    // No commit to name the build after: the folder's development id, the same on every build
    // of this folder, where the reference draws a random one each time (and so recompiles).
    source.given = KH_TRY(dev_unique_id_for(kernel_dir));
  }
  const BuildSource build_source{
      git ? git->origin : std::nullopt,
      source_date_epoch(git ? std::optional(git->commit_time) : std::nullopt)};
  BuildContext context{config,
                       kernel_dir,
                       metadata::unique_id(source),
                       git ? std::optional(git->status) : std::nullopt,
                       build_source,
                       options,
                       {},
                       {},
                       {}};

  // What this build reads, hashed before it compiles: `upload` compares it with the kernel
  // as it is then (build_inputs.hpp).
  const BuildInputs inputs{config.general.version, context.unique_id,
                           options.unique_id.has_value(),
                           KH_TRY(inputs_digest(kernel_dir, config))};

  const auto targets = KH_TRY(torch_targets(config, options, runner));
  const auto full_plan = plan_torch_matrix(config, targets);
  for (const auto& skip : full_plan.skipped) {
    if (skip.is_error) {
      return util::fail(fmt::format("cannot build {}: {}", types::to_string(skip.backend),
                                    skip.reason));
    }
  }
  if (full_plan.variants.empty()) {
    return util::fail(fmt::format("nothing can be built on this machine: {}",
                                  describe_skips(full_plan.skipped)));
  }
  const auto plan = KH_TRY(select_variants(full_plan, options.variants, options.unbuildable));
  BuildResult result{context.unique_id, {}, plan.skipped, {}, {}};
  if (options.torch_versions.empty() && targets.size() == 1) {
    result.torch = targets.front().host.torch;
    result.python_fingerprint = targets.front().fingerprint;
  }
  std::optional<StepSandbox> shared;  // made when the first variant with build steps needs it
  std::vector<std::optional<StepSandbox>> sandboxes(targets.size());
  for (const auto& [planned, target] : plan.variants) {
    context.python = targets[target].python;
    context.torch = targets[target].host.torch;
    if (options.sandbox == Sandboxing::on && planned.kind != VariantKind::noarch &&
        !sandboxes[target]) {
      if (!shared) {
        std::vector<fs::path> writable;
        if (options.probe_cache) {
          // The private libstdc++ archive cache (-DKERNELHUB_STDCXX_CACHE).
          writable.push_back(options.probe_cache->parent_path() / "stdcxx");
        }
        shared = StepSandbox{KH_TRY(find_sandbox(runner)), shared_sandbox_mounts(runner, writable)};
        for (const auto& folder : declared_outside_folders(config, kernel_dir)) {
          shared->mounts.read_only.push_back(folder);
        }
      }
      sandboxes[target] = KH_TRY(target_sandbox(*shared, options, targets[target], runner));
    }
    context.sandbox = sandboxes[target];
    if (planned.cuda) {
      for (const auto& warning : planned.cuda->warnings) {
        sink.warning({}, warning);
      }
    }
    if (planned.kind == VariantKind::noarch) {
      result.variants.push_back(KH_TRY(build_noarch_variant(context, planned)));
    } else if (std::holds_alternative<config::TvmFfi>(config.framework)) {
      KH_STEP(require_build_tools(runner));
      const TvmFfiBuildInputs inputs{config,
                                     kernel_dir,
                                     context.unique_id,
                                     context.kernel_git,
                                     context.source,
                                     options.builder_version,
                                     context.python,
                                     options.on_compile,
                                     context.sandbox};
      result.variants.push_back(KH_TRY(build_tvm_ffi_variant(inputs, planned, runner)));
    } else {
      KH_STEP(require_build_tools(runner));
      result.variants.push_back(KH_TRY(build_arch_variant(context, planned, runner)));
    }
    KH_STEP(write_build_inputs(kernel_dir / "build", result.variants.back().name, inputs));
  }
  return result;
}

}  // namespace kernelhub::builder
