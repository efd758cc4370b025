//===- ProgramFlags.h - the flags compiled programs take --------*- C++ -*-===//
//
// The command-line flags of compiled programs (memc-runner's) that memc itself does not take, so
// that memc can tell a user who gives one to the compiler where it belongs instead of guessing a
// misspelling (`memc --steps 5` is not `--eps`). The runner parses exactly these and --plan,
// --weights, --lr, --help and --version (lit runtime/schedule.test checks that a training program's
// --help describes each).
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_RUNTIME_SUPPORT_PROGRAMFLAGS_H
#define MEMC_RUNTIME_SUPPORT_PROGRAMFLAGS_H

#include <array>
#include <string_view>

namespace memc::runtime {

inline constexpr std::array<std::string_view, 21> kProgramOnlyFlags = {
    "--eval-data",  "--eval-every", "--data",       "--tokens",           "--steps",
    "--epochs",     "--shuffle",    "--log",        "--schedule",         "--warmup-steps",
    "--dump-grads", "--save",       "--checkpoint", "--checkpoint-every", "--resume",
    "--seed",       "--inputs",     "--outputs",    "--repeat",           "--stats",
    "--device"};

/// Whether `argument` ("--steps", "--steps=5") is a program's flag memc does not take.
constexpr bool isProgramOnlyFlag(std::string_view argument) {
  std::string_view name = argument.substr(0, argument.find('='));
  for (std::string_view flag : kProgramOnlyFlags)
    if (name == flag)
      return true;
  return false;
}

} // namespace memc::runtime

#endif // MEMC_RUNTIME_SUPPORT_PROGRAMFLAGS_H
