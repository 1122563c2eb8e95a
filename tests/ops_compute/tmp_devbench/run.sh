#!/bin/bash
# Temporary (ops1): sgemm block-size sweep on a quiet machine. Deleted after use.
R=$(pwd); B=/tmp/b; mkdir -p $B; D=$R/tests/ops_compute/tmp_devbench
INC="-I$R/src -I$R/include"
V=""
variant() { # name force sed-expr...
  local n=$1 f=$2; shift 2
  sed "$@" $R/src/backends/cpu/sgemm.cpp > $B/$n.cpp
  (g++ -std=c++20 -O3 -DNDEBUG $INC $D/bench2.cpp $B/$n.cpp -o $B/$n && echo "$n ($f): $*" > $B/$n.txt) &
  V="$V $n:$f"
}
variant a512_8x32 avx512 -e s/x/x/
variant a512_12x32 avx512 -e "s/kAvx512MR = 8, kAvx512NR = 32/kAvx512MR = 12, kAvx512NR = 32/"
variant a512_4x64 avx512 -e "s/kAvx512MR = 8, kAvx512NR = 32/kAvx512MR = 4, kAvx512NR = 64/" -e "s/unroll 32/unroll 64/"
variant a512_8x32_kc384 avx512 -e "s/kKC = 256/kKC = 384/"
variant a512_8x32_mc24 avx512 -e "s/kMCStrips = 12/kMCStrips = 24/"
variant a512_8x32_nc1024 avx512 -e "s/kNC = 512;/kNC = 1024;/"
variant a2_6x16 avx2 -e s/x/x/
variant a2_4x16 avx2 -e "s/kAvx2MR = 6, kAvx2NR = 16/kAvx2MR = 4, kAvx2NR = 16/"
variant a2_3x32 avx2 -e "s/kAvx2MR = 6, kAvx2NR = 16/kAvx2MR = 3, kAvx2NR = 32/"
variant a2_8x16 avx2 -e "s/kAvx2MR = 6, kAvx2NR = 16/kAvx2MR = 8, kAvx2NR = 16/"
variant b_6x8 baseline -e s/x/x/
variant b_4x8 baseline -e "s/kBaselineMR = 6, kBaselineNR = 8/kBaselineMR = 4, kBaselineNR = 8/"
variant b_3x16 baseline -e "s/kBaselineMR = 6, kBaselineNR = 8/kBaselineMR = 3, kBaselineNR = 16/"
variant b_8x8 baseline -e "s/kBaselineMR = 6, kBaselineNR = 8/kBaselineMR = 8, kBaselineNR = 8/"
wait
for nf in $V; do n=${nf%%:*}; f=${nf##*:}; cat $B/$n.txt; for s in "64 3136 576" "64 224 576" "512 512 512" "256 4096 1024" "16 1024 1024" "1000 64 64"; do KILN_SGEMM=$f $B/$n $s; done; done
