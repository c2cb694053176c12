// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/checks/import_check.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <system_error>
#include <utility>
#include <vector>

#include <sys/resource.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <kernelhub/metadata/metadata_reader.hpp>

namespace kernelhub::checks {

namespace {

namespace fs = std::filesystem;

// The script the process runs, in three parts. First the loader's import, as a user's script
// starts.
// How much nicer than kernel-builder the load check's interpreter is while the variant
// compiles (see ImportCheckWorker::start).
constexpr int k_importing_niceness_increment = 10;

// The cyclic garbage collector is off while torch and kernels are imported: that allocates
// enough objects to run it many times over, for nothing a one-shot check needs back. What they
// made is then frozen and the collector turned on again for the load itself (a kernel that
// makes cyclic garbage as it imports is collected as in a user's process), and the load's last
// step freezes the rest (k_load), so the interpreter's exit does not walk all of torch's
// objects once more: that walk was half a second of the check, after the verdict. The exit
// itself still runs, with the kernel's and torch's destructors, so a variant that crashes on
// the way out still fails.
constexpr std::string_view k_import_loader = R"py(import gc
gc.disable()
import pathlib, sys, traceback
try:
    import kernels
except ModuleNotFoundError as error:
    if error.name != "kernels":
        raise
    print("kernelhub-import-check: no kernels package")
    sys.exit(3)
)py";

// Then which variant, for which backend: argv[1] and argv[2] of a fresh process.
constexpr std::string_view k_request_from_argv = R"py(variant, backend = sys.argv[1], sys.argv[2]
)py";

// Or, for a process started ahead of the build (ImportCheckWorker), one line on stdin,
// "<variant>\t<backend>", once the variant exists. While it waits it imports torch, which
// get_local_kernel imports for every variant when torch is installed (kernels' variant
// resolution asks torch for its version and backend), so the load itself is unchanged; a torch
// that fails to import fails there again, as it would have.
constexpr std::string_view k_request_from_stdin = R"py(try:
    import torch
except ImportError:
    pass
request = sys.stdin.readline()
if not request.endswith("\n"):
    sys.exit(0)  # the builder went away without a variant to load
variant, backend = request[:-1].split("\t")
)py";

// Then the load. Printing the module's name last lets the caller see the load got that far.
constexpr std::string_view k_load = R"py(try:
    import torch
    ops_before = set(torch._C._dispatch_get_all_op_names())
except Exception:
    torch = None
gc.freeze()
gc.enable()
try:
    module = kernels.get_local_kernel(pathlib.Path(variant), backend=backend)
    # The ops must be where the package calls them (issue 22 §7): in the build's namespace,
    # the `ops` of its generated _ops module. A library that registers them under a namespace
    # of its own (TORCH_LIBRARY(name, m)) loads fine, and then every `ops.<name>` call raises
    # AttributeError. Each op of the namespace is resolved, as a call would.
    ops_module = sys.modules.get(module.__name__ + "._ops")
    ops = getattr(ops_module, "ops", None)
    if torch is not None and isinstance(ops, torch._ops._OpNamespace):
        namespace = ops.name
        added = sorted(set(torch._C._dispatch_get_all_op_names()) - ops_before)
        known = {name.split("::", 1)[0] for name in ops_before}
        own = [name for name in added if name.split("::", 1)[0] == namespace]
        for name in own:
            getattr(ops, name.split("::", 1)[1].split(".", 1)[0])
        elsewhere = [name for name in added if name.split("::", 1)[0] not in known | {namespace}]
        if elsewhere and not own:
            raise RuntimeError(
                "the kernel's ops are not in its build's namespace: this load registered "
                + ", ".join(elsewhere) + ", and torch.ops." + namespace
                + " (the package's `ops`, from its _ops module) has no op, so every call "
                "through `ops.<name>` raises AttributeError\n"
                "register them with TORCH_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, ops) "
                "(registration.h); `kernel-builder check-ops` finds the fixed namespace")
