//===- CudaDevice.cpp - an NVIDIA GPU as a device -------------------------===//
#include "runtime/device/cuda/CudaDevice.h"

#include "kernels/DeviceError.h"
#include "kernels/cuda/CudaLibraries.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <vector>

namespace memc::runtime {
namespace {

std::string cudaMessage(cudaError_t status) {
  return std::string(cudaGetErrorString(status)) + " (" + cudaGetErrorName(status) + ")";
}

/// False with `what` and the CUDA runtime's reason unless `status` is success.
bool succeeded(cudaError_t status, const char *what, std::string &error) {
  if (status == cudaSuccess)
    return true;
  error = std::string(what) + ": " + cudaMessage(status);
  return false;
}

/// Makes GPU `ordinal` the calling thread's current one for the guard's life, then restores the
/// previous: cudaSetDevice is per host thread, and a call made from another thread, or after
/// another device, must not allocate on or launch into the wrong GPU.
class CurrentDevice {
public:
  explicit CurrentDevice(int ordinal) : ordinal(ordinal) {
    if (cudaGetDevice(&previous) != cudaSuccess)
      previous = -1;
    if (previous != ordinal)
      cudaSetDevice(ordinal);
  }
  ~CurrentDevice() {
    if (previous >= 0 && previous != ordinal)
      cudaSetDevice(previous);
  }
  CurrentDevice(const CurrentDevice &) = delete;
  CurrentDevice &operator=(const CurrentDevice &) = delete;

private:
  int ordinal;
  int previous = -1;
};

/// A point in a CUDA stream's work.
class CudaEvent : public Event {
public:
  explicit CudaEvent(cudaEvent_t event) : event(event) {}
  ~CudaEvent() override { cudaEventDestroy(event); }
  cudaEvent_t event;
};

/// A non-blocking CUDA stream with its kernels' error record in mapped pinned memory and its
/// own library handles (cuBLASLt binds a handle's work to one stream at a time).
class CudaStream : public Stream {
public:
  /// On GPU `ordinal`; with `launches`, the libraries and handles its kernels need.
  static std::unique_ptr<CudaStream> create(int ordinal, bool launches, std::string &error) {
    CurrentDevice current(ordinal);
    std::unique_ptr<CudaStream> stream(new CudaStream(ordinal));
    if (launches && (!(stream->libraries = kernels::cuda::CudaLibraries::load(error)) ||
                     !stream->libraries->createHandles(error)))
      return nullptr;
    void *host = nullptr, *device = nullptr;
    if (!succeeded(cudaStreamCreateWithFlags(&stream->handle, cudaStreamNonBlocking),
                   "cannot create a CUDA stream", error) ||
        !succeeded(cudaHostAlloc(&host, sizeof(kernels::DeviceErrorRecord), cudaHostAllocMapped),
                   "cannot allocate the kernels' error record", error))
      return nullptr;
    stream->errorRecord = static_cast<kernels::DeviceErrorRecord *>(host);
    *stream->errorRecord = kernels::DeviceErrorRecord();
    if (!succeeded(cudaHostGetDevicePointer(&device, host, 0),
                   "cannot map the kernels' error record", error))
      return nullptr;
    stream->context.stream = stream->handle;
    stream->context.libraries = stream->libraries.get();
    stream->context.deviceErrors = static_cast<kernels::DeviceErrorRecord *>(device);
    return stream;
  }

  ~CudaStream() override {
    CurrentDevice current(ordinal);
    if (handle)
      cudaStreamSynchronize(handle);
    marks.clear();
    if (errorRecord)
      cudaFreeHost(errorRecord);
    if (handle)
      cudaStreamDestroy(handle);
  }

  bool synchronize(std::string &error) override {
    return takeDeviceError(succeeded(cudaStreamSynchronize(handle), "a CUDA stream failed", error),
                           error);
  }

  bool waitUntil(const Event &event, std::string &error) override {
    return takeDeviceError(
        succeeded(cudaEventSynchronize(static_cast<const CudaEvent &>(event).event),
                  "a CUDA stream failed", error),
        error);
  }

