#!/usr/bin/env bash
# On the GPU machine, from the checkout's root with .gl and .bench carried (benchmarks/device/prepare.sh): the
# pending measurements in one call, each part under its own time limit, every output packed into one
# $OUT/res.tar.xz after each part (a run returns only a few loose files, and a part that runs out of time
# still leaves the others').
# PARTS (default "gemm llm real"):
#   gemm  bench_gemm's default cases (the 4096^3 GEMMs, the f32 conv2d of batch 16 x 256 x 56^2 that took 25.6 ms
#         on the H200 on 12-05 against 2.05 on the H100) and the real models' GEMM sweep
#   llm   LLM decode (SIZES, default 125m) in f32, f16, f16-w4g64 and f16-w8 (weight-only linears: issue 20's
#         "w4 decode faster than f16 decode"), against PyTorch eager and CUDA graph
#   real  the real-size models (CASES) f32 and f16 against PyTorch, and int8 and a16w8 (issue 20's "int8
#         resnet50 faster than gpuu's f16 resnet50")
#   quant the int8 kernels on this GPU: vulkan_quant_test (every int8 GEMM kernel, split-K and the requantizing
#         store against the CPU reference, bit for bit) and bench_int8_gemm (each kernel's time, and whether its
#         output equals the direct kernel's)
#   attention  bench_attention: the flash kernel at GPT-2-small's heads over 128..1024 rows, its keys split as the
#         selector picks and in one pass, against the decomposed graph; decode steps one pass against split
#   gemm-tests  the GEMM kernels on this GPU against the CPU reference: vulkan_gemm_test (the matrix-core
#         kernels, which lavapipe lacks), vulkan_gemm_split_test, vulkan_gemm_epilogue_test (chains in GEMM
#         stores, layer norms in split-K reductions with subgroup sums)
#   kernel-tests  vulkan_attention_test (the matrix-core attention, which lavapipe lacks),
#         vulkan_conv_pool_test (convolutions through a materialized im2col view on matrix cores) and
#         vulkan_reduce_norm_test (layer norms summed in subgroups of 32, which lavapipe's 8 do not take)
#   linears  bench_gemm --linear on the real models' f16 GEMM sizes (ViT's 197 rows, GPT-2's 128 and 2048, 4096^3),
#         as picked and on each matrix-core tile; with SPIRV_DIR, once more with every NAME.spv there standing in
#         for the built-in kernel NAME (a variant under measurement, built here with glslc and spirv_coopmat_khr)
#   dispatch  bench_dispatch: what a dispatch and the barrier before it cost the GPU (chains of copies under
#         each barrier form; chains of f16 layer norms and linears of 128 and 2048 rows as KernelGraph records them)
#   load  issue 21's figures (benchmarks/load/load_memory.py): file vs weights, load time with a cold and a
#         warm pipeline cache, RSS growth, first vs warm execute, device memory; the executor VGF path only
# Env: PARTS, PART_S (seconds per part, default 170), SIZES, PRECISIONS, CASES, F16_CASES, F16_PRECISIONS (real's
# precisions besides f32, default f16,int8,a16w8), PROFILE (real's programs profiled dispatch by dispatch),
# GEMM_ONLY (gemm's sweep: only the cases whose names contain one of these, comma-separated), SPIRV_DIR (linears),
# ATTN_ARGS (bench_attention's, e.g. --lengths 128,197), BACKEND_OPTION (real: the programs timed again under it,
# e.g. VulkanBackend:gemm_kernel=coopmat2).
set -u
for f in .gl/*.deb; do dpkg -x "$f" / >/dev/null 2>&1; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
res=/tmp/res; rm -rf $res; mkdir -p $res  # a machine may keep /tmp from an earlier loan
[ -f .bench/bin.tar.xz ] && tar -C .bench -xJf .bench/bin.tar.xz
commit=$(cat .bench/commit 2>/dev/null || echo unknown)
pack() { tar -C /tmp -cJf "$OUT/res.tar.xz" res; }
run_part() {  # name, command...
  local name=$1; shift
  echo "== $(date -u +%T) $name" | tee -a $res/log
  timeout "${PART_S:-170}" "$@" > "$res/$name.out" 2> "$res/$name.err"
  echo "== $(date -u +%T) $name rc=$?" | tee -a $res/log
  pack
}
for part in ${PARTS:-gemm llm real}; do
  case $part in
    gemm) run_part gemm-default sh -c ".bench/bin/bench_gemm --runs 10 --warmup 3 > $res/gemm-default.json"
          run_part gemm-sweep sh -c ".bench/bin/bench_gemm --sweep-real ${GEMM_ONLY:+--only $GEMM_ONLY} --runs 15 --warmup 3 > $res/gemm-sweep.json" ;;
    llm)  run_part llm env OUT_DIR=$res GPUU_COMMIT="$commit" SIZES="${SIZES:-125m}" \
            PRECISIONS="${PRECISIONS:-f32,f16,f16-w4g64,f16-w8}" bash benchmarks/llm/run.sh .bench/real ;;
    real) cp .bench/bin/bench_suite .bench/bin/profile_program .bench/real/  # real/run.sh runs them from its folder
          run_part real env OUT_DIR=$res GPUU_COMMIT="$commit" BENCH=.bench/real F16_PRECISIONS="${F16_PRECISIONS:-f16,int8,a16w8}" \
            ${CASES:+CASES=$CASES} ${F16_CASES:+F16_CASES=$F16_CASES} ${BACKEND_OPTION:+BACKEND_OPTION=$BACKEND_OPTION} \
            bash .bench/real/run.sh ;;
    linears) L="--linear 197,768,2304 --linear 197,3072,768 --linear 128,768,2304 --linear 2048,768,2304 --linear 2048,3072,768 --linear 4096,4096,4096"
             run_part linears sh -c ".bench/bin/bench_gemm --runs 15 --warmup 3 $L > $res/linears.json"
             if [ -n "${SPIRV_DIR:-}" ]; then
               S=""; for f in "$SPIRV_DIR"/*.spv; do S="$S --spirv $(basename "$f" .spv)=$f"; done
               run_part linears-variant sh -c ".bench/bin/bench_gemm --runs 15 --warmup 3 $L $S > $res/linears-variant.json"
             fi ;;
    dispatch) run_part dispatch sh -c ".bench/bin/bench_dispatch --runs 40 --warmup 10 --rows 128 --rows 2048 > $res/dispatch.json" ;;
    attention) run_part attention sh -c ".bench/bin/bench_attention --runs 30 ${ATTN_ARGS:-} > $res/attention.json" ;;
    gemm-tests) for t in vulkan_gemm_test vulkan_gemm_split_test vulkan_gemm_epilogue_test; do
                  run_part $t .bench/bin/$t
                done ;;
    kernel-tests) for t in vulkan_attention_test vulkan_conv_pool_test vulkan_reduce_norm_test; do
                    run_part $t .bench/bin/$t
                  done ;;
    quant) run_part quant-test .bench/bin/vulkan_quant_test
           run_part int8-gemm sh -c ".bench/bin/bench_int8_gemm --runs 20 --warmup 5 > $res/int8-gemm.json" ;;
    load) python3 -m pip install -q --no-index --no-deps --target /tmp/load-site .bench/real/gpuu-*.whl
          run_part load env PYTHONPATH=/tmp/load-site python3 benchmarks/load/load_memory.py /tmp/load-programs \
            --vgf-paths executor --result $res/load.json ${LOAD_CASES:+--cases $LOAD_CASES} ;;
    *) echo "unknown part $part" | tee -a $res/log ;;
  esac
done
pack
ls -la "$OUT"
