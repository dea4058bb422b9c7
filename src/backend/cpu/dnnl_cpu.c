/* dnnl_cpu.c: what the CPU backend's oneDNN files share (dnnl_cpu.h): the check that a precision
 * runs on this CPU, rounding to bf16, the process's engine, the matmuls and the memory objects by
 * shape. gemm_dnnl.c (decoding in int8 and bf16), mix_dnnl.c (bf16 training) and sgemm_dnnl.c
 * (FP32) all call them, and blas.c calls gemm_dnnl.c and sgemm_dnnl.c: here, below them all. */
#include <stdint.h>
#include <string.h>
#include <threads.h>

#include "backend/cpu/dnnl_cpu.h"

/* the int8 products' form here: INT8_S8 (VNNI), INT8_U8 (AVX2) or INT8_NONE */
enum { INT8_NONE, INT8_S8, INT8_U8 };

#ifndef NMT_REAL_DOUBLE
/* 1 when the CPU has the instructions (cpu_has, its flag) and oneDNN's ceiling
 * (ONEDNN_MAX_CPU_ISA=AVX2, say: the way to run an AVX2 machine's kernels on a newer one) lets it
 * use the ISA: below it, oneDNN would run these products on slow reference kernels, or none */
static int isa_ok(unsigned want, int cpu_has)
{
    return ((unsigned)dnnl_get_effective_cpu_isa() & want) == want && cpu_has;
}
#endif

static int int8_form(void)
{
#ifdef NMT_REAL_DOUBLE
    return INT8_NONE;
#else
    __builtin_cpu_init();
    if (isa_ok(dnnl_cpu_isa_avx512_core_vnni, __builtin_cpu_supports("avx512vnni"))) return INT8_S8;
    return isa_ok(dnnl_cpu_isa_avx2, __builtin_cpu_supports("avx2")) ? INT8_U8 : INT8_NONE;
#endif
}

int dnnl_cpu_int8_wlevels(void) { return int8_form() == INT8_U8 ? U8_WLEVELS : 127; }

int dnnl_cpu_supported(int prec)
{
    if (prec == BK_PREC_F32) return 1;
#ifdef NMT_REAL_DOUBLE
    return 0;
#else
    if (prec == BK_PREC_INT8) return int8_form() != INT8_NONE;
    __builtin_cpu_init();
    if (prec == BK_PREC_BF16) return isa_ok(dnnl_cpu_isa_avx512_core_bf16, __builtin_cpu_supports("avx512bf16"));
    return 0;
#endif
}

/* To nearest even by adding half a bf16 step (less one, plus the kept bit's parity) before the
 * cut; a NaN is cut with its quiet bit set, which that sum could have carried into an infinity. */
void dnnl_cpu_bf16_span(uint16_t *y, const real *x, size_t n)
{
    for (size_t j = 0; j < n; j++) {
        uint32_t u;
        float f = (float)x[j];
        memcpy(&u, &f, 4);
        y[j] = (u & 0x7fffffffu) > 0x7f800000u ? (uint16_t)(u >> 16 | 0x40) : (uint16_t)((u + 0x7fffu + ((u >> 16) & 1)) >> 16);
    }
}

/* Large blocks are split over the threads: bf16 training converts each update's weights (one span
 * of millions) and its large activations at every product, and done by the calling thread alone
 * that left the other core waiting (5.8% of the cycles of SMALL bf16 training on two threads:
 * docs/results/lowp.md, "bf16 training: speed"). Below BF16_TEAM elements a team costs more. */
#define BF16_TEAM (1L << 16)

void dnnl_cpu_bf16_rows(uint16_t *y, const real *x, int ldx, int R, int cols)
{
    long total = (long)R * cols;
    if (R == 1 || ldx == cols) { /* one dense span, in chunks */
        long chunks = (total + BF16_TEAM - 1) / BF16_TEAM;
#pragma omp parallel for schedule(static) if (chunks > 1)
        for (long c = 0; c < chunks; c++)
            dnnl_cpu_bf16_span(y + c * BF16_TEAM, x + c * BF16_TEAM, (size_t)(c < chunks - 1 ? BF16_TEAM : total - c * BF16_TEAM));
        return;
    }
#pragma omp parallel for schedule(static) if (total >= BF16_TEAM)
    for (int i = 0; i < R; i++) dnnl_cpu_bf16_span(y + (size_t)i * cols, x + (size_t)i * ldx, (size_t)cols);
}

#ifndef NMT_REAL_DOUBLE
/* One engine for the process, made on first use. */
static dnnl_engine_t engine;
static dnnl_status_t engine_status = dnnl_runtime_error;
static once_flag engine_once = ONCE_FLAG_INIT;

static void engine_make(void) { engine_status = dnnl_engine_create(&engine, dnnl_cpu, 0); }

