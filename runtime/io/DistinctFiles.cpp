//===- DistinctFiles.cpp - outputs that would destroy inputs --------------===//
#include "runtime/io/DistinctFiles.h"

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <sys/stat.h>

namespace memc::runtime {
namespace {

/// The name a rename onto `path` replaces: its folder resolved (when it exists), then its last
/// component as written.
std::string replacedName(std::string path) {
  while (path.size() > 1 && path.back() == '/') // "ck/" names the folder "ck"
    path.pop_back();
  std::filesystem::path given(path);
  std::filesystem::path folder = given.parent_path().empty() ? "." : given.parent_path();
  std::error_code ignored;
  std::filesystem::path resolved =
      std::filesystem::weakly_canonical(std::filesystem::absolute(folder, ignored), ignored);
  return (resolved / given.filename()).lexically_normal().string();
}

/// `path` with every link resolved, or empty when it does not exist.
std::string resolvedPath(const std::string &path) {
  char buffer[PATH_MAX];
  return ::realpath(path.c_str(), buffer) ? std::string(buffer) : std::string();
}

std::string describe(const NamedPath &file) { return file.what + " " + file.path; }

/// Whether both exist and are one file (device and inode, through links): an output that is a
/// symbolic or hard link to an input. Replacing the link would leave the input's bytes, but the
/// user named the input as the output, which is a mistake to say, not to act on.
bool sameInode(const std::string &a, const std::string &b) {
  struct stat first, second;
  return ::stat(a.c_str(), &first) == 0 && ::stat(b.c_str(), &second) == 0 &&
         first.st_dev == second.st_dev && first.st_ino == second.st_ino;
}

} // namespace

bool namesSameFile(const std::string &a, const std::string &b) {
  return replacedName(a) == replacedName(b);
}

bool checkDistinctFiles(const std::vector<NamedPath> &outputs, const std::vector<NamedPath> &inputs,
                        std::string &error) {
  for (size_t o = 0; o < outputs.size(); ++o) {
    std::string name = replacedName(outputs[o].path);
    for (const NamedPath &input : inputs)
      if (name == replacedName(input.path) || name == resolvedPath(input.path) ||
          sameInode(outputs[o].path, input.path)) {
        error = describe(outputs[o]) + " would replace " + describe(input) +
                ", which this run reads: write it elsewhere";
        return false;
      }
    for (size_t other = 0; other < o; ++other)
      if (name == replacedName(outputs[other].path)) {
        error = describe(outputs[o]) + " and " + describe(outputs[other]) +
                " are the same file: give each output its own";
        return false;
      }
  }
  return true;
}

} // namespace memc::runtime
