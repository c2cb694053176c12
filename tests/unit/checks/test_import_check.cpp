// SPDX-License-Identifier: Apache-2.0
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <sys/resource.h>
#include <unistd.h>

#include <kernelhub/checks/import_check.hpp>

namespace kernelhub::checks {
namespace {

using ::testing::HasSubstr;

// Answers every script with a fixed output and records what it was asked to run.
class FakeScriptRunner final : public ScriptRunner {
 public:
  FakeScriptRunner(int exit_code, std::string output)
      : m_output{exit_code, std::move(output)} {}
  util::Expected<ScriptOutput> run(const Script& script) override {
    last = script;
    return m_output;
  }
  Script last;

 private:
  ScriptOutput m_output;
};

void write_variant(const std::string& backend) {
  std::filesystem::create_directories("variant");
  std::ofstream("variant/metadata.json")
      << R"({"name": "relu", "id": "_relu_cpu_abc", "version": 1, "license": "MIT",
            "python-depends": [], "backend": {"type": ")"
      << backend << R"("}})";
}

TEST(ImportCheck, RunsTheReferenceLoaderInACleanProcess) {
  write_variant("cpu");
  FakeScriptRunner runner(0, "kernelhub-import-check: loaded _relu_cpu_abc\n");
  auto result = check_variant_import("variant", {"/usr/bin/python3", std::nullopt}, runner);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_TRUE(result->loaded);
  EXPECT_EQ(result->backend, "cpu");
  const auto& argv = runner.last.argv;
  ASSERT_EQ(argv.size(), 5u);
  EXPECT_EQ(argv[0], "/usr/bin/python3");
  EXPECT_THAT(argv[2], HasSubstr("variant, backend = sys.argv[1], sys.argv[2]\n"));
  EXPECT_THAT(argv[2], HasSubstr("kernels.get_local_kernel(pathlib.Path(variant), "
                                 "backend=backend)"));
  EXPECT_EQ(argv[3], std::filesystem::absolute("variant").string());
  EXPECT_EQ(argv[4], "cpu");
  EXPECT_EQ(runner.last.env.at("HF_HUB_OFFLINE"), "1");
  EXPECT_EQ(runner.last.env.at("PYTHONDONTWRITEBYTECODE"), "1");
  EXPECT_EQ(runner.last.env.at("HOME"), runner.last.cwd.string());
  EXPECT_THAT(runner.last.unset_env, ::testing::Contains("PYTHONPATH"));
  EXPECT_FALSE(std::filesystem::exists(runner.last.cwd));  // the temporary HOME is gone
}

TEST(ImportCheck, AFailureKeepsTheTracebacksLastLine) {
  write_variant("cuda");
  FakeScriptRunner runner(1,
                          "Traceback (most recent call last):\n  File \"x\", line 1\n"
                          "ModuleNotFoundError: No module named 'numpy'\n\n");
  auto result = check_variant_import("variant", {"python3", "cpu"}, runner);
  ASSERT_TRUE(result);
  EXPECT_FALSE(result->loaded);
  EXPECT_EQ(result->backend, "cpu");  // the option wins over metadata.json
  EXPECT_EQ(result->error, "ModuleNotFoundError: No module named 'numpy'");
  EXPECT_FALSE(result->loader_missing);
  EXPECT_FALSE(result->backend_unsupported);
}

// The load printed its success, then the interpreter died on the way out (a kernel's static
// destructor that aborts): a failure, named as one, not the "loaded" line as a reason.
TEST(ImportCheck, ADeathAfterTheLoadIsAFailureOnTheWayOut) {
  write_variant("cpu");
  class DiesAtExit final : public ScriptRunner {
   public:
    util::Expected<ScriptOutput> run(const Script&) override {
      return ScriptOutput{-1, "kernelhub-import-check: loaded _relu_cpu_abc\n", SIGABRT};
    }
  } runner;
  auto result = check_variant_import("variant", {"python3", std::nullopt}, runner);
  ASSERT_TRUE(result);
  EXPECT_FALSE(result->loaded);
  EXPECT_THAT(result->error, HasSubstr("then python was killed by signal 6 ("));
  EXPECT_THAT(result->error, HasSubstr("on its way out"));
}