dnnl_engine_t dnnl_cpu_engine(void)
{
    call_once(&engine_once, engine_make);
    return engine_status == dnnl_success ? engine : NULL;
}

dnnl_status_t dnnl_cpu_engine_status(void)
{
    call_once(&engine_once, engine_make);
    return engine_status;
}

dnnl_status_t dnnl_cpu_matmul(dnnl_primitive_t *p, dnnl_primitive_desc_t *pd_out, const dnnl_memory_desc_t *a,
                              const dnnl_memory_desc_t *b, const dnnl_memory_desc_t *c, int beta, int scaled, int zero)
{
    dnnl_engine_t eng = dnnl_cpu_engine();
    dnnl_matmul_desc_t md;
    dnnl_primitive_attr_t attr = NULL;
    dnnl_post_ops_t po = NULL;
    dnnl_primitive_desc_t pd = NULL;
    dnnl_status_t st = eng ? dnnl_matmul_desc_init(&md, a, b, NULL, c) : dnnl_runtime_error;
    if (st == dnnl_success) st = dnnl_primitive_attr_create(&attr);
    if (st == dnnl_success && scaled) st = dnnl_primitive_attr_set_output_scales(attr, 1, 1 << 1, &DNNL_RUNTIME_F32_VAL);
    const int32_t zp = zero;
    if (st == dnnl_success && zero) st = dnnl_primitive_attr_set_zero_points(attr, DNNL_ARG_SRC, 1, 0, &zp);
    if (st == dnnl_success && beta) st = dnnl_post_ops_create(&po);
    if (st == dnnl_success && beta) st = dnnl_post_ops_append_sum(po, 1.0f);
    if (st == dnnl_success && beta) st = dnnl_primitive_attr_set_post_ops(attr, po);
    if (st == dnnl_success) st = dnnl_primitive_desc_create(&pd, &md, attr, eng, NULL);
    if (st == dnnl_success) st = dnnl_primitive_create(p, pd);
    dnnl_post_ops_destroy(po);
    dnnl_primitive_attr_destroy(attr);
    if (st == dnnl_success && pd_out) *pd_out = pd;
    else dnnl_primitive_desc_destroy(pd);
    return st;
}

dnnl_status_t dnnl_cpu_matmul_any(dnnl_primitive_t *p, dnnl_data_type_t ab, int ta, int tb, int beta)
{
    const dnnl_dim_t R = DNNL_RUNTIME_DIM_VAL;
    dnnl_dims_t d = {R, R}, as = {ta ? 1 : R, ta ? R : 1}, bs = {tb ? 1 : R, tb ? R : 1}, cs = {R, 1};
    dnnl_memory_desc_t amd, bmd, cmd;
    dnnl_status_t st = dnnl_memory_desc_init_by_strides(&amd, 2, d, ab, as);
    if (st == dnnl_success) st = dnnl_memory_desc_init_by_strides(&bmd, 2, d, ab, bs);
    if (st == dnnl_success) st = dnnl_memory_desc_init_by_strides(&cmd, 2, d, dnnl_f32, cs);
    if (st == dnnl_success) st = dnnl_cpu_matmul(p, NULL, &amd, &bmd, &cmd, beta, 0, 0);
    return st;
}

dnnl_status_t dnnl_cpu_mem(dnnl_cpu_mems *c, dnnl_data_type_t dt, int rows, int cols, int rs, int cs, void *data,
                           dnnl_memory_t *out)
{
    long key[5] = {dt, rows, cols, rs, cs};
    for (int i = 0; i < DNNL_CPU_MEMS && c->mem[i]; i++)
        if (!memcmp(c->key[i], key, sizeof key)) {
            *out = c->mem[i];
            return dnnl_memory_set_data_handle(*out, data);
        }
    int i = c->next;
    c->next = (c->next + 1) % DNNL_CPU_MEMS;
    dnnl_memory_destroy(c->mem[i]);
    c->mem[i] = NULL;
    dnnl_memory_desc_t md;
    dnnl_dims_t d = {rows, cols}, st = {rs, cs}, vd = {cols};
    dnnl_status_t rc = rows ? dnnl_memory_desc_init_by_strides(&md, 2, d, dt, st) : dnnl_memory_desc_init_by_tag(&md, 1, vd, dt, dnnl_a);
    if (rc == dnnl_success) rc = dnnl_memory_create(&c->mem[i], &md, dnnl_cpu_engine(), data);
    if (rc == dnnl_success) memcpy(c->key[i], key, sizeof key);
    else memset(c->key[i], 0, sizeof key);
    *out = c->mem[i];
    return rc;
}

void dnnl_cpu_mems_free(dnnl_cpu_mems *c)
{
    for (int i = 0; i < DNNL_CPU_MEMS; i++) dnnl_memory_destroy(c->mem[i]);
    memset(c, 0, sizeof *c);
}
#endif
