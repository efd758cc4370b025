//===- QueuedDevice.h - a CPU device whose streams run late -------*- C++ -*-===//
//
// The CPU device runs work as it is enqueued, so it cannot show a missing wait between streams.
// This one queues every copy and launch on its stream, as a GPU does, and runs a queue only when
// it must: when the stream is synchronized, an event on it is waited for (by the host, or by
// another stream's work reaching the wait), or, for an eager stream, at once. With the compute
// stream late and the copy stream eager, an upload the executor did not order after the last
// run's read of the staging buffer would overwrite it first; with the copies late, a run the
// executor did not order after its upload would read the staging buffer before it arrived.
// Either shows as wrong outputs. A kernel runs whole when its stream gets to it: what a GPU
// kernel's run function does on the host at launch (reading TensorView::hostData) it does late.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_TEST_SUPPORT_QUEUEDDEVICE_H
#define MEMC_TEST_SUPPORT_QUEUEDDEVICE_H

#include "runtime/device/cpu/CpuDevice.h"

#include <cstring>
#include <deque>
#include <functional>

namespace memc::testing {

class QueuedDevice : public runtime::CpuDevice {
public:
  /// Which streams wait to be made to run, the kernels' (createStream) or the copies'
  /// (createCopyStream); the others run work as it comes.
  enum class Late { Compute, Copies };

  QueuedDevice(const kernels::KernelTable &kernels, Late late) : CpuDevice(kernels), late(late) {}

  class QueuedStream : public runtime::Stream {
  public:
    explicit QueuedStream(bool eager) : eager(eager) {}

    void enqueue(std::function<void()> work) {
      queue.push_back(std::move(work));
      ++enqueued;
      if (eager)
        runUntil(enqueued);
    }
    /// Runs the queue until `count` items have run in all.
    void runUntil(size_t count) {
      while (done < count) {
        std::function<void()> work = std::move(queue.front());
        queue.pop_front();
        ++done;
        work();
      }
    }

    bool synchronize(std::string &) override {
      runUntil(enqueued);
      return true;
    }
    std::unique_ptr<runtime::Event> record(std::string &) override {
      return std::make_unique<Point>(this, enqueued);
    }
    bool waitFor(const runtime::Event &event, std::string &) override {
      const Point &point = static_cast<const Point &>(event);
      enqueue([point] { point.stream->runUntil(point.count); });
      return true;
    }
    bool waitUntil(const runtime::Event &event, std::string &) override {
      const Point &point = static_cast<const Point &>(event);
      point.stream->runUntil(point.count);
      return true;
    }

  private:
    /// The stream's work up to its `count`-th item.
    struct Point : runtime::Event {
      Point(QueuedStream *stream, size_t count) : stream(stream), count(count) {}
      QueuedStream *stream;
      size_t count;
    };
    bool eager;
    std::deque<std::function<void()>> queue;
    size_t enqueued = 0, done = 0;
  };

  std::unique_ptr<runtime::Stream> createStream(std::string &) override {
    return std::make_unique<QueuedStream>(late != Late::Compute);
  }
  std::unique_ptr<runtime::Stream> createCopyStream(std::string &) override {
    return std::make_unique<QueuedStream>(late != Late::Copies);
  }
  bool copyToDevice(void *to, const void *from, uint64_t bytes, runtime::Stream &stream,
                    std::string &) override {
    return copy(to, from, bytes, stream);
  }
  bool copyToHost(void *to, const void *from, uint64_t bytes, runtime::Stream &stream,
                  std::string &) override {
    return copy(to, from, bytes, stream);
  }
  bool copyOnDevice(void *to, const void *from, uint64_t bytes, runtime::Stream &stream,
                    std::string &) override {
    return copy(to, from, bytes, stream);
  }
  bool fillZero(void *to, uint64_t bytes, runtime::Stream &stream, std::string &) override {
    static_cast<QueuedStream &>(stream).enqueue([=] { std::memset(to, 0, bytes); });
    return true;
  }
  /// The kernel runs when its stream gets to it; a failure names the step it was launched for,
  /// as a GPU kernel's record does (the host has moved on by then).
  bool launch(const kernels::Kernel &kernel, const kernels::KernelCall &call,
              runtime::Stream &stream, std::string &) override {
    const uint32_t step = stream.kernelContext().step;
    static_cast<QueuedStream &>(stream).enqueue([this, &kernel, &call, &stream, step] {
      kernels::KernelErrorSlot &errors = stream.kernelContext().errors;
      const bool failedBefore = errors.failed();
      std::string message;
      CpuDevice::launch(kernel, call, stream, message);
      if (!failedBefore && errors.take(message))
        errors.record(message, step);
    });
    return true;
  }

private:
  bool copy(void *to, const void *from, uint64_t bytes, runtime::Stream &stream) {
    static_cast<QueuedStream &>(stream).enqueue([=] { std::memcpy(to, from, bytes); });
    return true;
  }

  Late late;
};

} // namespace memc::testing

#endif // MEMC_TEST_SUPPORT_QUEUEDDEVICE_H