TEST(ImportCheck, TheScriptsSummaryWinsOverTheTracebacksLastLine) {
  write_variant("cpu");
  // The loader adds a note after the exception line; the script prints both on one line.
  FakeScriptRunner runner(1,
                          "Traceback (most recent call last):\nRuntimeError: boom\n"
                          "while importing kernel 'k'\n"
                          "kernelhub-import-check: error: RuntimeError: boom (while importing "
                          "kernel 'k')\n");
  auto result = check_variant_import("variant", {}, runner);
  ASSERT_TRUE(result);
  EXPECT_EQ(result->error, "RuntimeError: boom (while importing kernel 'k')");
}

TEST(ImportCheck, MissingLoaderAndUnsupportedBackendAreToldApart) {
  write_variant("rocm");
  FakeScriptRunner no_kernels(3, "kernelhub-import-check: no kernels package\n");
  EXPECT_TRUE(check_variant_import("variant", {}, no_kernels)->loader_missing);
  FakeScriptRunner rocm(1, "ValueError: Invalid backend 'rocm', system supported backends: cpu\n");
  EXPECT_TRUE(check_variant_import("variant", {}, rocm)->backend_unsupported);
}

void write_variant_with_depends() {
  std::filesystem::create_directories("variant");
  std::ofstream("variant/metadata.json")
      << R"({"name": "user", "id": "_user_abc", "version": 1, "license": "MIT",
            "python-depends": [], "backend": {"type": "cpu"},
            "kernel-depends": [{"repo-id": "org/base", "version": 1}]})";
}

TEST(ImportCheck, KernelDependsAreLookedForInLocalKernelsAndTheHubCache) {
  write_variant_with_depends();
  FakeScriptRunner runner(0, "kernelhub-import-check: loaded _user_abc\n");
  ImportCheckOptions options;
  options.local_kernels = "org/base=rel/base:org/other=/abs/other";
  options.kernels_cache = "/home/user/.cache/huggingface/hub";
  ASSERT_TRUE(check_variant_import("variant", options, runner));
  EXPECT_EQ(runner.last.env.at("LOCAL_KERNELS"),
            "org/base=" + std::filesystem::absolute("rel/base").string() +
                ":org/other=/abs/other");
  EXPECT_EQ(runner.last.env.at("KERNELS_CACHE"), "/home/user/.cache/huggingface/hub");
  EXPECT_THAT(runner.last.unset_env, ::testing::Not(::testing::Contains("LOCAL_KERNELS")));
  EXPECT_EQ(runner.last.env.at("HF_HUB_OFFLINE"), "1");
}

TEST(ImportCheck, AVariantWithoutKernelDependsStaysHermetic) {
  write_variant("cpu");
  FakeScriptRunner runner(0, "kernelhub-import-check: loaded _relu_cpu_abc\n");
  ImportCheckOptions options;
  options.local_kernels = "org/base=/abs/base";
  options.kernels_cache = "/home/user/.cache/huggingface/hub";
  ASSERT_TRUE(check_variant_import("variant", options, runner));
  EXPECT_FALSE(runner.last.env.contains("LOCAL_KERNELS"));
  EXPECT_FALSE(runner.last.env.contains("KERNELS_CACHE"));
  EXPECT_THAT(runner.last.unset_env, ::testing::Contains("LOCAL_KERNELS"));
}

TEST(ImportCheck, AMissingDependencyIsToldApartFromAFailure) {
  write_variant_with_depends();
  FakeScriptRunner runner(4,
                          "FileNotFoundError: Cannot find a local snapshot for org/base ...\n"
                          "kernelhub-import-check: missing dependency: org/base\n");
  auto result = check_variant_import("variant", {}, runner);
  ASSERT_TRUE(result);
  EXPECT_FALSE(result->loaded);
  EXPECT_EQ(result->missing_dependency, "org/base");
  EXPECT_EQ(result->error,
            "its kernel-depends \"org/base\" is neither in LOCAL_KERNELS nor in the Hub cache");
  // The script knows the loader's words for it.
  EXPECT_THAT(runner.last.argv[2], HasSubstr("is not available in the local cache"));
  EXPECT_THAT(runner.last.argv[2], HasSubstr("Cannot find a local snapshot for "));
}

