// Probe: does a launch cost the host more when another rank's thread launches at the same time
// in the same process? specsim-validate runs every rank as a thread of one process; serving
// frameworks (SGLang, vLLM) run one process per rank. If the CUDA driver or library paths
// serialize the threads, the pacing suite's host issue costs are the threads' and not a
// framework's.
//
// Per op kind (an empty kernel, a cuBLAS bf16 GEMM m=1 n=k=4096, a one-rank NCCL allreduce of
// 8 KiB in place) and per arrangement, the host time of `ops` back-to-back calls on each thread,
// us per call, median over `reps` repetitions:
//   1 thread                 the call alone
//   2 threads, one context   both on the device's primary context, own streams, started together
//   2 threads, 2 contexts    the second thread on a context of its own (cuCtxCreate)
//   2 processes              forked before any CUDA call, started together through pipes
//   1 thread, busy stream    the kernel launches queued behind a 5 ms spin kernel
// Build: nvcc -O2 -std=c++17 -o launch_contention launch_contention.cu -lcublas -lnccl -lcuda
// Run:   ./launch_contention [ops=200] [reps=7]      (one GPU is enough: device 0)
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <nccl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#define CHECK_CUDA(x)                                                                        \
  do {                                                                                       \
    cudaError_t e = (x);                                                                     \
    if (e != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e)); \
      std::exit(2);                                                                          \
    }                                                                                        \
  } while (0)
#define CHECK_CU(x)                                                           \
  do {                                                                        \
    CUresult e = (x);                                                         \
    if (e != CUDA_SUCCESS) {                                                  \
      std::fprintf(stderr, "%s:%d %s: %d\n", __FILE__, __LINE__, #x, (int)e); \
      std::exit(2);                                                           \
    }                                                                         \
  } while (0)
#define CHECK_BLAS(x)                                                         \
  do {                                                                        \
    cublasStatus_t e = (x);                                                   \
    if (e != CUBLAS_STATUS_SUCCESS) {                                         \
      std::fprintf(stderr, "%s:%d %s: %d\n", __FILE__, __LINE__, #x, (int)e); \
      std::exit(2);                                                           \
    }                                                                         \
  } while (0)
#define CHECK_NCCL(x)                                                                        \
  do {                                                                                       \
    ncclResult_t e = (x);                                                                    \
    if (e != ncclSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, ncclGetErrorString(e)); \
      std::exit(2);                                                                          \
    }                                                                                        \
  } while (0)

__global__ void Empty() {}
__global__ void Spin(unsigned long long ns) {
  unsigned long long t0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  for (;;) {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    if (t - t0 >= ns) break;
  }
}

enum class Op { kKernel, kGemm, kNccl };
const char* OpName(Op op) { return op == Op::kKernel ? "kernel" : op == Op::kGemm ? "gemm" : "nccl"; }

// One rank's resources on device 0, in whatever context is current when it is made.
struct Rank {
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;
  ncclComm_t comm = nullptr;
  __nv_bfloat16 *w = nullptr, *x = nullptr, *y = nullptr;

  void Make() {
    CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CHECK_BLAS(cublasCreate(&blas));
    CHECK_BLAS(cublasSetStream(blas, stream));
    CHECK_CUDA(cudaMalloc(&w, 4096ull * 4096 * 2));
    CHECK_CUDA(cudaMalloc(&x, 4096ull * 2));
    CHECK_CUDA(cudaMalloc(&y, 4096ull * 2));
    CHECK_CUDA(cudaMemset(w, 0, 4096ull * 4096 * 2));
    CHECK_CUDA(cudaMemset(x, 0, 4096ull * 2));
    CHECK_CUDA(cudaMemset(y, 0, 4096ull * 2));
    ncclUniqueId id;
    CHECK_NCCL(ncclGetUniqueId(&id));
    CHECK_NCCL(ncclCommInitRank(&comm, 1, id, 0));
    CHECK_CUDA(cudaDeviceSynchronize());
  }

  void Issue(Op op) {
    const float one = 1, zero = 0;
    switch (op) {
      case Op::kKernel: Empty<<<1, 32, 0, stream>>>(); break;
      case Op::kGemm:
        // y[1 x 4096] = x[1 x 4096] * W[4096 x 4096] (column-major: y^T = W^T x^T).
        CHECK_BLAS(cublasGemmEx(blas, CUBLAS_OP_N, CUBLAS_OP_N, 4096, 1, 4096, &one, w, CUDA_R_16BF, 4096, x,
                                CUDA_R_16BF, 4096, &zero, y, CUDA_R_16BF, 4096, CUBLAS_COMPUTE_32F,
                                CUBLAS_GEMM_DEFAULT));
        break;
      case Op::kNccl: CHECK_NCCL(ncclAllReduce(y, y, 4096, ncclBfloat16, ncclSum, comm, stream)); break;
    }
  }

  // Host us per call of `ops` calls, after the stream drained.
  double TimeCalls(Op op, int ops, bool busy) {
    CHECK_CUDA(cudaStreamSynchronize(stream));
    if (busy) Spin<<<1, 1, 0, stream>>>(5'000'000ull);
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < ops; ++i) Issue(op);
    const auto t1 = std::chrono::steady_clock::now();
    CHECK_CUDA(cudaStreamSynchronize(stream));
    return std::chrono::duration<double, std::micro>(t1 - t0).count() / ops;
  }
};

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// A two-party spin barrier for threads.
struct SpinBarrier {
  std::atomic<int> arrived{0};
  std::atomic<int> generation{0};
  void Wait() {
    const int g = generation.load();
    if (arrived.fetch_add(1) == 1) {
      arrived.store(0);
      generation.fetch_add(1);
    } else {
      while (generation.load() == g) {
      }
    }
  }
};

