// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/variants/system_detect.hpp>

#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace kernelhub::variants {

namespace {

using nlohmann::json;

// Asks what the reference loader asks, in the same way, and prints it as one JSON line.
constexpr std::string_view k_probe = R"PY(
import json, platform, sys, sysconfig
out = {
    "executable": sys.executable,
    "machine": platform.machine(),
    "system": platform.system(),
    "mac_ver": platform.mac_ver()[0],
    "free_threaded": sys.version_info < (3, 15) and bool(sysconfig.get_config_var("Py_GIL_DISABLED")),
}
try:
    import torch
except Exception:
    torch = None
if torch is not None:
    t = {
        "version": str(torch.__version__),
        "cxx11": bool(torch.compiled_with_cxx11_abi()),
        "cuda": torch.version.cuda,
        "hip": torch.version.hip,
        "xpu": getattr(torch.version, "xpu", None),
        "tpu": hasattr(torch.backends, "tpu"),
        "neuron": hasattr(torch, "neuron"),
        "mps": bool(torch.backends.mps.is_available()),
        "privateuse1": None,
        "cann": None,
    }
    try:
        if t["cuda"] or t["hip"]:
            t["device"] = bool(torch.cuda.is_available())
        elif t["xpu"]:
            t["device"] = bool(torch.xpu.is_available())
    except Exception:
        t["device"] = False
    try:
        t["privateuse1"] = torch._C._get_privateuse1_backend_name()
    except Exception:
        pass
    if t["privateuse1"] == "npu":
        try:
            from torch_npu.utils.collect_env import get_cann_version
            v = get_cann_version()
            t["cann"] = f"{v[0]}.{v[2]}"
        except Exception:
            pass
    out["torch"] = t
else:
    try:
        import ctypes, ctypes.util
        name = ctypes.util.find_library("cudart")
        if name:
            v = ctypes.c_int(0)
            if ctypes.CDLL(name).cudaRuntimeGetVersion(ctypes.byref(v)) == 0:
                out["cudart"] = f"{v.value // 1000}.{(v.value % 1000) // 10}"
    except Exception:
        pass
# The installed version from package metadata: importing tvm_ffi only to ask costs ~30 ms (it
# loads its library and runs ldconfig), and only major.minor matters. The Version header is
# read from METADATA's head: importlib.metadata.version() parses the whole file as an e-mail
# (about 0.6 ms of every load).
try:
    if "tvm_ffi" in sys.modules:
        out["tvm_ffi"] = str(sys.modules["tvm_ffi"].__version__)
    else:
        import importlib.metadata
        for dist in importlib.metadata.distributions(name="apache-tvm-ffi"):
            head = (dist.read_text("METADATA") or "").partition("\n\n")[0]
            for line in head.splitlines():
                if line.lower().startswith("version:"):
                    out["tvm_ffi"] = line[len("version:"):].strip()
                    break
            break
except Exception:
    pass
print(json.dumps(out))
)PY";

std::string lowercase(std::string text) {
  for (auto& c : text) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return text;
}

std::string string_or_empty(const json& object, const char* key) {
  const auto found = object.find(key);
  return found != object.end() && found->is_string() ? found->get<std::string>() : std::string();
}

// Position after the first run of ASCII digits starting at `from`, or `from` if none.
std::size_t skip_digits(std::string_view text, std::size_t from) {
  while (from < text.size() && std::isdigit(static_cast<unsigned char>(text[from]))) {
    ++from;
  }
  return from;
}

// The first "<digits>.<digits>" in `text` at or after `from`.
std::optional<ReleaseVersion> first_major_minor(std::string_view text, std::size_t from = 0) {
  for (std::size_t i = from; i < text.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(text[i])) ||
        (i > 0 && std::isdigit(static_cast<unsigned char>(text[i - 1])))) {
      continue;
    }
    const auto major_end = skip_digits(text, i);
    if (major_end < text.size() && text[major_end] == '.') {
      const auto minor_end = skip_digits(text, major_end + 1);
      if (minor_end > major_end + 1) {
        return ReleaseVersion::from_parts(text.substr(i, major_end - i),
                                          text.substr(major_end + 1, minor_end - major_end - 1));
      }
    }
  }
  return std::nullopt;
}

std::optional<ReleaseVersion> release_of(const json& object, const char* key) {
  auto text = string_or_empty(object, key);
  auto version = ReleaseVersion::parse(text.substr(0, text.find('-')));
  return version ? std::optional(*version) : std::nullopt;
}

// The loader's `_backend()` with torch installed, first match wins.
SystemBackend torch_backend(const json& t, const TorchBuild& torch) {
  if (t.value("tpu", false)) {
    return {types::Backend::tpu, {}};
  }
  if (t.value("neuron", false)) {
    return {types::Backend::neuron, {}};
  }
  if (torch.cuda) {
    return {types::Backend::cuda, *torch.cuda};
  }
  if (torch.hip) {
    return {types::Backend::rocm, *torch.hip};
  }
  if (torch.mps) {
    return {types::Backend::metal, {}};
  }
  if (torch.xpu) {
    // The reference reads "YYYY?M..." as YYYY.M: characters 0-3 and 5.
    const auto& xpu = *torch.xpu;
    auto version = ReleaseVersion::parse(fmt::format("{}.{}", xpu.substr(0, 4), xpu.size() > 5 ? xpu.substr(5, 1) : ""));
    if (version) {
      return {types::Backend::xpu, *version};
    }
  }
  if (string_or_empty(t, "privateuse1") == "npu") {
    if (auto cann = release_of(t, "cann")) {
      return {types::Backend::cann, *cann};
    }
  }
  return {types::Backend::cpu, {}};
}

}  // namespace

