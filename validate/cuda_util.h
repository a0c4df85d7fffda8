// CUDA / cuBLAS / NCCL error checks and move-only RAII wrappers.
//
// CUDA_RETURN_IF_ERROR(call) returns a Status naming the call, the error and file:line from the
// enclosing function (out-of-memory becomes kOutOfMemory, a missing device kUnavailable); likewise
// CUBLAS_RETURN_IF_ERROR and NCCL_RETURN_IF_ERROR. Wrappers own one resource each, remember the
// device it lives on, release it in their destructor (errors there are ignored: nothing can be
// done about them) and are created through factories returning StatusOr.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "validate/status.h"

namespace specsim::validate {

Status CudaError(cudaError_t e, const char* expr, const char* file, int line);
Status CublasError(cublasStatus_t e, const char* expr, const char* file, int line);
Status NcclError(ncclResult_t e, const char* expr, const char* file, int line);

}  // namespace specsim::validate

#define CUDA_RETURN_IF_ERROR(expr)                                                               \
  do {                                                                                           \
    cudaError_t _e = (expr);                                                                     \
    if (_e != cudaSuccess) return ::specsim::validate::CudaError(_e, #expr, __FILE__, __LINE__); \
  } while (0)
#define CUBLAS_RETURN_IF_ERROR(expr)                                                                         \
  do {                                                                                                       \
    cublasStatus_t _e = (expr);                                                                              \
    if (_e != CUBLAS_STATUS_SUCCESS) return ::specsim::validate::CublasError(_e, #expr, __FILE__, __LINE__); \
  } while (0)
#define NCCL_RETURN_IF_ERROR(expr)                                                               \
  do {                                                                                           \
    ncclResult_t _e = (expr);                                                                    \
    if (_e != ncclSuccess) return ::specsim::validate::NcclError(_e, #expr, __FILE__, __LINE__); \
  } while (0)

namespace specsim::validate {

// Device memory.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  static StatusOr<DeviceBuffer> Create(int device, int64_t bytes);
  DeviceBuffer(DeviceBuffer&& o) noexcept { *this = std::move(o); }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { Reset(); }
  void Reset();
  void* data() const { return ptr_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  int64_t bytes() const { return bytes_; }
  int device() const { return device_; }

 private:
  void* ptr_ = nullptr;
  int64_t bytes_ = 0;
  int device_ = -1;
};

enum class HostKind { kPinned, kPageable, kMapped };

// Host memory: pinned (cudaHostAlloc), pageable (aligned malloc), or pinned + mapped + portable
// (every GPU can address it; device_ptr() is the address kernels use).
class HostBuffer {
 public:
  HostBuffer() = default;
  static StatusOr<HostBuffer> Create(int64_t bytes, HostKind kind);
  HostBuffer(HostBuffer&& o) noexcept { *this = std::move(o); }
  HostBuffer& operator=(HostBuffer&& o) noexcept;
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  ~HostBuffer() { Reset(); }
  void Reset();
  void* data() const { return ptr_; }
  void* device_ptr() const { return dev_ptr_; }
  int64_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  void* dev_ptr_ = nullptr;
  int64_t bytes_ = 0;
  HostKind kind_ = HostKind::kPinned;
};

class Stream {
 public:
  Stream() = default;
  static StatusOr<Stream> Create(int device);
  Stream(Stream&& o) noexcept { *this = std::move(o); }
  Stream& operator=(Stream&& o) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream() { Reset(); }
  void Reset();
  cudaStream_t get() const { return s_; }
  int device() const { return device_; }

 private:
  cudaStream_t s_ = nullptr;
  int device_ = -1;
};

class Event {
 public:
  Event() = default;
  static StatusOr<Event> Create(int device);
  Event(Event&& o) noexcept { *this = std::move(o); }
  Event& operator=(Event&& o) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event() { Reset(); }
  void Reset();
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_ = nullptr;
  int device_ = -1;
};

// An instantiated CUDA graph.
class GraphExec {
 public:
  GraphExec() = default;
  GraphExec(GraphExec&& o) noexcept { *this = std::move(o); }
  GraphExec& operator=(GraphExec&& o) noexcept;
  GraphExec(const GraphExec&) = delete;
  GraphExec& operator=(const GraphExec&) = delete;
  ~GraphExec() { Reset(); }
  void Reset();
  cudaGraphExec_t get() const { return exec_; }
  Status Launch(cudaStream_t s) const;
  // Captures everything `body` enqueues on `stream` (thread-local capture mode) into a graph.
  template <typename F>
  static StatusOr<GraphExec> Capture(int device, cudaStream_t stream, F&& body);
  // The two halves of Capture, for captures that end elsewhere than they begin (piecewise graphs):
  // BeginCapture starts a thread-local capture on `stream`; EndCapture ends it and instantiates
  // what was captured. EndCapture always leaves the stream out of capture mode, also on error.
  static Status BeginCapture(int device, cudaStream_t stream);
  static StatusOr<GraphExec> EndCapture(int device, cudaStream_t stream);

 private:
  static StatusOr<GraphExec> FromGraph(int device, cudaGraph_t g);
  cudaGraphExec_t exec_ = nullptr;
  int device_ = -1;
};

class CublasHandle {
 public:
  CublasHandle() = default;
  static StatusOr<CublasHandle> Create(int device, cudaStream_t stream);
  CublasHandle(CublasHandle&& o) noexcept { *this = std::move(o); }
  CublasHandle& operator=(CublasHandle&& o) noexcept;
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
  ~CublasHandle() { Reset(); }
  void Reset();
  cublasHandle_t get() const { return h_; }

 private:
  cublasHandle_t h_ = nullptr;
  int device_ = -1;
  void* workspace_ = nullptr;
};

// One NCCL communicator per GPU of this process (ncclCommInitAll). Abort() tears them down even
// while a collective hangs; the destructor destroys them normally otherwise.
class NcclComms {
 public:
  NcclComms() = default;
  static StatusOr<NcclComms> Create(const std::vector<int>& devices);
  NcclComms(NcclComms&& o) noexcept { *this = std::move(o); }
  NcclComms& operator=(NcclComms&& o) noexcept;
  NcclComms(const NcclComms&) = delete;
  NcclComms& operator=(const NcclComms&) = delete;
  ~NcclComms() { Reset(); }
  void Reset();
  void Abort();
  ncclComm_t get(int rank) const { return comms_[rank]; }
  int size() const { return static_cast<int>(comms_.size()); }
  bool aborted() const { return aborted_; }

 private:
  std::vector<ncclComm_t> comms_;
  std::vector<int> devices_;
  bool aborted_ = false;
};

// Waits for `event` (polling), giving up after timeout_s with kDeadlineExceeded.
Status WaitEvent(cudaEvent_t event, double timeout_s, const std::string& what);
// Records an event on `stream` and waits for it with a timeout.
Status SyncStream(int device, cudaStream_t stream, double timeout_s, const std::string& what);
// Waits for `event` by polling cudaEventQuery without sleeping (as cudaStreamSynchronize does under
// cudaDeviceScheduleSpin), so that the host resumes within about a microsecond of the GPU; gives up
// after timeout_s with kDeadlineExceeded. For host-paced loops, where WaitEvent's sleeps (tens of
// microseconds with the kernel's timer slack) would add host jitter of their own.
Status SpinWaitEvent(cudaEvent_t event, double timeout_s, const std::string& what);

// ---- template implementation ----
template <typename F>
StatusOr<GraphExec> GraphExec::Capture(int device, cudaStream_t stream, F&& body) {
  RETURN_IF_ERROR(BeginCapture(device, stream));
  Status st = body();
  if (!st.ok()) {
    (void)EndCapture(device, stream);  // leave capture mode; the partial graph is dropped
    return st.Annotate("during CUDA graph capture");
  }
  return EndCapture(device, stream);
}

}  // namespace specsim::validate