  std::unique_ptr<Event> record(std::string &error) override {
    cudaEvent_t event;
    if (!succeeded(cudaEventCreateWithFlags(&event, cudaEventDisableTiming),
                   "cannot create a CUDA event", error))
      return nullptr;
    auto made = std::make_unique<CudaEvent>(event);
    if (!succeeded(cudaEventRecord(event, handle), "cannot record a CUDA event", error))
      return nullptr;
    return made;
  }

  bool waitFor(const Event &event, std::string &error) override {
    return succeeded(cudaStreamWaitEvent(handle, static_cast<const CudaEvent &>(event).event, 0),
                     "cannot order a CUDA stream after an event", error);
  }

  // Profiling marks are timed events, read once the stream has synchronized.
  void mark() override {
    cudaEvent_t event;
    if (cudaEventCreate(&event) != cudaSuccess)
      return;
    marks.push_back(std::make_unique<CudaEvent>(event));
    cudaEventRecord(event, handle);
  }
  double markSeconds(size_t index) const override {
    float milliseconds = 0;
    if (index < marks.size())
      cudaEventElapsedTime(&milliseconds, marks.front()->event, marks[index]->event);
    return milliseconds / 1e3;
  }
  void clearMarks() override { marks.clear(); }

  cudaStream_t handle = nullptr;

private:
  explicit CudaStream(int ordinal) : ordinal(ordinal) {}
  /// After a wait: a kernel's data-dependent failure, recorded in device code, goes to the
  /// kernels' error slot (the step it names failed). Read even when the stream failed after it,
  /// as the likely cause of what followed. Returns `finished`.
  bool takeDeviceError(bool finished, std::string &error) {
    if (errorRecord->code != kernels::kNoDeviceError) {
      std::string message = kernels::describeDeviceError(*errorRecord);
      if (!finished)
        error +=
            " (after step " + std::to_string(errorRecord->step) + " recorded: " + message + ")";
      context.errors.record(std::move(message), errorRecord->step);
      *errorRecord = kernels::DeviceErrorRecord();
    }
    return finished;
  }

  int ordinal;
  std::unique_ptr<kernels::cuda::CudaLibraries> libraries;
  kernels::DeviceErrorRecord *errorRecord = nullptr;
  std::vector<std::unique_ptr<CudaEvent>> marks;
};

class CudaDevice : public Device {
public:
  CudaDevice(const kernels::KernelTable &kernels, int ordinal, const cudaDeviceProp &properties)
      : kernelTable(kernels), ordinal(ordinal) {
    description = std::string(properties.name) + " (cuda:" + std::to_string(ordinal) +
                  ", compute capability " + std::to_string(properties.major) + "." +
                  std::to_string(properties.minor) + ")";
    totalBytes = properties.totalGlobalMem;
  }

  const std::string &name() const override { return deviceName; }
  DeviceProperties properties() const override { return {description, ordinal, totalBytes}; }
  std::optional<uint64_t> freeBytes() const override {
    CurrentDevice current(ordinal);
    size_t free = 0, total = 0;
    if (cudaMemGetInfo(&free, &total) != cudaSuccess)
      return std::nullopt;
    return free;
  }
  const kernels::KernelTable &kernels() const override { return kernelTable; }

  bool allocate(uint64_t bytes, uint64_t alignment, void *&memory, std::string &error) override {
    memory = nullptr;
    if (bytes == 0) // nothing to ask the driver for: no tensor of the region is ever read
      return true;
    CurrentDevice current(ordinal);
    // cudaMalloc aligns to at least 256 bytes; a wider alignment takes a larger allocation.
    uint64_t extra = alignment > 256 ? alignment : 0;
    void *base = nullptr;
    if (bytes > UINT64_MAX - extra ||
        !succeeded(cudaMalloc(&base, bytes + extra), "cudaMalloc failed", error))
      return false;
    memory = reinterpret_cast<void *>(
        alignAddress(reinterpret_cast<uint64_t>(base), std::max<uint64_t>(alignment, 1)));
    std::lock_guard<std::mutex> lock(basesMutex);
    bases[memory] = base;
    return true;
  }
  void deallocate(void *memory) override {
    if (!memory)
      return;
    std::lock_guard<std::mutex> lock(basesMutex);
    auto found = bases.find(memory);
    if (found == bases.end())
      return;
    CurrentDevice current(ordinal);
    cudaFree(found->second);
    bases.erase(found);
  }
  bool allocateHost(uint64_t bytes, void *&memory, std::string &error) override {
    memory = nullptr;
    if (bytes == 0)
      return true;
    // Mapped: kernels reach it through unified addressing (offloaded state); portable: any
    // stream of any device may copy from it.
    return succeeded(cudaHostAlloc(&memory, bytes, cudaHostAllocMapped | cudaHostAllocPortable),
                     "cudaHostAlloc failed", error);
  }
  void deallocateHost(void *memory) override {
    if (memory)
      cudaFreeHost(memory);
  }