TEST(ImportCheck, AbsoluteLocalKernels) {
  EXPECT_EQ(absolute_local_kernels("a=/x:b=/y"), "a=/x:b=/y");
  EXPECT_EQ(absolute_local_kernels("a=y"), "a=" + std::filesystem::absolute("y").string());
  EXPECT_EQ(absolute_local_kernels("broken"), "broken");
}

TEST(ImportCheck, AVariantWithoutMetadataIsAnError) {
  std::filesystem::create_directories("empty");
  FakeScriptRunner runner(0, "");
  EXPECT_FALSE(check_variant_import("empty", {}, runner));
}

TEST(ImportCheck, AnAbortShowsTheExceptionMessageNotTheLastFrame) {
  write_variant("cpu");
  FakeScriptRunner runner(
      -1,
      "terminate called after throwing an instance of 'c10::Error'\n"
      "  what():  Explicitly provided namespace (mykernel) in schema string does not match "
      "namespace of enclosing TORCH_LIBRARY block (_relu_abc).  (Error occurred while "
      "processing TORCH_LIBRARY block at /k/torch-ext/torch_binding.cpp:9)\n"
      "Exception raised from _def at aten/src/ATen/core/library.cpp:142 (most recent call "
      "first):\n"
      "frame #0: c10::Error::Error(c10::SourceLocation) + 0x9d (0x7f in libc10.so)\n"
      "frame #52: __libc_start_main + 0x85 (0x7f in libc.so.6)\n");
  auto result = check_variant_import("variant", {}, runner);
  ASSERT_TRUE(result);
  EXPECT_FALSE(result->loaded);
  EXPECT_EQ(result->error,
            "c10::Error: Explicitly provided namespace (mykernel) in schema string does not "
            "match namespace of enclosing TORCH_LIBRARY block (_relu_abc).  (Error occurred "
            "while processing TORCH_LIBRARY block at /k/torch-ext/torch_binding.cpp:9)");
  EXPECT_THAT(result->output, HasSubstr("frame #52"));  // the trace stays for -v
}

TEST(ImportCheck, NativeException) {
  EXPECT_EQ(native_exception("x\n  what():  boom\n"), "boom");
  EXPECT_EQ(native_exception("terminate called after throwing an instance of "
                             "'std::runtime_error'\n  what():  bad thing  \n"),
            "std::runtime_error: bad thing");
  EXPECT_EQ(native_exception("Traceback\nValueError: x\n"), std::nullopt);
}

// Issue 22 §2: a schema typo's torch::jit::ErrorReport starts with an empty line; the summary
// was "torch::jit::ErrorReport: " with nothing after it.
TEST(ImportCheck, NativeExceptionKeepsEveryLineOfASchemaParseError) {
  EXPECT_EQ(native_exception(
                "Kernel 'rms-norm' variant 'x' was built from a dirty git tree.\n"
                "terminate called after throwing an instance of 'torch::jit::ErrorReport'\n"
                "  what():  \n"
                "unknown type specifier. Common valid schema types include Tensor, SymInt :\n"
                "rms_norm(Tensor! out, Tensr input) -> ()\n"
                "                      ~~~~~ <--- HERE\n"
                "\n"
                "\n"),
            "torch::jit::ErrorReport: unknown type specifier. Common valid schema types include "
            "Tensor, SymInt :\n"
            "rms_norm(Tensor! out, Tensr input) -> ()\n"
            "                      ~~~~~ <--- HERE");
}