except BaseException as error:
    traceback.print_exc()
    # The offline resolvers' words (kernels 0.17) for a kernel-depends entry found nowhere.
    import re
    for pattern in (r"Version \S+ of '([^']+)' is not available in the local cache",
                    r"Cannot find a local snapshot for (\S+) ", r"Could not resolve kernel: (\S+) "):
        found = re.match(pattern, str(error))
        if found and isinstance(error, (FileNotFoundError, ValueError)) \
                and found.group(1) != variant:
            print("kernelhub-import-check: missing dependency:", found.group(1), flush=True)
            sys.exit(4)
    # The whole message, less a C++ trace that torch appends to errors raised in C++.
    message = []
    for line in str(error).strip().splitlines():
        if line.lstrip().startswith(("Exception raised from ", "frame #")):
            break
        message.append(line.rstrip())
    while message and not message[-1]:
        message.pop()
    summary = type(error).__name__ + (": " + "\n".join(message) if message else "")
    notes = "; ".join(getattr(error, "__notes__", []))
    if notes:
        summary += " (" + notes + ")"
    import json
    print("kernelhub-import-check: error:", json.dumps(summary), flush=True)
    sys.exit(1)
print("kernelhub-import-check: loaded", module.__name__)
gc.freeze()
)py";

// A temporary folder removed when the check ends.
class TemporaryFolder {
 public:
  TemporaryFolder() {
    std::string pattern = (fs::temp_directory_path() / "kernelhub-import-XXXXXX").string();
    if (::mkdtemp(pattern.data()) != nullptr) {
      m_path = pattern;
    }
  }
  TemporaryFolder(const TemporaryFolder&) = delete;
  TemporaryFolder& operator=(const TemporaryFolder&) = delete;
  ~TemporaryFolder() {
    std::error_code ec;
    if (!m_path.empty()) {
      fs::remove_all(m_path, ec);
    }
  }
  const fs::path& path() const { return m_path; }
  // The folder, no longer removed by this object.
  fs::path release() { return std::exchange(m_path, fs::path()); }

 private:
  fs::path m_path;
};

}  // namespace

std::string absolute_local_kernels(std::string_view local_kernels) {
  std::string out;
  std::size_t start = 0;
  while (start <= local_kernels.size()) {
    auto end = local_kernels.find(':', start);
    if (end == std::string_view::npos) {
      end = local_kernels.size();
    }
    auto entry = std::string(local_kernels.substr(start, end - start));
    const auto equals = entry.find('=');
    if (equals != std::string::npos && equals + 1 < entry.size()) {
      std::error_code ec;
      const auto path = fs::absolute(entry.substr(equals + 1), ec);
      if (!ec) {
        entry = entry.substr(0, equals + 1) + path.string();
      }
    }
    // Malformed entries pass unchanged: the loader's own error names them.
    out += out.empty() && start == 0 ? "" : ":";
    out += entry;
    start = end + 1;
  }
  return out;
}

namespace {

// True for the first line of the C++ trace that follows a c10::Error's message.
bool starts_trace(std::string_view line) {
  const auto first = line.find_first_not_of(" \t");
  line = first == std::string_view::npos ? std::string_view() : line.substr(first);
  return line.starts_with("Exception raised from ") || line.starts_with("frame #") ||
         line.starts_with("<omitting python frames>");
}

std::string_view trim_right(std::string_view text) {
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) {
    text.remove_suffix(1);
  }
  return text;
}

}  // namespace

std::optional<std::string> native_exception(std::string_view output) {
  // libstdc++'s terminate handler: "terminate called after throwing an instance of 'T'" and
  // "  what():  <message>". The message may span lines (a schema mismatch names the operator,
  // both schemas and the reason on lines of their own; a schema parse error starts with an
  // empty line and ends with the schema and a caret under the offending token), and a
  // c10::Error's message goes on with "Exception raised from ..." and the frames, which only
  // -v shows. Lines keep their indentation, so a caret still points at its token.
  constexpr std::string_view k_what = "what():";
  const auto what = output.find(k_what);
  if (what == std::string_view::npos) {
    return std::nullopt;
  }
  std::vector<std::string_view> lines;
  auto rest = output.substr(what + k_what.size());
  for (bool first = true; !rest.empty() || first; first = false) {
    const auto end = rest.find('\n');
    auto line = trim_right(rest.substr(0, end));
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    if (first) {
      const auto start = line.find_first_not_of(" \t");
      line = start == std::string_view::npos ? std::string_view() : line.substr(start);
    } else if (starts_trace(line)) {
      break;
    }
    lines.push_back(line);
  }
  while (!lines.empty() && lines.front().empty()) {
    lines.erase(lines.begin());
  }
  while (!lines.empty() && lines.back().empty()) {
    lines.pop_back();
  }
  std::string type;
  constexpr std::string_view k_terminate = "terminate called after throwing an instance of '";
  if (const auto at = output.rfind(k_terminate, what); at != std::string_view::npos) {
    const auto start = at + k_terminate.size();
    const auto end = output.find('\'', start);
    if (end != std::string_view::npos && end < what) {
      type = std::string(output.substr(start, end - start));
    }
  }
  return fmt::format("{}{}", type.empty() ? "" : type + ": ", fmt::join(lines, "\n"));
}