std::optional<std::string> own_environment_python() {
  std::error_code error;
  // Linux names the running executable here; elsewhere there is no sibling to prefer.
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error || exe.empty()) {
    return std::nullopt;
  }
  for (const char* name : {"python3", "python"}) {
    const auto python = exe.parent_path() / name;
    if (::access(python.c_str(), X_OK) == 0) {
      return python.string();
    }
  }
  return std::nullopt;
}

DetectOptions DetectOptions::from_environment() {
  DetectOptions options;
  if (const char* python = std::getenv("KERNELHUB_PYTHON"); python != nullptr && *python != '\0') {
    options.pythons = {python};
  } else if (auto own = own_environment_python()) {
    // `.venv/bin/kernelhub` run by its full path asks `.venv/bin/python3` first, not whatever
    // python3 PATH finds (issue 13 item 7).
    options.pythons.insert(options.pythons.begin(), std::move(*own));
  }
  for (const char* name : {"CUDA_HOME", "CUDA_PATH"}) {
    if (const char* home = std::getenv(name); home != nullptr && *home != '\0') {
      options.cuda_home = home;
      break;
    }
  }
  return options;
}

std::string_view python_probe_script() { return k_probe; }

util::Expected<void> apply_python_probe(std::string_view json_text, BuildHost& host) {
  const auto probe = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (probe.is_discarded() || !probe.is_object()) {
    return util::fail("the python probe printed no JSON object");
  }
  auto& system = host.system;
  system = SystemInfo{};
  host.python = string_or_empty(probe, "executable");
  system.cpu = string_or_empty(probe, "machine");
  system.os = lowercase(string_or_empty(probe, "system"));
  if (system.os == "darwin" && system.cpu == "arm64") {
    system.cpu = "aarch64";
  } else if (system.os == "windows" && system.cpu == "AMD64") {
    system.cpu = "x86_64";
  }
  if (system.os == "darwin") {
    system.macos_version = release_of(probe, "mac_ver");
  }
  system.free_threaded = probe.value("free_threaded", false);
  if (probe.contains("tvm_ffi")) {
    system.tvm_ffi_version = first_major_minor(string_or_empty(probe, "tvm_ffi"));
  }

  host.torch.reset();
  const auto t = probe.find("torch");
  if (t != probe.end() && t->is_object()) {
    const auto version = first_major_minor(string_or_empty(*t, "version"));
    if (!version) {
      return util::fail(fmt::format("cannot read torch version \"{}\"", string_or_empty(*t, "version")));
    }
    TorchBuild torch{*version, release_of(*t, "cuda"), release_of(*t, "hip"), std::nullopt,
                     t->value("mps", false), t->value("tpu", false)};
    if (auto xpu = string_or_empty(*t, "xpu"); !xpu.empty()) {
      torch.xpu = xpu;
    }
    system.torch_version = torch.version;
    if (system.os == "linux") {
      system.cxx11_abi = t->value("cxx11", true);
    }
    system.backend = torch_backend(*t, torch);
    system.backend_device = t->value("device", true);
    host.torch = std::move(torch);
  } else if (auto cudart = release_of(probe, "cudart")) {
    system.backend = {types::Backend::cuda, *cudart};
  }
  return {};
}

std::optional<ReleaseVersion> parse_nvcc_version(std::string_view output) {
  const auto release = output.find("release ");
  return release == std::string_view::npos ? std::nullopt : first_major_minor(output, release);
}

std::optional<ReleaseVersion> parse_icpx_version(std::string_view output) {
  return first_major_minor(output);
}

BuildHost detect_build_host(const ProgramRunner& runner, const DetectOptions& options) {
  BuildHost host;
  const std::string script(k_probe);
  for (const auto& python : options.pythons) {
    const auto output = runner.run({python, "-c", script});
    if (output && apply_python_probe(*output, host)) {
      break;
    }
  }
  if (host.python.empty()) {
    // No Python answered: the platform is still known, from the binary's own build.
    host.system = SystemInfo{};
#if defined(__aarch64__)
    host.system.cpu = "aarch64";
#endif
#if defined(__APPLE__)
    host.system.os = "darwin";
#endif
  }

  auto nvcc = runner.run({"nvcc", "--version"});
  if (!nvcc && options.cuda_home) {
    nvcc = runner.run({*options.cuda_home + "/bin/nvcc", "--version"});
  }
  host.toolchains.nvcc = nvcc ? parse_nvcc_version(*nvcc) : std::nullopt;
  host.toolchains.hipcc = runner.run({"hipcc", "--version"}).has_value();
  const auto icpx = runner.run({"icpx", "--version"});
  host.toolchains.icpx = icpx ? parse_icpx_version(*icpx) : std::nullopt;
  return host;
}

}  // namespace kernelhub::variants
