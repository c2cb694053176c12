// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/builder/torch_environment.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace kernelhub::builder {

std::string normalise_cpu(const std::string& machine) {
  if (machine == "amd64" || machine == "AMD64") {
    return "x86_64";
  }
  if (machine == "arm64" || machine == "ARM64") {
    return "aarch64";
  }
  return machine;
}

namespace {

std::optional<std::string> optional_string(const nlohmann::json& json, const char* key) {
  const auto it = json.find(key);
  if (it == json.end() || !it->is_string()) {
    return std::nullopt;
  }
  return it->get<std::string>();
}

}  // namespace

// Importing torch costs seconds of CPU (3 here); the probe needs none of it. torch's version.py
// is plain assignments (torch.version reads them), cmake_prefix_path is a folder beside it, and
// the C++ ABI shows in libc10's symbol names: std::__cxx11:: appears only where torch was built
// with _GLIBCXX_USE_CXX11_ABI=1. Anything unlike that layout (no version.py, no libc10.so: a
// macOS or Windows torch, a source tree) falls back to importing torch, whose failure is the
// probe's: torch is missing or cannot load.
std::string_view torch_probe_script() {
  return R"(import json, os, platform, sysconfig
from importlib.util import find_spec

def read_files():
    spec = find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return None
    root = list(spec.submodule_search_locations)[0]
    version = {}
    with open(os.path.join(root, "version.py")) as file:
        exec(compile(file.read(), file.name, "exec"), version)
    with open(os.path.join(root, "lib", "libc10.so"), "rb") as file:
        cxx11_abi = b"St7__cxx11" in file.read()
    return {"torch": version["__version__"], "cxx11_abi": cxx11_abi,
            "cuda": version.get("cuda"), "hip": version.get("hip"),
            "cmake_prefix_path": os.path.join(root, "share", "cmake")}

try:
    facts = read_files()
except Exception:
    facts = None
if facts is None:
    import torch, torch.utils
    facts = {"torch": torch.__version__,
             "cxx11_abi": bool(getattr(torch._C, "_GLIBCXX_USE_CXX11_ABI", True)),
             "cuda": torch.version.cuda, "hip": getattr(torch.version, "hip", None),
             "cmake_prefix_path": torch.utils.cmake_prefix_path}
facts.update({"machine": platform.machine(), "system": platform.system().lower(),
              "python_include": sysconfig.get_paths()["include"]})
print(json.dumps(facts))
)";
}

util::Expected<TorchEnvironment> parse_torch_probe(std::string_view json_text) {
  const auto json = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) {
    return util::fail("the torch probe printed no JSON object");
  }
  TorchEnvironment env;
  const auto torch = optional_string(json, "torch");
  if (!torch) {
    return util::fail("the torch probe did not report torch.__version__");
  }
  // "2.15.0+cu132" -> 2.15: variant names carry major.minor only.
  const auto first_dot = torch->find('.');
  const auto second = first_dot == std::string::npos ? std::string::npos
                                                     : torch->find_first_not_of("0123456789", first_dot + 1);
  if (first_dot == std::string::npos || first_dot == 0) {
    return util::fail(fmt::format("cannot read torch version \"{}\"", *torch));
  }
  env.torch_version = variants::ReleaseVersion::from_parts(
      std::string_view(*torch).substr(0, first_dot),
      std::string_view(*torch).substr(first_dot + 1, second == std::string::npos
                                                          ? std::string::npos
                                                          : second - first_dot - 1));
  env.torch_release = *torch;
  env.cxx11_abi = json.value("cxx11_abi", true);
  env.cuda = optional_string(json, "cuda");
  env.hip = optional_string(json, "hip");
  env.cpu = normalise_cpu(optional_string(json, "machine").value_or(""));
  env.os = optional_string(json, "system").value_or("");
  env.cmake_prefix_path = optional_string(json, "cmake_prefix_path").value_or("");
  env.python_include = optional_string(json, "python_include").value_or("");
  if (env.cpu.empty() || env.os.empty()) {
    return util::fail("the torch probe did not report the platform");
  }
  return env;
}

}  // namespace kernelhub::builder
