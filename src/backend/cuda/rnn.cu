// rnn.cu: the CUDA kernels of the recurrent layers, twins of src/backend/cpu/rnn.c: the GRU
// step's gates, state and their gradients (one thread per unit), one decoder step's additive
// attention forward and backward (one block per query row), and the ξ window of Markov / LocFer.
#include "backend/cuda/cuda_int.h"

// ==== GRU ======================================================================================

void cu_gru_gates(real *z, real *r, real *rh, const real *a, int lda, const real *zr, const real *hp, int ldhp, int B,
                  int n)
{
    cu_rows("gru_gates", B, n, [=] __device__(int b, int k) {
        const real *ab = a + (long)b * lda, *zrb = zr + (long)b * 2 * n;
        real zv = cu_sigmoid(ab[k] + zrb[k]), rv = cu_sigmoid(ab[n + k] + zrb[n + k]);
        long i = (long)b * n + k;
        z[i] = zv;
        r[i] = rv;
        rh[i] = hp ? rv * hp[(long)b * ldhp + k] : 0;
    });
}

void cu_gru_state(real *h, int ldh, real *hc, const real *z, const real *a, int lda, const real *uq, const real *hp,
                  int ldhp, const unsigned char *mask, int B, int n)
{
    cu_rows("gru_state", B, n, [=] __device__(int b, int k) {
        long i = (long)b * n + k;
        real c = tanhf(a[(long)b * lda + k] + uq[i]);
        real prev = hp ? hp[(long)b * ldhp + k] : 0;
        hc[i] = c;
        h[(long)b * ldh + k] = !mask || mask[b] ? prev + z[i] * (c - prev) : prev;
    });
}

// masked rows: da = 0 over all three gates, and g passes to dhp
void cu_gru_grad_state(real *da, int ldda, real *dhp, const real *g, const real *z, const real *hc, const real *hp,
                       int ldhp, const unsigned char *mask, int B, int n)
{
    cu_rows("gru_grad_state", B, n, [=] __device__(int b, int k) {
        long i = (long)b * n + k;
        real *dab = da + (long)b * ldda, gk = g[i];
        if (mask && !mask[b]) {
            dab[k] = dab[n + k] = dab[2 * n + k] = 0;
            dhp[i] += gk;
            return;
        }
        real prev = hp ? hp[(long)b * ldhp + k] : 0, zk = z[i], ck = hc[i];
        real dz = gk * (ck - prev);
        dhp[i] += gk * (1 - zk);
        dab[2 * n + k] = gk * zk * (1 - ck * ck);
        dab[k] = dz * zk * (1 - zk);
    });
}

void cu_gru_grad_reset(real *da, int ldda, real *dhp, const real *dq, const real *r, const real *hp, int ldhp,
                       const unsigned char *mask, int B, int n)
{
    cu_rows("gru_grad_reset", B, n, [=] __device__(int b, int k) {
        if (mask && !mask[b]) return;
        long i = (long)b * n + k;
        real rk = r[i], dqk = dq[i];
        dhp[i] += dqk * rk;
        da[(long)b * ldda + n + k] = dqk * hp[(long)b * ldhp + k] * rk * (1 - rk);
    });
}

// ==== attention ================================================================================

// pre_k = q_k + UaH_jk (+ Σ_o ξ_jo M_ok, a zero ξ skipped as the CPU skips it)
__device__ static inline real preact(real q, real u, const bk_attn &a, const real *xij, int k)
{
    real p = q + u;
    for (int o = 0; o < a.K; o++) {
        real f = xij[o];
        if (f != 0) p += f * a.M[(long)o * a.na + k];
    }
    return p;
}

// row b: energies (one warp per position), softmax over the L real positions, context
__global__ static void attn_forward_kernel(real *alpha, real *ctx, const real *UaH, const real *q, const real *v,
                                           const real *H, const int *xlen, const int *src, bk_attn a)
{
    __shared__ float shf[32];
    __shared__ double shd[32];
    int b = blockIdx.x, sb = src ? src[b] : b, L = xlen[sb], na = a.na, Tx = a.Tx;
    int w = threadIdx.x / 32, lane = threadIdx.x % 32, nw = blockDim.x / 32;
    real *al = alpha + (long)b * Tx;
    const real *qb = q + (long)b * na;
    for (int j = w; j < L; j += nw) {
        const real *u = UaH + ((long)j * a.Bs + sb) * na, *xij = a.K ? a.xi + ((long)b * Tx + j) * a.K : NULL;
        real e = 0;
        for (int k = lane; k < na; k += 32) e += v[k] * tanhf(preact(qb[k], u[k], a, xij, k));
        e = cu_warp_sum(e);
        if (!lane) al[j] = e;
    }
    __syncthreads();
    real mx = -INFINITY;
    for (int j = threadIdx.x; j < L; j += blockDim.x) mx = fmaxf(mx, al[j]);
    mx = cu_block_max(mx, shf);
    double s = 0;
    for (int j = threadIdx.x; j < L; j += blockDim.x) s += expf(al[j] - mx);
    real sum = (real)cu_block_sum(s, shd);
    for (int j = threadIdx.x; j < Tx; j += blockDim.x) al[j] = j < L ? expf(al[j] - mx) / sum : 0;
    __syncthreads();
    for (int c = threadIdx.x; c < a.hd; c += blockDim.x) {
        real acc = 0;
        for (int j = 0; j < L; j++) acc += al[j] * H[((long)j * a.Bs + sb) * a.ldH + c];
        ctx[(long)b * a.hd + c] = acc;
    }
}