  std::unique_ptr<Stream> createStream(std::string &error) override {
    return CudaStream::create(ordinal, /*launches=*/true, error);
  }
  std::unique_ptr<Stream> createCopyStream(std::string &error) override {
    return CudaStream::create(ordinal, /*launches=*/false, error);
  }
  bool copyToDevice(void *device, const void *host, uint64_t bytes, Stream &stream,
                    std::string &error) override {
    CurrentDevice current(ordinal);
    return bytes == 0 ||
           succeeded(cudaMemcpyAsync(device, host, bytes, cudaMemcpyDefault, handleOf(stream)),
                     "a copy to the GPU failed", error);
  }
  bool copyToHost(void *host, const void *device, uint64_t bytes, Stream &stream,
                  std::string &error) override {
    CurrentDevice current(ordinal);
    return bytes == 0 ||
           succeeded(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDefault, handleOf(stream)),
                     "a copy from the GPU failed", error);
  }
  bool fillZero(void *device, uint64_t bytes, Stream &stream, std::string &error) override {
    CurrentDevice current(ordinal);
    return bytes == 0 || succeeded(cudaMemsetAsync(device, 0, bytes, handleOf(stream)),
                                   "a fill on the GPU failed", error);
  }
  bool copyOnDevice(void *to, const void *from, uint64_t bytes, Stream &stream,
                    std::string &error) override {
    CurrentDevice current(ordinal);
    return bytes == 0 ||
           succeeded(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice, handleOf(stream)),
                     "a copy on the GPU failed", error);
  }
  bool launch(const kernels::Kernel &kernel, const kernels::KernelCall &call, Stream &stream,
              std::string &) override {
    // The run enqueues its kernels; a launch it could not make is recorded in the slot. An
    // error left by an earlier runtime call (a profiling event) must not be taken for its own.
    CurrentDevice current(ordinal);
    cudaGetLastError();
    kernels::KernelContext &context = stream.kernelContext();
    if (!kernel.run(context, call) && !context.errors.failed())
      context.fail("the kernel failed without a message");
    return true;
  }

private:
  static cudaStream_t handleOf(Stream &stream) { return static_cast<CudaStream &>(stream).handle; }

  const kernels::KernelTable &kernelTable;
  const std::string deviceName = "cuda";
  int ordinal;
  std::string description;
  uint64_t totalBytes = 0;
  std::mutex basesMutex;
  std::map<void *, void *> bases;
};

std::unique_ptr<Device> createCudaDevice(const kernels::KernelTable &kernels, int ordinal,
                                         std::string &error) {
  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    error = "no usable GPU: " + cudaMessage(status) +
            " (memc's CUDA programs need an NVIDIA GPU and a driver for CUDA 13)";
    return nullptr;
  }
  if (ordinal >= count) {
    error =
        "cuda:" + std::to_string(ordinal) + " does not exist: this machine has " +
        std::to_string(count) +
        (count == 1 ? " GPU (cuda:0)" : " GPUs (cuda:0 to cuda:" + std::to_string(count - 1) + ")");
    return nullptr;
  }
  cudaDeviceProp properties;
  if (!succeeded(cudaSetDevice(ordinal), "cannot select the GPU", error) ||
      !succeeded(cudaGetDeviceProperties(&properties, ordinal), "cannot query the GPU", error))
    return nullptr;
  return std::make_unique<CudaDevice>(kernels, ordinal, properties);
}

} // namespace

uint64_t alignAddress(uint64_t base, uint64_t alignment) {
  return (base + alignment - 1) & ~(alignment - 1);
}

void registerCudaDevice(DeviceRegistry &registry, const kernels::KernelTable &kernels) {
  registry.add("cuda", [&kernels](int ordinal, std::string &error) {
    return createCudaDevice(kernels, ordinal, error);
  });
}

} // namespace memc::runtime
