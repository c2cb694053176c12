// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <kernelhub/codegen/init_project.hpp>
#include <kernelhub/codegen/template_engine.hpp>

namespace kernelhub::codegen {
namespace {

using types::Backend;

InitProject project_with(std::vector<Backend> backends) {
  return InitProject{KernelRepoName::parse("me/my-kernel").value(), "Apache-2.0",
                     std::move(backends)};
}

FileSet render(std::vector<Backend> backends) {
  auto files = render_init_project(project_with(std::move(backends)));
  EXPECT_TRUE(files.has_value()) << (files ? "" : files.error().message);
  return files ? std::move(*files) : FileSet{};
}

const std::string& content(const FileSet& files, std::string_view path) {
  static const std::string missing = "<missing>";
  const auto* file = files.find(path);
  return file == nullptr ? missing : file->content;
}

bool contains(const std::string& text, std::string_view needle) {
  return text.find(needle) != std::string::npos;
}

TEST(InitProject, BuildTomlIsExact) {
  const auto files = render({Backend::cuda, Backend::cpu});
  EXPECT_EQ(content(files, "build.toml"), R"([general]
name = "my-kernel"
version = 1
edition = 5
license = "Apache-2.0"
backends = [
    "cuda",
    "cpu",
]

[general.hub]
repo-id = "me/my-kernel"

[torch]
src = [
    "torch-ext/torch_binding.cpp",
    "torch-ext/torch_binding.h",
]

[kernel.my_kernel_cpu]
backend = "cpu"
depends = ["torch"]
src = ["my_kernel_cpu/my_kernel_cpu.cpp"]

[kernel.my_kernel_cuda]
backend = "cuda"
depends = ["torch"]
src = ["my_kernel_cuda/my_kernel.cu"]
)");
}

TEST(InitProject, EscapesTheLicenseInToml) {
  auto project = project_with({Backend::cpu});
  project.license = "Custom \"quoted\" \\ license";
  const auto files = render_init_project(project);
  ASSERT_TRUE(files.has_value());
  EXPECT_TRUE(contains(content(*files, "build.toml"),
                       "license = \"Custom \\\"quoted\\\" \\\\ license\"\n"));
}

TEST(InitProject, WritesOneSourceFolderPerBackend) {
  const auto all = render({Backend::cpu, Backend::cuda, Backend::metal, Backend::rocm, Backend::xpu});
  std::vector<std::string> paths;
  for (const auto& file : all.files()) {
    paths.push_back(file.path);
  }
  EXPECT_EQ(paths, (std::vector<std::string>{
                       ".gitattributes", ".gitignore", "CARD.md", "benchmarks/benchmark.py",
                       "build.toml", "example.py", "my_kernel_cpu/my_kernel_cpu.cpp",
                       "my_kernel_cuda/my_kernel.cu", "my_kernel_metal/my_kernel.metal",
                       "my_kernel_metal/my_kernel.mm", "my_kernel_xpu/my_kernel.cpp",
                       "tests/__init__.py", "tests/test_my_kernel.py",
                       "torch-ext/my_kernel/__init__.py", "torch-ext/my_kernel/layers.py",
                       "torch-ext/torch_binding.cpp",
                       "torch-ext/torch_binding.h"}));
  EXPECT_EQ(all.find("example.py")->executable, Executable::yes);
  EXPECT_EQ(all.find("build.toml")->executable, Executable::no);

  // ROCm alone still brings the CUDA source, which it compiles through hipify.
  const auto rocm = render({Backend::rocm});
  EXPECT_NE(rocm.find("my_kernel_cuda/my_kernel.cu"), nullptr);
  EXPECT_EQ(rocm.find("my_kernel_cpu/my_kernel_cpu.cpp"), nullptr);
  EXPECT_TRUE(contains(content(rocm, "build.toml"),
                       "[kernel.my_kernel_rocm]\nbackend = \"rocm\"\ndepends = [\"torch\"]\n"
                       "src = [\"my_kernel_cuda/my_kernel.cu\"]\n"));
  EXPECT_FALSE(contains(content(rocm, "build.toml"), "backend = \"cuda\""));
}

TEST(InitProject, BindingRegistersOnlyTheChosenBackends) {
  const auto files = render({Backend::metal, Backend::cpu});
  const auto& binding = content(files, "torch-ext/torch_binding.cpp");
  EXPECT_TRUE(contains(binding, "#include \"registration.h\"\n"));
  EXPECT_TRUE(contains(binding, "TORCH_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, ops) {\n"));
  EXPECT_TRUE(contains(binding, "  ops.def(\"my_kernel(Tensor! out, Tensor input) -> ()\");\n"));
  EXPECT_TRUE(contains(binding, "#if defined(CPU_KERNEL)\n"
                                "  ops.impl(\"my_kernel\", c10::DeviceType::CPU, &my_kernel);\n"
                                "#endif\n"));
  EXPECT_TRUE(contains(binding, "#if defined(METAL_KERNEL)\n"
                                "  ops.impl(\"my_kernel\", c10::DeviceType::MPS, &my_kernel);\n"));
  EXPECT_FALSE(contains(binding, "CUDA_KERNEL"));
  EXPECT_FALSE(contains(binding, "XPU_KERNEL"));
  EXPECT_TRUE(contains(binding, "REGISTER_EXTENSION(TORCH_EXTENSION_NAME)\n"));
  EXPECT_TRUE(contains(content(files, "torch-ext/torch_binding.h"),
                       "void my_kernel(at::Tensor &out, at::Tensor const &input);\n"));
}

TEST(InitProject, PythonFilesNameThePackage) {
  const auto files = render({Backend::cuda});
  const auto& package = content(files, "torch-ext/my_kernel/__init__.py");
  EXPECT_TRUE(contains(package, "from ._ops import ops\n"));
  EXPECT_TRUE(contains(package, "__all__ = [\"my_kernel\", \"layers\"]\n"));
  EXPECT_TRUE(contains(package, "\nfrom . import layers  # noqa: E402"));
  // A layer for kernelize (issue 22 §9: the quickstart kernelizes the new kernel).
  const auto& layers = content(files, "torch-ext/my_kernel/layers.py");
  EXPECT_TRUE(contains(layers, "class MyKernel(nn.Module):\n"));
  EXPECT_TRUE(contains(layers, "    def forward(self, x: torch.Tensor) -> torch.Tensor:\n"));
  EXPECT_TRUE(contains(layers, "        ops.my_kernel(out, x)\n"));
  EXPECT_TRUE(contains(package, "def my_kernel(x: torch.Tensor, out: Optional[torch.Tensor] = None)"));
  EXPECT_TRUE(contains(package, "    ops.my_kernel(out, x)\n"));

  const auto& test = content(files, "tests/test_my_kernel.py");
  EXPECT_TRUE(contains(test, "from my_kernel import my_kernel\n"));
  EXPECT_TRUE(contains(test, "@pytest.mark.kernels_ci\n"));
  EXPECT_TRUE(contains(test, "    if torch.cuda.is_available():\n        return \"cuda\"\n"));
  EXPECT_FALSE(contains(test, "return \"cpu\""));  // no cpu backend, so no cpu fallback
  EXPECT_TRUE(contains(test, "pytest.skip(\"none of this kernel's devices (cuda) is present\")"));

  EXPECT_TRUE(contains(content(files, "benchmarks/benchmark.py"),
                       "class MyKernelBenchmark(Benchmark):\n"));
  EXPECT_TRUE(contains(content(files, "example.py"), "    y = kernel.my_kernel(x)\n"));
  // The variant of the device it computes on, not the one torch's build suggests (issue 13
  // item 9: a CUDA torch without a GPU got the cuda variant for CPU tensors).
  EXPECT_TRUE(contains(content(files, "example.py"),
                       "    kernel = get_local_kernel(Path(__file__).resolve().parent, "
                       "backend=backend)\n"));
  EXPECT_EQ(content(files, "tests/__init__.py"), "");
  EXPECT_TRUE(contains(content(files, ".gitignore"), "/build/\n"));
}

TEST(InitProject, NoTemplateSyntaxSurvivesOutsideTheCard) {
  for (unsigned mask = 1; mask < 32; ++mask) {
    std::vector<Backend> backends;
    for (unsigned bit = 0; bit < 5; ++bit) {
      if ((mask & (1u << bit)) != 0) {
        backends.push_back(k_init_backends[bit]);
      }
    }
    const auto files = render(backends);
    for (const auto& file : files.files()) {
      if (file.path == "CARD.md") {
        continue;
      }
      EXPECT_FALSE(contains(file.content, "{{")) << file.path << " for mask " << mask;
      EXPECT_FALSE(contains(file.content, "{%")) << file.path << " for mask " << mask;
      EXPECT_FALSE(contains(file.content, "{#")) << file.path << " for mask " << mask;
      EXPECT_FALSE(file.content.empty() && file.path != "tests/__init__.py") << file.path;
      EXPECT_EQ(file.content.empty() || file.content.back() == '\n', true) << file.path;
    }
  }
}

TEST(InitProject, CardKeepsFillCardPlaceholdersAndRendersLater) {
  const auto files = render({Backend::cpu});
  const auto& card = content(files, "CARD.md");
  EXPECT_TRUE(card.starts_with("---\nlibrary_name: kernels\n{% if license %}\n"));
  EXPECT_TRUE(contains(card, "\n# my-kernel\n"));
  EXPECT_TRUE(contains(card, "get_kernel(\"{{ repo_id }}\", version={{ version }}"));
  EXPECT_FALSE(contains(card, "{% raw %}"));

  // What fill-card will do with it: render once more, with the card context. Only the
  // reference's names here (its fill-card knows no others): the examples then assume
  // huggingface.co and an untrusted publisher.
  const nlohmann::json context = {{"repo_id", "me/my-kernel"},  {"version", 1},
                                  {"functions", {"my_kernel"}},   {"layers", nullptr},
                                  {"has_benchmark", true},        {"upstream", nullptr},
                                  {"source", "https://github.com/me/my-kernel"},
                                  {"license", "apache-2.0"}};
  const auto filled = render_template(card, "CARD.md", context);
  ASSERT_TRUE(filled.has_value()) << filled.error().message;
  EXPECT_TRUE(filled->starts_with("---\nlibrary_name: kernels\nlicense: apache-2.0\n---\n"));
  EXPECT_TRUE(contains(*filled, "kernel = get_kernel(\"me/my-kernel\", version=1, "
                                "trust_remote_code=True)\n"
                                "help(kernel.my_kernel)  # then call kernel.my_kernel(...)\n"));
  EXPECT_TRUE(contains(*filled, "[`me/my-kernel`](https://huggingface.co/me/my-kernel)"));
  EXPECT_FALSE(contains(*filled, "HF_ENDPOINT"));
  EXPECT_TRUE(contains(*filled, "## Functions\n\n- `my_kernel`\n"));
  EXPECT_TRUE(contains(*filled, "`kernels benchmark me/my-kernel --version 1`"));
  EXPECT_TRUE(contains(*filled, "## Source\n"));
  EXPECT_FALSE(contains(*filled, "## Upstream"));
  EXPECT_FALSE(contains(*filled, "## Layers"));
  EXPECT_FALSE(contains(*filled, "{{"));
  EXPECT_FALSE(contains(*filled, "{%"));
}

// A fake template folder, to check the manifest's rules without the real templates.
TEST(InitProject, ManifestSelectsAndNamesFiles) {
  const std::vector<util::EmbeddedFile> fake = {
      {"manifest.toml",
       "[[file]]\ntemplate = \"a.txt\"\npath = \"out/{{ kernel_name_normalized }}.txt\"\n"
       "executable = true\n"
       "[[file]]\ntemplate = \"a.txt\"\npath = \"only-xpu.txt\"\nwhen = \"has_xpu\"\n"},
      {"a.txt", "{% for b in backends %}{{ b }}{% if not loop.last %},{% endif %}{% endfor %}\n"},
  };
  const auto files = render_init_project(project_with({Backend::cpu, Backend::rocm}), fake);
  ASSERT_TRUE(files.has_value()) << files.error().message;
  ASSERT_EQ(files->files().size(), 1u);
  EXPECT_EQ(files->files()[0].path, "out/my_kernel.txt");
  EXPECT_EQ(files->files()[0].content, "cpu,rocm");  // trim_blocks ate the newline
  EXPECT_EQ(files->files()[0].executable, Executable::yes);
}

TEST(InitProject, ManifestErrorsNameTheEntry) {
  const auto fails_with = [](std::string manifest, std::string_view expected) {
    const std::vector<util::EmbeddedFile> fake = {{"manifest.toml", manifest},
                                                  {"a.txt", "{{ nope }}"},
                                                  {"ok.txt", "fine"}};
    const auto files = render_init_project(project_with({Backend::cpu}), fake);
    ASSERT_FALSE(files.has_value()) << manifest;
    EXPECT_EQ(files.error().message, expected);
  };
  fails_with("[[file]]\ntemplate = \"a.txt\"\npath = \"x\"\nmode = 1\n",
             "templates/init/manifest.toml file #1: unknown key \"mode\"");
  fails_with("[[file]]\ntemplate = \"b.txt\"\npath = \"x\"\n",
             "templates/init/manifest.toml file #1: no template \"b.txt\"");
  fails_with("[[file]]\ntemplate = \"a.txt\"\npath = \"x\"\n",
             "templates/init/a.txt:1:4: \"nope\" is undefined");
  fails_with("[[file]]\ntemplate = \"a.txt\"\npath = \"x\"\nwhen = \"false\"\n"
             "[[file]]\ntemplate = \"ok.txt\"\npath = \"../x\"\n",
             "templates/init/manifest.toml file #2: invalid generated path \"../x\"");
  fails_with("[[file]]\ntemplate = \"ok.txt\"\npath = \"x\"\nwhen = \"has_cpuu.\"\n",
             "templates/init/manifest.toml file #1: invalid \"when\" expression \"has_cpuu.\": "
             "expected an attribute name after \".\", got end of tag");
  fails_with("file = 3\n", "templates/init/manifest.toml: no [[file]] entries");
}

}  // namespace
}  // namespace kernelhub::codegen
