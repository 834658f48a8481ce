// A test fixture for the checks against Debian's NumPy (ANEC_TEST_NUMPY_PYTHON): skipped, saying
// why, when that interpreter has no numpy; a scratch folder of its own (`name`, the process id).
#pragma once
#include "anec/support/file.hpp"
#include "anec/support/npy.hpp"

#include <cstdlib>
#include <filesystem>
#include <gtest/gtest.h>
#include <string>
#include <unistd.h>

namespace anec::test {

class NumpyTest : public ::testing::Test {
protected:
  explicit NumpyTest(const std::string &name)
      : dir_(std::filesystem::temp_directory_path() / (name + "-" + std::to_string(::getpid()))) {}
  void SetUp() override {
    if (std::system((std::string(ANEC_TEST_NUMPY_PYTHON) + " -c 'import numpy' 2>/dev/null").c_str()) != 0)
      GTEST_SKIP() << ANEC_TEST_NUMPY_PYTHON << " has no numpy (apt-get install python3-numpy)";
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  // An .npy file, relative to the scratch folder unless absolute.
  npy::Array load(const std::filesystem::path &file) const {
    std::filesystem::path path = dir_ / file;
    return npy::read(read_file(path), path.string());
  }

  std::filesystem::path dir_;
};

} // namespace anec::test