std::string indent_continuation(std::string_view text, std::string_view indent) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    out += c;
    if (c == '\n') {
      out += indent;
    }
  }
  return out;
}

std::string last_line(std::string_view output) {
  while (!output.empty()) {
    const auto end = output.find_last_not_of("\r\n \t");
    if (end == std::string_view::npos) {
      return {};
    }
    output = output.substr(0, end + 1);
    const auto start = output.find_last_of('\n');
    auto line = output.substr(start == std::string_view::npos ? 0 : start + 1);
    if (!line.empty()) {
      return std::string(line);
    }
  }
  return {};
}

namespace {

// The interpreter as the script names it: absolute when it is a path, since the script runs in
// another folder.
std::string script_python(const std::string& python) {
  std::error_code ec;
  return python.find('/') != std::string::npos ? fs::absolute(python, ec).string() : python;
}

// The environment and folder every load check runs in: `home` as HOME and working folder.
Script base_script(const std::string& python, const fs::path& home, std::string code) {
  Script script;
  script.argv = {script_python(python), "-c", std::move(code)};
  script.cwd = home;
  script.env = {{"HOME", home.string()}, {"HF_HUB_OFFLINE", "1"},
                {"PYTHONDONTWRITEBYTECODE", "1"}};
  script.unset_env = {"PYTHONPATH", "PYTHONHOME", "LOCAL_KERNELS"};
  return script;
}

// What the script's exit status and output say.
ImportCheckResult read_outcome(ScriptOutput output, std::string backend) {
  ImportCheckResult result;
  result.backend = std::move(backend);
  result.output = std::move(output.output);
  result.loaded = output.exit_code == 0;
  result.loader_missing =
      output.exit_code == 3 &&
      result.output.find("kernelhub-import-check: no kernels package") != std::string::npos;
  constexpr std::string_view k_missing = "kernelhub-import-check: missing dependency: ";
  if (const auto at = result.output.rfind(k_missing);
      output.exit_code == 4 && at != std::string::npos) {
    const auto start = at + k_missing.size();
    result.missing_dependency =
        result.output.substr(start, result.output.find('\n', start) - start);
  }
  constexpr std::string_view k_loaded = "kernelhub-import-check: loaded ";
  if (!result.missing_dependency.empty()) {
    result.error = fmt::format(
        "its kernel-depends \"{}\" is neither in LOCAL_KERNELS nor in the Hub cache",
        result.missing_dependency);
  } else if (!result.loaded && result.output.find(k_loaded) != std::string::npos) {
    // The load went through and the process then died on its way out: the kernel's static
    // destructors or exit handlers, which would end a user's program the same way.
    const auto how = output.signal != 0
                         ? fmt::format("was killed by signal {} ({})", output.signal,
                                       ::strsignal(output.signal))
                         : fmt::format("exited with status {}", output.exit_code);
    result.error = fmt::format(
        "the import went through, then python {} on its way out (a static destructor or an "
        "exit handler of the kernel's?)",
        how);
  } else if (!result.loaded && !result.loader_missing) {
    // The script's own summary ("Type: message (notes)") when it got that far; the loader adds
    // notes after the exception line, so a traceback's last line alone can be just a note.
    constexpr std::string_view k_marker = "kernelhub-import-check: error: ";
    const auto marker = result.output.rfind(k_marker);
    if (marker != std::string::npos) {
      // One JSON string: the message may span lines.
      const auto start = marker + k_marker.size();
      const auto line = result.output.substr(start, result.output.find('\n', start) - start);
      const auto summary = nlohmann::json::parse(line, nullptr, false);
      result.error = summary.is_string() ? summary.get<std::string>() : line;
    } else {
      result.error = native_exception(result.output).value_or(last_line(result.output));
    }
    result.backend_unsupported = result.error.find("Invalid backend '") != std::string::npos;
    if (result.error.empty()) {
      result.error = fmt::format("python exited with status {}", output.exit_code);
    }
  }
  return result;
}

}  // namespace

