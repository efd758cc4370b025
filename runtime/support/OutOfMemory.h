//===- OutOfMemory.h - running out of memory is an error, not an abort -*- C++ -*-===//
//
// An allocation the machine cannot give (its memory, RLIMIT_AS, a cgroup's memory.max) aborted
// with std::bad_alloc or "LLVM ERROR: out of memory" and a stack dump. memc and the programs it
// writes report it as an error and exit with code 1 instead.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_RUNTIME_SUPPORT_OUTOFMEMORY_H
#define MEMC_RUNTIME_SUPPORT_OUTOFMEMORY_H

#include <cstring>
#include <unistd.h>

namespace memc::runtime {

/// The message, written with write(2) alone: nothing may allocate once memory has run out.
inline void reportOutOfMemoryAndExit(const char *program) {
  const char *text = ": error: out of memory: an allocation failed (the machine's memory, "
                     "the address-space limit or the cgroup's memory limit)\n";
  ssize_t ignored = ::write(STDERR_FILENO, program, std::strlen(program));
  ignored = ::write(STDERR_FILENO, text, std::strlen(text));
  (void)ignored;
  ::_exit(1);
}

} // namespace memc::runtime

#endif // MEMC_RUNTIME_SUPPORT_OUTOFMEMORY_H