// Issue 22 §2: a schema/signature mismatch names the operator, both schemas and the reason on
// lines after the first; the C++ trace after them stays out.
TEST(ImportCheck, NativeExceptionKeepsTheMismatchDetailsAndDropsTheFrames) {
  EXPECT_EQ(
      native_exception(
          "terminate called after throwing an instance of 'c10::Error'\n"
          "  what():  Inferred operator schema for a C++ kernel function doesn't match the "
          "expected function schema.\n"
          "  operator: _k::rms_norm\n"
          "  expected schema: _k::rms_norm(Tensor($0! -> ) out, Tensor input, float eps) -> ()\n"
          "    registered at /k/torch-ext/torch_binding.cpp:8\n"
          "  inferred schema: (Tensor _0, Tensor _1) -> ()\n"
          "    registered at /k/torch-ext/torch_binding.cpp:8\n"
          "  reason: The number of arguments is different. 3 vs 2.\n"
          "Exception raised from checkSchema at OperatorEntry.cpp:102 (most recent call first):\n"
          "frame #0: c10::Error::Error(c10::SourceLocation) + 0x9d (0x7f in libc10.so)\n"
          "<omitting python frames>\n"
          "frame #56: _start + 0x21 (0x56 in python3)\n"),
      "c10::Error: Inferred operator schema for a C++ kernel function doesn't match the "
      "expected function schema.\n"
      "  operator: _k::rms_norm\n"
      "  expected schema: _k::rms_norm(Tensor($0! -> ) out, Tensor input, float eps) -> ()\n"
      "    registered at /k/torch-ext/torch_binding.cpp:8\n"
      "  inferred schema: (Tensor _0, Tensor _1) -> ()\n"
      "    registered at /k/torch-ext/torch_binding.cpp:8\n"
      "  reason: The number of arguments is different. 3 vs 2.");
}

// A Python exception's summary is one JSON string on the marker line, so every line of its
// message comes through.
TEST(ImportCheck, APythonErrorKeepsEveryLineOfItsMessage) {
  write_variant("cpu");
  FakeScriptRunner runner(
      1, "Traceback (most recent call last):\n  ...\nOSError: x\n"
         "kernelhub-import-check: error: \"OSError: cannot load\\n  first reason\\n  second\"\n");
  auto result = check_variant_import("variant", {}, runner);
  ASSERT_TRUE(result);
  EXPECT_FALSE(result->loaded);
  EXPECT_EQ(result->error, "OSError: cannot load\n  first reason\n  second");
}

TEST(ImportCheck, IndentContinuation) {
  EXPECT_EQ(indent_continuation("a\nb\n  c", "  "), "a\n  b\n    c");
  EXPECT_EQ(indent_continuation("one", "  "), "one");
}

TEST(ImportCheck, LastLine) {
  EXPECT_EQ(last_line("a\nb\n\n  \n"), "b");
  EXPECT_EQ(last_line("only"), "only");
  EXPECT_EQ(last_line("\n\n"), "");
}

TEST(SubprocessScriptRunner, CapturesBothStreamsExitCodeAndEnvironment) {
  SubprocessScriptRunner runner;
  Script script;
  script.argv = {"sh", "-c", "echo out; echo err >&2; echo \"$KH_X\"; pwd; exit 7"};
  script.env = {{"KH_X", "set"}};
  script.cwd = std::filesystem::temp_directory_path();
  auto result = runner.run(script);
  ASSERT_TRUE(result);
  EXPECT_EQ(result->exit_code, 7);
  EXPECT_THAT(result->output, HasSubstr("out\n"));
  EXPECT_THAT(result->output, HasSubstr("err\n"));
  EXPECT_THAT(result->output, HasSubstr("set\n"));
  EXPECT_THAT(result->output, HasSubstr(std::filesystem::temp_directory_path().string()));
}

TEST(StartedScript, GetsItsInputWhenFinishedAndGivesBothStreams) {
  Script script;
  script.argv = {"sh", "-c", "IFS= read -r line; echo \"got $line\"; echo err >&2; exit 3"};
  auto started = StartedScript::start(script);
  ASSERT_TRUE(started) << started.error().message;
  const auto output = started->finish("the\tline\n");
  EXPECT_EQ(output.exit_code, 3);
  EXPECT_THAT(output.output, HasSubstr("got the\tline\n"));
  EXPECT_THAT(output.output, HasSubstr("err\n"));
}

