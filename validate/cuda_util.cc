#include "validate/cuda_util.h"

#include <chrono>
#include <cstdlib>
#include <thread>

namespace specsim::validate {
namespace {
std::string Where(const char* expr, const char* file, int line) {
  std::string f = file;
  if (auto p = f.find("validate/"); p != std::string::npos) f = f.substr(p);
  return std::string(expr) + " at " + f + ":" + std::to_string(line);
}
}  // namespace

Status CudaError(cudaError_t e, const char* expr, const char* file, int line) {
  cudaGetLastError();  // clear a non-sticky error so later calls are not blamed for it
  std::string msg = std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ") in " + Where(expr, file, line);
  if (e == cudaErrorMemoryAllocation) return OutOfMemory(msg);
  if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver || e == cudaErrorInvalidDevice ||
      e == cudaErrorPeerAccessUnsupported || e == cudaErrorNotSupported)
    return Unavailable(msg);
  return Internal(msg);
}

Status CublasError(cublasStatus_t e, const char* expr, const char* file, int line) {
  std::string msg =
      std::string(cublasGetStatusName(e)) + " (" + cublasGetStatusString(e) + ") in " + Where(expr, file, line);
  if (e == CUBLAS_STATUS_ALLOC_FAILED) return OutOfMemory(msg);
  if (e == CUBLAS_STATUS_ARCH_MISMATCH || e == CUBLAS_STATUS_NOT_SUPPORTED) return Unavailable(msg);
  return Internal(msg);
}

Status NcclError(ncclResult_t e, const char* expr, const char* file, int line) {
  std::string msg = std::string("NCCL error ") + std::to_string(static_cast<int>(e)) + " (" + ncclGetErrorString(e) +
                    ") in " + Where(expr, file, line);
  const char* last = ncclGetLastError(nullptr);
  if (last && *last) msg += ": " + std::string(last);
  if (e == ncclSystemError || e == ncclRemoteError) return Unavailable(msg);
  return Internal(msg);
}

// ---- DeviceBuffer ----
StatusOr<DeviceBuffer> DeviceBuffer::Create(int device, int64_t bytes) {
  DeviceBuffer b;
  CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
  cudaError_t e = cudaMalloc(&b.ptr_, static_cast<size_t>(bytes < 1 ? 1 : bytes));
  if (e == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    size_t free_b = 0, total = 0;
    cudaMemGetInfo(&free_b, &total);
    return OutOfMemory("out of memory on GPU " + std::to_string(device) + ": asked for " + std::to_string(bytes >> 20) +
                       " MiB, " + std::to_string(free_b >> 20) + " MiB free");
  }
  CUDA_RETURN_IF_ERROR(e);
  b.bytes_ = bytes;
  b.device_ = device;
  return b;
}
DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    Reset();
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
    std::swap(device_, o.device_);
  }
  return *this;
}
void DeviceBuffer::Reset() {
  if (ptr_) {
    cudaSetDevice(device_);
    cudaFree(ptr_);
  }
  ptr_ = nullptr;
  bytes_ = 0;
}

