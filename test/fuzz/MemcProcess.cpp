//===- MemcProcess.cpp - running memc on a fuzzed model ------------------===//
#include "MemcProcess.h"

#include <atomic>
#include <chrono>
#include <csignal>
#include <fstream>
#include <sstream>
#include <thread>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace memc::fuzz {

namespace {
constexpr double kHangSeconds = 30;
} // namespace

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

Outcome runMemc(const std::vector<std::string> &arguments, const std::string &log) {
  std::vector<std::string> argv = {MEMC_BIN_DIR "/memc"};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  std::vector<char *> pointers;
  for (std::string &argument : argv)
    pointers.push_back(argument.data());
  pointers.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid;
  int spawned = posix_spawn(&pid, pointers[0], &actions, nullptr, pointers.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0)
    return {Outcome::Unclear, "cannot start memc"};
  auto start = std::chrono::steady_clock::now();
  int status = 0;
  bool hung = false;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() - start > std::chrono::duration<double>(kHangSeconds)) {
      hung = true;
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  std::string messages = readFile(log);
  if (hung)
    return {Outcome::Hang, "no exit after 30 s"};
  if (WIFSIGNALED(status))
    return {Outcome::Crash, "signal " + std::to_string(WTERMSIG(status)) + ": " + messages};
  if (messages.find("internal:") != std::string::npos)
    return {Outcome::Internal, messages};
  int code = WEXITSTATUS(status);
  if (code == 0)
    return {Outcome::Success, ""};
  if (code == 1 && messages.find("memc: error:") != std::string::npos)
    return {Outcome::CleanError, messages};
  return {Outcome::Unclear, "exit " + std::to_string(code) + ": " + messages};
}

void forEachOnTwoThreads(size_t count, const std::string &dir,
                         const std::function<void(size_t, const std::string &)> &body) {
  std::atomic<size_t> next{0};
  auto worker = [&](int id) {
    std::string log = dir + "/stderr." + std::to_string(id);
    for (size_t index; (index = next++) < count;)
      body(index, log);
  };
  std::thread first(worker, 0), second(worker, 1);
  first.join();
  second.join();
}

} // namespace memc::fuzz