void cu_attn_forward(real *alpha, real *ctx, const real *UaH, const real *q, const real *v, const real *H,
                     const int *xlen, const int *src, const bk_attn *a)
{
    if (a->B <= 0) return;
    attn_forward_kernel<<<a->B, CU_THREADS, 0, cu_stream()>>>(alpha, ctx, UaH, q, v, H, xlen, src, *a);
    cu_check("attn_forward");
}

// Row b's backward, in the CPU's two passes over j: dα_j (into tmp) and dH, then the softmax
// Jacobian and the score's backward, thread k owning unit k's sums (dv, dq, dUaH, dM), so that
// each runs in the order of j as the CPU's. dpre goes through shared memory for dξ (K > 0).
__global__ static void attn_backward_kernel(real *dq, real *dUaH, real *dH, real *dv_rows, const real *dctx,
                                            const real *dalpha, const real *alpha, const real *UaH, const real *q,
                                            const real *v, const real *H, const int *xlen, bk_attn a, real *tmp)
{
    extern __shared__ float sdp[]; // 2 na values when K > 0: position j's dpre in half j & 1
    __shared__ float s_sum;
    int b = blockIdx.x, B = a.B, L = xlen[b], na = a.na, hd = a.hd, Tx = a.Tx, K = a.K;
    int w = threadIdx.x / 32, lane = threadIdx.x % 32, nw = blockDim.x / 32;
    const real *al = alpha + (long)b * Tx, *g = dctx + (long)b * hd, *qb = q + (long)b * na;
    real *de = tmp + (long)b * Tx;
    for (int j = w; j < L; j += nw) {
        const real *h = H + ((long)j * B + b) * a.ldH;
        real d = 0;
        for (int c = lane; c < hd; c += 32) d += g[c] * h[c];
        d = cu_warp_sum(d);
        if (!lane) de[j] = (dalpha ? dalpha[(long)b * Tx + j] : 0) + d;
    }
    for (int c = threadIdx.x; c < hd; c += blockDim.x)
        for (int j = 0; j < L; j++) dH[((long)j * B + b) * a.ldH + c] += al[j] * g[c];
    __syncthreads();
    if (threadIdx.x == 0) { // Σ_j α_j dα_j in the order of j, as the CPU's
        real s = 0;
        for (int j = 0; j < L; j++) s += al[j] * de[j];
        s_sum = s;
    }
    for (int k = threadIdx.x; k < na; k += blockDim.x) dq[(long)b * na + k] = 0;
    for (long i = threadIdx.x; K && i < (long)Tx * K; i += blockDim.x) a.dxi[(long)b * Tx * K + i] = 0;
    __syncthreads();
    real s = s_sum;
    for (int j = 0; j < L; j++) {
        real dej = al[j] * (de[j] - s), *sj = sdp + (j & 1) * na;
        const real *xij = K ? a.xi + ((long)b * Tx + j) * K : NULL;
        for (int k = threadIdx.x; k < na; k += blockDim.x) {
            long u = ((long)j * B + b) * na + k;
            real t = tanhf(preact(qb[k], UaH[u], a, xij, k));
            dv_rows[(long)b * na + k] += dej * t;
            real dp = dej * v[k] * (1 - t * t);
            dUaH[u] += dp;
            dq[(long)b * na + k] += dp;
            for (int o = 0; o < K; o++) a.dM_rows[((long)b * K + o) * na + k] += xij[o] * dp;
            if (K) sj[k] = dp;
        }
        if (!K) continue;
        __syncthreads(); // sj complete, and every read of the other half (position j - 1) done
        for (int o = w; o < K; o += nw) { // dξ_jo = Σ_k dpre_k M_ok
            real acc = 0;
            for (int k = lane; k < na; k += 32) acc += sj[k] * a.M[(long)o * na + k];
            acc = cu_warp_sum(acc);
            if (!lane) a.dxi[((long)b * Tx + j) * K + o] = acc;
        }
        // no second barrier: position j + 1 writes the other half, and j + 2 this one only after
        // j + 1's barrier, which each thread reaches after its reads here
    }
}

void cu_attn_backward(real *dq, real *dUaH, real *dH, real *dv_rows, const real *dctx, const real *dalpha,
                      const real *alpha, const real *UaH, const real *q, const real *v, const real *H, const int *xlen,
                      const bk_attn *a, real *tmp)
{
    if (a->B <= 0) return;
    size_t shared = a->K ? 2 * sizeof(real) * a->na : 0; // two halves: one barrier per position
    attn_backward_kernel<<<a->B, CU_THREADS, shared, cu_stream()>>>(dq, dUaH, dH, dv_rows, dctx, dalpha, alpha, UaH,
                                                                     q, v, H, xlen, *a, tmp);
    cu_check("attn_backward");
}

// every entry written: zero outside the sentence, as the CPU's memset leaves it
void cu_attn_window(real *xi, const real *src, int ld, const int *len, int H, int Tx, int k)
{
    int K = 2 * k + 1;
    cu_rows("attn_window", H * Tx, K, [=] __device__(int bj, int o) {
        int b = bj / Tx, j = bj % Tx, p = j + o - k, L = len[b];
        xi[(long)bj * K + o] = j < L && p >= 0 && p < L ? src[(long)b * ld + p] : 0;
    });
}

// dsrc[b,p] collects from the windows j = p-k .. p+k in the order of j (then o), as the CPU's loop
void cu_attn_window_backward(real *dsrc, const real *dxi, const int *len, int B, int Tx, int k)
{
    int K = 2 * k + 1;
    cu_rows("attn_window_backward", B, Tx, [=] __device__(int b, int p) {
        int L = len[b];
        if (p >= L) return;
        real acc = dsrc[(long)b * Tx + p];
        for (int j = p - k < 0 ? 0 : p - k; j <= p + k && j < L; j++) acc += dxi[((long)b * Tx + j) * K + (p - j + k)];
        dsrc[(long)b * Tx + p] = acc;
    });
}