TEST(StartedScript, AScriptThatEndedBeforeReadingIsAnAnswerNotASignal) {
  Script script;
  script.argv = {"sh", "-c", "echo gone; exit 5"};
  auto started = StartedScript::start(script);
  ASSERT_TRUE(started);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // let it exit first
  // More than a pipe holds: the write meets a closed pipe (EPIPE), which must not end us.
  const auto output = started->finish(std::string(1 << 20, 'x'));
  EXPECT_EQ(output.exit_code, 5);
  EXPECT_THAT(output.output, HasSubstr("gone"));
}

TEST(StartedScript, DestroyingAnUnfinishedScriptKillsIt) {
  Script script;
  script.argv = {"sleep", "60"};
  const auto before = std::chrono::steady_clock::now();
  {
    auto started = StartedScript::start(script);
    ASSERT_TRUE(started);
  }
  EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::seconds(10));
}

// A folder of its own for each test that needs files outside the working folder.
std::filesystem::path fresh_folder(const std::string& name) {
  const auto folder = std::filesystem::temp_directory_path() /
                      ("kernelhub-unit-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(folder);
  std::filesystem::create_directories(folder);
  return folder;
}

// A stand-in for python that ignores its -c script: it writes where it runs (HOME, working
// folder) to `log`, then answers the worker's request line as the real script would.
std::string fake_python(const std::filesystem::path& folder, const std::string& answer) {
  const auto path = folder / "python";
  std::ofstream(path) << "#!/bin/sh\n"
                      << "printf '%s\\n%s\\n' \"$HOME\" \"$PWD\" > '" << (folder / "log").string()
                      << "'\n"
                      << "IFS= read -r request\n"
                      << "printf 'request=%s\\n' \"$request\"\n"
                      << answer << "\n";
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  return path.string();
}

TEST(ImportCheckWorker, LoadsTheVariantItIsGivenOnStdinInItsOwnHome) {
  write_variant("cpu");
  const auto folder = fresh_folder("worker");
  ImportCheckOptions options;
  options.python = fake_python(folder, "echo 'kernelhub-import-check: loaded _relu_cpu_abc'");
  auto worker = ImportCheckWorker::start(options);
  ASSERT_TRUE(worker) << worker.error().message;
  FakeScriptRunner unused(1, "the fresh process must not run");
  auto result = check_variant_import("variant", options, unused, std::move(*worker));
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_TRUE(result->loaded) << result->output;
  EXPECT_THAT(result->output,
              HasSubstr("request=" + std::filesystem::absolute("variant").string() + "\tcpu\n"));
  EXPECT_TRUE(unused.last.argv.empty());
  std::ifstream log(folder / "log");
  std::string home;
  std::string cwd;
  std::getline(log, home);
  std::getline(log, cwd);
  EXPECT_EQ(home, cwd);  // a temporary HOME that is also its working folder, as a fresh check
  EXPECT_THAT(home, HasSubstr("kernelhub-import-"));
  EXPECT_FALSE(std::filesystem::exists(home));  // and gone once the check is done
  std::filesystem::remove_all(folder);
}

TEST(ImportCheckWorker, AFailureReadsAsAFreshChecksFailure) {
  write_variant("cpu");
  const auto folder = fresh_folder("worker-failure");
  ImportCheckOptions options;
  options.python = fake_python(
      folder, "echo 'kernelhub-import-check: error: ImportError: undefined symbol: x'; exit 1");
  auto worker = ImportCheckWorker::start(options);
  ASSERT_TRUE(worker);
  FakeScriptRunner unused(0, "");
  auto result = check_variant_import("variant", options, unused, std::move(*worker));
  ASSERT_TRUE(result);
  EXPECT_FALSE(result->loaded);
  EXPECT_EQ(result->error, "ImportError: undefined symbol: x");
  std::filesystem::remove_all(folder);
}

TEST(ImportCheckWorker, AVariantWithKernelDependsGetsAFreshProcess) {
  // Its LOCAL_KERNELS and KERNELS_CACHE must be set before kernels is imported.
  write_variant_with_depends();
  const auto folder = fresh_folder("worker-depends");
  ImportCheckOptions options;
  options.python = fake_python(folder, "echo 'kernelhub-import-check: loaded _user_abc'");
  options.local_kernels = "org/base=/abs/base";
  auto worker = ImportCheckWorker::start(options);
  ASSERT_TRUE(worker);
  FakeScriptRunner fresh(0, "kernelhub-import-check: loaded _user_abc\n");
  auto result = check_variant_import("variant", options, fresh, std::move(*worker));
  ASSERT_TRUE(result);
  EXPECT_TRUE(result->loaded);
  ASSERT_FALSE(fresh.last.argv.empty());
  EXPECT_EQ(fresh.last.env.at("LOCAL_KERNELS"), "org/base=/abs/base");
  std::filesystem::remove_all(folder);
}

TEST(ImportCheckWorker, AnUnusedWorkerIsKilledAndItsHomeRemoved) {
  const auto folder = fresh_folder("worker-unused");
  ImportCheckOptions options;
  options.python = fake_python(folder, "sleep 60");
  const auto before = std::chrono::steady_clock::now();
  {
    auto worker = ImportCheckWorker::start(options);
    ASSERT_TRUE(worker);
    // Bounded wait for the stand-in to say where it runs.
    const auto log = folder / "log";
    for (int i = 0; i < 100 && (!std::filesystem::exists(log) || std::filesystem::file_size(log) == 0);
         ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::seconds(10));
  std::ifstream log(folder / "log");
  std::string home;
  std::getline(log, home);
  ASSERT_FALSE(home.empty());
  EXPECT_FALSE(std::filesystem::exists(home));
  std::filesystem::remove_all(folder);
}

TEST(ImportCheckWorker, ImportsNicerThanUsAndLoadsAtOurPriority) {
  write_variant("cpu");
  const auto folder = fresh_folder("worker-niceness");
  // The fake writes its pid, waits for the request, then records its nice value (field 19
  // of /proc/<pid>/stat). start() returns after the priority was lowered, so the test reads
  // it from outside before handing the variant over.
  const auto path = folder / "python";
  std::ofstream(path) << "#!/bin/sh\n"
                      << "echo $$ > '" << (folder / "pid.tmp").string() << "'\n"
                      << "mv '" << (folder / "pid.tmp").string() << "' '"
                      << (folder / "pid").string() << "'\n"
                      << "IFS= read -r request\n"
                      << "awk '{print $19}' /proc/$$/stat > '" << (folder / "loading").string()
                      << "'\n"
                      << "echo 'kernelhub-import-check: loaded _relu_cpu_abc'\n";
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  const auto nice_of = [](const std::string& pid) {
    std::ifstream stat("/proc/" + pid + "/stat");
    std::string field;
    for (int i = 0; i < 19 && stat >> field; ++i) {
    }
    return std::stoi(field);
  };
  ImportCheckOptions options;
  options.python = path.string();
  errno = 0;
  const int ours = ::getpriority(PRIO_PROCESS, 0);
  ASSERT_EQ(errno, 0);
  auto worker = ImportCheckWorker::start(options);
  ASSERT_TRUE(worker) << worker.error().message;
  for (int i = 0; i < 200 && !std::filesystem::exists(folder / "pid"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::string pid;
  std::ifstream(folder / "pid") >> pid;
  ASSERT_FALSE(pid.empty());
  const int importing = nice_of(pid);
  EXPECT_EQ(importing, std::min(ours + 10, 19));
  FakeScriptRunner unused(1, "the fresh process must not run");
  auto result = check_variant_import("variant", options, unused, std::move(*worker));
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_TRUE(result->loaded) << result->output;
  int loading = -100;
  std::ifstream(folder / "loading") >> loading;
  // Lowering the nice value back needs CAP_SYS_NICE (or RLIMIT_NICE room): only then does the
  // load run at our own priority.
  struct rlimit limit {};
  const bool may_lower = ::geteuid() == 0 ||
                         (::getrlimit(RLIMIT_NICE, &limit) == 0 &&
                          (limit.rlim_cur == RLIM_INFINITY ||
                           20 - static_cast<long>(limit.rlim_cur) <= ours));
  EXPECT_EQ(loading, may_lower ? ours : importing);
  std::filesystem::remove_all(folder);
}

}  // namespace
}  // namespace kernelhub::checks
