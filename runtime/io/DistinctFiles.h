//===- DistinctFiles.h - outputs that would destroy inputs ------*- C++ -*-===//
//
// `memc -o m.onnx m.onnx`, `--log d.npz --data d.npz` or `--save ck/checkpoint.safetensors
// --checkpoint ck` replaced a file the run reads or writes elsewhere, mostly with exit 0. Every
// output is written by a rename onto its name (Files.h), so what it replaces is that name, its
// folder's symlinks resolved: an output collides with an input whose name or whose resolved path
// (through links) is the output's, or that is the output's existing file under another name (a
// symbolic or hard link: the same device and inode), and with another output of the same name.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_RUNTIME_IO_DISTINCTFILES_H
#define MEMC_RUNTIME_IO_DISTINCTFILES_H

#include <string>
#include <vector>

namespace memc::runtime {

/// A file a run reads or writes, and what names it in messages ("--log", "the model").
struct NamedPath {
  std::string what;
  std::string path;
};

/// Whether writing `a` would replace the file named `b` (their folders resolved): "ck" and
/// "./ck/" name one folder.
bool namesSameFile(const std::string &a, const std::string &b);

/// False with a message naming both when an output would replace an input or another output.
bool checkDistinctFiles(const std::vector<NamedPath> &outputs, const std::vector<NamedPath> &inputs,
                        std::string &error);

} // namespace memc::runtime

#endif // MEMC_RUNTIME_IO_DISTINCTFILES_H
