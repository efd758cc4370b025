//===- CudaLibrariesTest.cpp - where the CUDA libraries are looked for ----===//
//
// The search order of CudaLibrarySearch.h on made-up folders: MEMC_CUDA_LIBS first, then the
// nvidia wheels next to each python3 of PATH (only entries holding one), then the toolkit; the
// first folder holding a library wins, and its versioned name before the plain one.
//
//===----------------------------------------------------------------------===//
#include "kernels/cuda/CudaLibrarySearch.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace memc::kernels::cuda {
namespace {

namespace fs = std::filesystem;

/// A fresh folder under the system's temporary one, removed with the test.
class CudaLibrarySearch : public ::testing::Test {
protected:
  void SetUp() override {
    root = fs::temp_directory_path() /
           ("memc-cuda-libraries-" +
            std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root);
    fs::create_directories(root);
  }
  void TearDown() override { fs::remove_all(root); }

  /// Creates `relative` (and its folders) under the root; returns its full path.
  std::string touch(const std::string &relative) {
    fs::path file = root / relative;
    fs::create_directories(file.parent_path());
    std::ofstream(file) << "not a library";
    return file.string();
  }
  std::string folder(const std::string &relative) {
    fs::create_directories(root / relative);
    return (root / relative).string();
  }

  fs::path root;
};

TEST_F(CudaLibrarySearch, OrdersUserFoldersThenPythonWheelsThenToolkit) {
  std::string custom = folder("custom"), extra = folder("extra");
  touch("venv/bin/python3");
  std::string cublas = folder("venv/lib/python3.11/site-packages/nvidia/cublas/lib");
  std::string cudnn = folder("venv/lib/python3.11/site-packages/nvidia/cudnn/lib");
  folder("venv/lib/python3.11/site-packages/nvidia/nolib"); // a package without lib/
  // Wheels beside a bin folder without python3 are not looked at.
  folder("other/bin");
  folder("other/lib/python3.12/site-packages/nvidia/cublas/lib");
  std::string path = (root / "other/bin").string() + "::" + (root / "venv/bin").string();

  std::vector<std::string> folders = cudaLibraryFolders(custom + ":" + extra, path);
  std::vector<std::string> expected = {
      custom, extra, cublas, cudnn, "/usr/local/cuda/lib64", "/usr/local/cuda/lib"};
  EXPECT_EQ(folders, expected);
}

TEST_F(CudaLibrarySearch, WithoutEnvironmentLooksInTheToolkitOnly) {
  std::vector<std::string> expected = {"/usr/local/cuda/lib64", "/usr/local/cuda/lib"};
  EXPECT_EQ(cudaLibraryFolders("", ""), expected);
}

TEST_F(CudaLibrarySearch, ListsAFolderOnce) {
  std::string custom = folder("custom");
  std::vector<std::string> folders =
      cudaLibraryFolders(custom + ":/usr/local/cuda/lib64:" + custom, "");
  std::vector<std::string> expected = {custom, "/usr/local/cuda/lib64", "/usr/local/cuda/lib"};
  EXPECT_EQ(folders, expected);
}

TEST_F(CudaLibrarySearch, TheFirstFolderHoldingTheLibraryWins) {
  std::string first = folder("first"), second = folder("second");
  const std::vector<std::string> names = {"libcublasLt.so.13", "libcublasLt.so"};
  EXPECT_EQ(findCudaLibrary({first, second}, names), "");
  // The plain name in the first folder beats the versioned one in the second...
  std::string plain = touch("first/libcublasLt.so");
  std::string versioned = touch("second/libcublasLt.so.13");
  EXPECT_EQ(findCudaLibrary({first, second}, names), plain);
  // ... and within a folder the versioned name comes first.
  std::string both = touch("first/libcublasLt.so.13");
  EXPECT_EQ(findCudaLibrary({first, second}, names), both);
  EXPECT_EQ(findCudaLibrary({second, first}, names), versioned);
}

TEST_F(CudaLibrarySearch, FindsTheLibraryInAWheel) {
  touch("venv/bin/python3");
  std::string library =
      touch("venv/lib/python3.12/site-packages/nvidia/cublas/lib/libcublasLt.so.13");
  std::vector<std::string> folders =
      cudaLibraryFolders((root / "empty").string(), (root / "venv/bin").string());
  EXPECT_EQ(findCudaLibrary(folders, {"libcublasLt.so.13"}),
            fs::path(library).lexically_normal().string());
}

} // namespace
} // namespace memc::kernels::cuda