// ---- HostBuffer ----
StatusOr<HostBuffer> HostBuffer::Create(int64_t bytes, HostKind kind) {
  HostBuffer b;
  size_t n = static_cast<size_t>(bytes < 1 ? 1 : bytes);
  b.kind_ = kind;
  if (kind == HostKind::kPageable) {
    b.ptr_ = std::aligned_alloc(4096, (n + 4095) / 4096 * 4096);
    if (!b.ptr_) return OutOfMemory("host malloc of " + std::to_string(bytes) + " bytes failed");
  } else {
    unsigned flags = kind == HostKind::kMapped ? (cudaHostAllocMapped | cudaHostAllocPortable) : cudaHostAllocPortable;
    CUDA_RETURN_IF_ERROR(cudaHostAlloc(&b.ptr_, n, flags));
    if (kind == HostKind::kMapped) CUDA_RETURN_IF_ERROR(cudaHostGetDevicePointer(&b.dev_ptr_, b.ptr_, 0));
  }
  b.bytes_ = bytes;
  return b;
}
HostBuffer& HostBuffer::operator=(HostBuffer&& o) noexcept {
  if (this != &o) {
    Reset();
    std::swap(ptr_, o.ptr_);
    std::swap(dev_ptr_, o.dev_ptr_);
    std::swap(bytes_, o.bytes_);
    std::swap(kind_, o.kind_);
  }
  return *this;
}
void HostBuffer::Reset() {
  if (ptr_) {
    if (kind_ == HostKind::kPageable)
      std::free(ptr_);
    else
      cudaFreeHost(ptr_);
  }
  ptr_ = dev_ptr_ = nullptr;
  bytes_ = 0;
}

// ---- Stream ----
StatusOr<Stream> Stream::Create(int device) {
  Stream s;
  CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
  CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&s.s_, cudaStreamNonBlocking));
  s.device_ = device;
  return s;
}
Stream& Stream::operator=(Stream&& o) noexcept {
  if (this != &o) {
    Reset();
    std::swap(s_, o.s_);
    std::swap(device_, o.device_);
  }
  return *this;
}
void Stream::Reset() {
  if (s_) {
    cudaSetDevice(device_);
    cudaStreamDestroy(s_);
  }
  s_ = nullptr;
}

// ---- Event ----
StatusOr<Event> Event::Create(int device) {
  Event e;
  CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
  CUDA_RETURN_IF_ERROR(cudaEventCreate(&e.e_));
  e.device_ = device;
  return e;
}
Event& Event::operator=(Event&& o) noexcept {
  if (this != &o) {
    Reset();
    std::swap(e_, o.e_);
    std::swap(device_, o.device_);
  }
  return *this;
}
void Event::Reset() {
  if (e_) {
    cudaSetDevice(device_);
    cudaEventDestroy(e_);
  }
  e_ = nullptr;
}

