// SPDX-License-Identifier: Apache-2.0
// Every test runs with a fresh temporary directory as its working directory; the directory
// is removed when the test passes and kept (and printed) when it fails, as ccache's unittest.
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>

#include <gtest/gtest.h>

namespace {

namespace fs = std::filesystem;

class TempDirPerTest : public testing::EmptyTestEventListener {
 public:
  void OnTestStart(const testing::TestInfo&) override {
    m_previous = fs::current_path();
    auto pattern = (fs::temp_directory_path() / "kernelhub-test-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      std::abort();
    }
    m_dir = pattern;
    fs::current_path(m_dir);
  }
  void OnTestEnd(const testing::TestInfo& info) override {
    fs::current_path(m_previous);
    if (info.result()->Passed()) {
      std::error_code ignored;
      fs::remove_all(m_dir, ignored);
    } else {
      std::cerr << "kept test directory: " << m_dir << "\n";
    }
  }

 private:
  fs::path m_previous;
  fs::path m_dir;
};

}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  testing::UnitTest::GetInstance()->listeners().Append(new TempDirPerTest);
  return RUN_ALL_TESTS();
}
