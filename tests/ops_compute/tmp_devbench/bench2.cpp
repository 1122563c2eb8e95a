#include "backends/cpu/sgemm.h"
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <random>
using namespace kiln::cpu;
int main(int argc, char** argv) {
  int64_t M = 64, N = 3136, K = 576;
  if (argc > 3) { M = atoll(argv[1]); N = atoll(argv[2]); K = atoll(argv[3]); }
  std::vector<float> A(M*K), B(K*N), C(M*N);
  std::mt19937 g(1); std::uniform_real_distribution<float> d(-1,1);
  for (auto& v : A) v = d(g);
  for (auto& v : B) v = d(g);
  std::vector<char> ws(sgemmWorkspaceSize(M,N,K));
  PackedMatrix pa = PackedMatrix::packA(M, K, {A.data(), K, false});
  double best = 1e9;
  for (int rep = 0; rep < 15; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
    sgemm(M,N,K,1.f,{{A.data(),K,false}, &pa},{{B.data(),N,false}},0.f,C.data(),N,ws.data());
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now()-t0).count());
  }
  printf("%lldx%lldx%lld: %.1f GFLOP/s\n", (long long)M,(long long)N,(long long)K, 2.0*M*N*K/best/1e9);
}