// ---- GraphExec ----
GraphExec& GraphExec::operator=(GraphExec&& o) noexcept {
  if (this != &o) {
    Reset();
    std::swap(exec_, o.exec_);
    std::swap(device_, o.device_);
  }
  return *this;
}
void GraphExec::Reset() {
  if (exec_) {
    cudaSetDevice(device_);
    cudaGraphExecDestroy(exec_);
  }
  exec_ = nullptr;
}
Status GraphExec::Launch(cudaStream_t s) const {
  CUDA_RETURN_IF_ERROR(cudaGraphLaunch(exec_, s));
  return Status::Ok();
}
Status GraphExec::BeginCapture(int device, cudaStream_t stream) {
  CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
  CUDA_RETURN_IF_ERROR(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  return Status::Ok();
}
StatusOr<GraphExec> GraphExec::EndCapture(int device, cudaStream_t stream) {
  cudaGraph_t g = nullptr;
  cudaError_t end = cudaStreamEndCapture(stream, &g);
  if (end != cudaSuccess) {
    if (g) cudaGraphDestroy(g);
    return CudaError(end, "cudaStreamEndCapture", __FILE__, __LINE__);
  }
  return FromGraph(device, g);
}
StatusOr<GraphExec> GraphExec::FromGraph(int device, cudaGraph_t g) {
  GraphExec x;
  cudaError_t e = cudaGraphInstantiate(&x.exec_, g, 0);
  cudaGraphDestroy(g);
  CUDA_RETURN_IF_ERROR(e);
  x.device_ = device;
  return x;
}

// ---- CublasHandle ----
StatusOr<CublasHandle> CublasHandle::Create(int device, cudaStream_t stream) {
  CublasHandle h;
  CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
  CUBLAS_RETURN_IF_ERROR(cublasCreate(&h.h_));
  h.device_ = device;
  CUBLAS_RETURN_IF_ERROR(cublasSetStream(h.h_, stream));
  // A fixed workspace makes cuBLAS capturable in CUDA graphs without allocations.
  const size_t ws = 32u << 20;
  CUDA_RETURN_IF_ERROR(cudaMalloc(&h.workspace_, ws));
  CUBLAS_RETURN_IF_ERROR(cublasSetWorkspace(h.h_, h.workspace_, ws));
  CUBLAS_RETURN_IF_ERROR(cublasSetMathMode(h.h_, CUBLAS_DEFAULT_MATH));
  return h;
}
CublasHandle& CublasHandle::operator=(CublasHandle&& o) noexcept {
  if (this != &o) {
    Reset();
    std::swap(h_, o.h_);
    std::swap(device_, o.device_);
    std::swap(workspace_, o.workspace_);
  }
  return *this;
}
void CublasHandle::Reset() {
  if (h_ || workspace_) cudaSetDevice(device_);
  if (h_) cublasDestroy(h_);
  if (workspace_) cudaFree(workspace_);
  h_ = nullptr;
  workspace_ = nullptr;
}

// ---- NcclComms ----
StatusOr<NcclComms> NcclComms::Create(const std::vector<int>& devices) {
  NcclComms c;
  c.comms_.assign(devices.size(), nullptr);
  c.devices_ = devices;
  NCCL_RETURN_IF_ERROR(ncclCommInitAll(c.comms_.data(), static_cast<int>(devices.size()), devices.data()));
  return c;
}
NcclComms& NcclComms::operator=(NcclComms&& o) noexcept {
  if (this != &o) {
    Reset();
    std::swap(comms_, o.comms_);
    std::swap(devices_, o.devices_);
    std::swap(aborted_, o.aborted_);
  }
  return *this;
}
void NcclComms::Reset() {
  for (size_t i = 0; i < comms_.size(); ++i) {
    if (comms_[i]) {
      cudaSetDevice(devices_[i]);
      ncclCommDestroy(comms_[i]);
    }
  }
  comms_.clear();
}
void NcclComms::Abort() {
  for (size_t i = 0; i < comms_.size(); ++i) {
    if (comms_[i]) {
      cudaSetDevice(devices_[i]);
      ncclCommAbort(comms_[i]);
      comms_[i] = nullptr;
    }
  }
  aborted_ = true;
}

Status WaitEvent(cudaEvent_t event, double timeout_s, const std::string& what) {
  auto start = std::chrono::steady_clock::now();
  for (;;) {
    cudaError_t e = cudaEventQuery(event);
    if (e == cudaSuccess) return Status::Ok();
    if (e != cudaErrorNotReady) CUDA_RETURN_IF_ERROR(e);
    double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (waited > timeout_s)
      return DeadlineExceeded(what + " did not finish within " + std::to_string(timeout_s) + " s (hung?)");
    std::this_thread::sleep_for(std::chrono::microseconds(waited < 0.01 ? 5 : 200));
  }
}

Status SpinWaitEvent(cudaEvent_t event, double timeout_s, const std::string& what) {
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t polls = 0;; ++polls) {
    cudaError_t e = cudaEventQuery(event);
    if (e == cudaSuccess) return Status::Ok();
    if (e != cudaErrorNotReady) CUDA_RETURN_IF_ERROR(e);
    if (polls % 256 == 255) {
      double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (waited > timeout_s)
        return DeadlineExceeded(what + " did not finish within " + std::to_string(timeout_s) + " s (hung?)");
    }
  }
}

Status SyncStream(int device, cudaStream_t stream, double timeout_s, const std::string& what) {
  ASSIGN_OR_RETURN(Event ev, Event::Create(device));
  CUDA_RETURN_IF_ERROR(cudaEventRecord(ev.get(), stream));
  return WaitEvent(ev.get(), timeout_s, what);
}

}  // namespace specsim::validate
