/* cpu.c: the CPU backend's table, its memory (aligned host blocks) and its threads (OpenMP).
 * The kernels live in blas.c, vec.c, rows.c, rnn.c, output.c, update.c and topk.c. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "backend/cpu/cpu.h"
#include "backend/cpu/vec.h"

/* 64 bytes: a cache line, and what AVX-512 loads like. The block comes from calloc and is aligned
 * by hand, the address calloc gave kept just below it for cpu_free. calloc, not memset: a large
 * block is a fresh mapping the C library knows to be zero, so its pages stay untouched until a
 * kernel writes them. Workspaces are sized for the longest batch and optimizer state covers
 * every embedding row, so most of both is never written in a typical run: zeroing them by hand
 * made every page resident (+99 MiB peak in SMALL training). */
enum { ALIGN = 64, HEAD = ALIGN + sizeof(void *) };

static void *cpu_alloc(size_t bytes)
{
    if (bytes > SIZE_MAX - HEAD) return NULL;
    char *raw = calloc(1, bytes + HEAD);
    if (!raw) return NULL;
    /* at least sizeof(void *) past raw, and bytes before the end of the block */
    char *p = (char *)(((uintptr_t)raw + HEAD) & ~(uintptr_t)(ALIGN - 1));
    memcpy(p - sizeof raw, &raw, sizeof raw);
    return p;
}

static void cpu_free(void *p)
{
    if (!p) return;
    char *raw;
    memcpy(&raw, (char *)p - sizeof raw, sizeof raw);
    free(raw);
}

static void cpu_copy(void *dst, const void *src, size_t bytes)
{
    if (bytes) memmove(dst, src, bytes);
}


const backend_ops cpu_backend = {
    .name = "cpu",
    .alloc = cpu_alloc,
    .free = cpu_free,
    .copy_in = cpu_copy,
    .copy_out = cpu_copy,
    .set_threads = cpu_set_threads,
    .threads = cpu_threads,
    .parallel_for = cpu_parallel_for,
    .gemm = cpu_gemm,
    .gemm_rows = cpu_gemm_rows,
    .colsum_add = cpu_colsum_add,
    .vexp = vec_exp,
    .zero_rows = cpu_zero_rows,
    .copy_rows = cpu_copy_rows,
    .act_rows = cpu_act_rows,
    .act_grad_rows = cpu_act_grad_rows,
    .add_rows = cpu_add_rows,
    .mul_rows = cpu_mul_rows,
    .axpy_diff_rows = cpu_axpy_diff_rows,
    .dist_rows = cpu_dist_rows,
    .gru_gates = cpu_gru_gates,
    .gru_state = cpu_gru_state,
    .gru_grad_state = cpu_gru_grad_state,
    .gru_grad_reset = cpu_gru_grad_reset,
    .attn_forward = cpu_attn_forward,
    .attn_backward = cpu_attn_backward,
    .attn_window = cpu_attn_window,
    .attn_window_backward = cpu_attn_window_backward,
    .layer_norm = cpu_layer_norm,
    .layer_norm_backward = cpu_layer_norm_backward,
    .attn_softmax = cpu_attn_softmax,
    .attn_softmax_backward = cpu_attn_softmax_backward,
    .gemm_batched = cpu_gemm_batched,
    .act_grad_x_rows = cpu_act_grad_x_rows,
    .dropout_mask = cpu_dropout_mask,
    .gather_rows_ld = cpu_gather_rows_ld,
    .repeat_row = cpu_repeat_row,
    .maxout = cpu_maxout,
    .maxout_backward = cpu_maxout_backward,
    .softmax_nll = cpu_softmax_nll,
    .softmax_nll_backward = cpu_softmax_nll_backward,
    .gather_rows = cpu_gather_rows,
    .scatter_add_rows = cpu_scatter_add_rows,
    .scatter_rows = cpu_scatter_rows,
    .gather_cols = cpu_gather_cols,
    .sumsq = cpu_sumsq,
    .update = cpu_update,
    .update_rows = cpu_update_rows,
    .settle_rows = cpu_settle_rows,
    .topk_rows = cpu_topk_rows,
    .logp_acc_rows = cpu_logp_acc_rows,
.lowp = &cpu_lowp,
    .mix = &cpu_mix,
};
