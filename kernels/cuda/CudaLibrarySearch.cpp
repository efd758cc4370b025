//===- CudaLibrarySearch.cpp - where the CUDA libraries are looked for ----===//
#include "kernels/cuda/CudaLibrarySearch.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace memc::kernels::cuda {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> splitPathList(const std::string &list) {
  std::vector<std::string> entries;
  size_t begin = 0;
  while (begin <= list.size()) {
    size_t end = std::min(list.find(':', begin), list.size());
    if (end > begin)
      entries.push_back(list.substr(begin, end - begin));
    begin = end + 1;
  }
  return entries;
}

std::string environment(const char *name) {
  const char *value = std::getenv(name);
  return value ? value : "";
}

std::string joined(const std::vector<std::string> &items) {
  std::string text;
  for (const std::string &item : items)
    text += (text.empty() ? "" : ", ") + item;
  return text;
}

/// The subfolders of `folder` whose names start with `prefix`, sorted; none when it cannot be
/// read (a missing folder is the common case, not an error).
std::vector<fs::path> subfolders(const fs::path &folder, const std::string &prefix) {
  std::vector<fs::path> found;
  std::error_code error;
  for (fs::directory_iterator it(folder, error), end; !error && it != end; it.increment(error))
    if (it->is_directory(error) && it->path().filename().string().rfind(prefix, 0) == 0)
      found.push_back(it->path());
  std::sort(found.begin(), found.end());
  return found;
}

/// site-packages/nvidia/*/lib of the Python installation whose bin folder is `bin`.
std::vector<std::string> wheelFolders(const fs::path &bin) {
  std::vector<std::string> folders;
  std::error_code error;
  if (!fs::exists(bin / "python3", error))
    return folders;
  for (const fs::path &python : subfolders(bin / ".." / "lib", "python3"))
    for (const fs::path &library : subfolders(python / "site-packages" / "nvidia", ""))
      if (fs::is_directory(library / "lib", error))
        folders.push_back((library / "lib").lexically_normal().string());
  return folders;
}

} // namespace

std::vector<std::string> cudaLibraryFolders(const std::string &memcCudaLibs,
                                            const std::string &path) {
  std::vector<std::string> candidates = splitPathList(memcCudaLibs);
  for (const std::string &entry : splitPathList(path))
    for (std::string &folder : wheelFolders(entry))
      candidates.push_back(std::move(folder));
  candidates.push_back("/usr/local/cuda/lib64");
  candidates.push_back("/usr/local/cuda/lib");
  std::vector<std::string> folders;
  for (std::string &folder : candidates)
    if (std::find(folders.begin(), folders.end(), folder) == folders.end())
      folders.push_back(std::move(folder));
  return folders;
}

std::string findCudaLibrary(const std::vector<std::string> &folders,
                            const std::vector<std::string> &names) {
  std::error_code error;
  for (const std::string &folder : folders)
    for (const std::string &name : names) {
      fs::path file = fs::path(folder) / name;
      if (fs::is_regular_file(file, error))
        return file.string();
    }
  return "";
}

void *openCudaLibrary(const std::vector<std::string> &names, const std::string &remedy,
                      std::string &path, std::string &error) {
  std::vector<std::string> folders =
      cudaLibraryFolders(environment("MEMC_CUDA_LIBS"), environment("PATH"));
  std::vector<std::string> tried;
  std::string found = findCudaLibrary(folders, names);
  if (!found.empty())
    tried.push_back(found);
  for (const std::string &name : names)
    tried.push_back(name);
  std::string outcome = " was not found";
  for (const std::string &file : tried) {
    if (void *library = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      path = file;
      return library;
    }
    const char *reason = dlerror();
    if (file == found)
      outcome = " could not be loaded from " + found + " (" + (reason ? reason : "") + ")";
  }
  error = names.front() + outcome + "; searched MEMC_CUDA_LIBS, the nvidia wheels of the " +
          "python3 in PATH and the CUDA toolkit: " + joined(folders) +
          ", then the loader's default search (LD_LIBRARY_PATH). " + remedy +
          ", or point MEMC_CUDA_LIBS at the folder holding " + names.front();
  return nullptr;
}

} // namespace memc::kernels::cuda