util::Expected<std::unique_ptr<ImportCheckWorker>> ImportCheckWorker::start(
    const ImportCheckOptions& options) {
  auto home = std::make_unique<TemporaryFolder>();
  if (home->path().empty()) {
    return util::fail("cannot create a temporary folder for the import check");
  }
  auto process = KH_TRY(StartedScript::start(base_script(
      options.python, home->path(),
      fmt::format("{}{}{}", k_import_loader, k_request_from_stdin, k_load))));
  // While the variant compiles, the imports take only what the compiler leaves: at the same
  // priority they slowed the compile (the critical path) on a two-core machine as much as
  // they saved. The check gets our own priority back when it is handed the variant.
  errno = 0;
  const int own_niceness = ::getpriority(PRIO_PROCESS, 0);
  const int niceness = errno == 0 ? own_niceness : 0;
  process.set_niceness(std::min(niceness + k_importing_niceness_increment, 19));
  return std::unique_ptr<ImportCheckWorker>(
      new ImportCheckWorker(options.python, home->release(), std::move(process), niceness));
}

ImportCheckWorker::ImportCheckWorker(std::string python, fs::path home, StartedScript process,
                                     int niceness)
    : m_python(std::move(python)),
      m_home(std::move(home)),
      m_process(std::move(process)),
      m_niceness(niceness) {}

ImportCheckWorker::~ImportCheckWorker() {
  m_process.reset();  // the process first: it works in the folder
  std::error_code ec;
  fs::remove_all(m_home, ec);
}

util::Expected<ImportCheckResult> check_variant_import(const fs::path& variant,
                                                       const ImportCheckOptions& options,
                                                       ScriptRunner& runner,
                                                       std::unique_ptr<ImportCheckWorker> warm) {
  auto metadata = metadata::read_metadata_file(variant / "metadata.json");
  if (!metadata) {
    return util::fail(metadata.error().message);
  }
  auto backend = options.backend.value_or(std::string(types::to_string(metadata->backend.type)));
  std::error_code ec;
  const auto variant_path = fs::absolute(variant, ec).string();
  // A variant with kernel-depends needs LOCAL_KERNELS and KERNELS_CACHE set before kernels is
  // imported, which the worker was not given: it gets a fresh process.
  if (warm && warm->m_process && warm->m_python == options.python &&
      metadata->kernel_depends.empty() && variant_path.find_first_of("\t\n") == std::string::npos &&
      backend.find_first_of("\t\n") == std::string::npos) {
    // Lowering the nice value again needs CAP_SYS_NICE or RLIMIT_NICE room; without them the
    // check finishes at the lower priority, which only matters on a busy machine.
    warm->m_process->set_niceness(warm->m_niceness);
    auto output = warm->m_process->finish(fmt::format("{}\t{}\n", variant_path, backend));
    warm->m_process.reset();
    return read_outcome(std::move(output), std::move(backend));
  }
  warm.reset();
  TemporaryFolder home;
  if (home.path().empty()) {
    return util::fail("cannot create a temporary folder for the import check");
  }
  auto script = base_script(options.python, home.path(),
                            fmt::format("{}{}{}", k_import_loader, k_request_from_argv, k_load));
  script.argv.push_back(variant_path);
  script.argv.push_back(backend);
  if (!metadata->kernel_depends.empty()) {
    // The variant's own files come first in get_local_kernel's resolvers, so these places can
    // answer only for its dependencies.
    if (options.local_kernels && !options.local_kernels->empty()) {
      script.unset_env.pop_back();
      script.env["LOCAL_KERNELS"] = absolute_local_kernels(*options.local_kernels);
    }
    if (options.kernels_cache) {
      script.env["KERNELS_CACHE"] = fs::absolute(*options.kernels_cache, ec).string();
    }
  }
  auto output = runner.run(script);
  if (!output) {
    return util::fail(output.error().message);
  }
  return read_outcome(std::move(*output), std::move(backend));
}

}  // namespace kernelhub::checks