void PrintRow(const std::string& arrangement, Op op, const std::vector<double>& per_thread_us) {
  std::printf("%-26s %-7s", arrangement.c_str(), OpName(op));
  for (double us : per_thread_us) std::printf(" %8.2f", us);
  std::printf("\n");
  std::fflush(stdout);
}

void OneThread(int ops, int reps, bool busy) {
  CHECK_CUDA(cudaSetDevice(0));
  Rank r;
  r.Make();
  for (Op op : {Op::kKernel, Op::kGemm, Op::kNccl}) {
    if (busy && op != Op::kKernel) continue;
    r.TimeCalls(op, ops, busy);  // warm-up
    std::vector<double> v;
    for (int i = 0; i < reps; ++i) v.push_back(r.TimeCalls(op, ops, busy));
    PrintRow(busy ? "1 thread, busy stream" : "1 thread", op, {Median(v)});
  }
}

void TwoThreads(int ops, int reps, bool own_context) {
  Rank ranks[2];
  SpinBarrier barrier;
  std::vector<double> out[3][2];
  auto body = [&](int t) {
    CHECK_CUDA(cudaSetDevice(0));
    CUcontext ctx = nullptr;
    if (own_context && t == 1) {
      CUdevice dev;
      CHECK_CU(cuDeviceGet(&dev, 0));
#if CUDA_VERSION >= 13000
      CHECK_CU(cuCtxCreate(&ctx, nullptr, 0, dev));
#else
      CHECK_CU(cuCtxCreate(&ctx, 0, dev));
#endif
      CHECK_CU(cuCtxSetCurrent(ctx));
    }
    ranks[t].Make();
    for (Op op : {Op::kKernel, Op::kGemm, Op::kNccl}) {
      barrier.Wait();
      ranks[t].TimeCalls(op, ops, false);
      for (int i = 0; i < reps; ++i) {
        barrier.Wait();
        out[static_cast<int>(op)][t].push_back(ranks[t].TimeCalls(op, ops, false));
      }
    }
    barrier.Wait();
  };
  std::thread a(body, 0), b(body, 1);
  a.join();
  b.join();
  for (Op op : {Op::kKernel, Op::kGemm, Op::kNccl}) {
    const int o = static_cast<int>(op);
    PrintRow(own_context ? "2 threads, 2 contexts" : "2 threads, one context", op,
             {Median(out[o][0]), Median(out[o][1])});
  }
}

// Two processes forked before any CUDA call; each waits for the parent's byte before every
// repetition so that they run together.
void TwoProcesses(int ops, int reps) {
  int go[2][2], ready[2][2];
  pid_t pids[2];
  for (int p = 0; p < 2; ++p) {
    if (pipe(go[p]) != 0 || pipe(ready[p]) != 0) std::exit(2);
    pids[p] = fork();
    if (pids[p] == 0) {
      CHECK_CUDA(cudaSetDevice(0));
      Rank r;
      r.Make();
      std::vector<double> v[3];
      char c = 0;
      for (Op op : {Op::kKernel, Op::kGemm, Op::kNccl}) {
        for (int i = 0; i <= reps; ++i) {
          if (write(ready[p][1], &c, 1) != 1 || read(go[p][0], &c, 1) != 1) std::_Exit(3);
          const double us = r.TimeCalls(op, ops, false);
          if (i > 0) v[static_cast<int>(op)].push_back(us);
        }
      }
      double med[3];
      for (int o = 0; o < 3; ++o) med[o] = Median(v[o]);
      if (write(ready[p][1], med, sizeof(med)) != sizeof(med)) std::_Exit(3);
      std::_Exit(0);
    }
  }
  char c = 0;
  for (int step = 0; step < 3 * (reps + 1); ++step) {
    for (int p = 0; p < 2; ++p)
      if (read(ready[p][0], &c, 1) != 1) std::exit(2);
    for (int p = 0; p < 2; ++p)
      if (write(go[p][1], &c, 1) != 1) std::exit(2);
  }
  double med[2][3];
  for (int p = 0; p < 2; ++p) {
    size_t got = 0;
    while (got < sizeof(med[p])) {
      const ssize_t n = read(ready[p][0], reinterpret_cast<char*>(med[p]) + got, sizeof(med[p]) - got);
      if (n <= 0) std::exit(2);
      got += n;
    }
    int status = 0;
    waitpid(pids[p], &status, 0);
  }
  for (Op op : {Op::kKernel, Op::kGemm, Op::kNccl})
    PrintRow("2 processes", op, {med[0][static_cast<int>(op)], med[1][static_cast<int>(op)]});
}

int main(int argc, char** argv) {
  const int ops = argc > 1 ? std::atoi(argv[1]) : 200;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 7;
  std::printf("# host us per call, %d calls per repetition, median of %d repetitions (per thread/process)\n", ops,
              reps);
  // The processes first: fork must come before this process touches CUDA.
  TwoProcesses(ops, reps);
  OneThread(ops, reps, false);
  OneThread(ops, reps, true);
  TwoThreads(ops, reps, false);
  TwoThreads(ops, reps, true);
  return 0;
}
