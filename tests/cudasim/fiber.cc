// fiber.cc: the CUDA emulation's execution of a grid: the blocks one after another, each block's
// threads as fibers, so that __syncthreads is a real barrier and the warp collectives real
// 32-lane exchanges; between barriers the warps run in the order NMT_CUDASIM_ORDER names
// (forward, reverse, random[:SEED]), and every misuse of a barrier or a mask stops the program.
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#include <string>
#include <vector>

#include "simint.h"

// AddressSanitizer's fiber annotations cost twice the rest of a switch; without them a report
// from a fiber's stack shows its top frame only (which names the kernel's line): -DSIM_ASAN_FIBERS
// turns them on for a full trace
#if defined(__SANITIZE_ADDRESS__) && defined(SIM_ASAN_FIBERS)
#include <sanitizer/common_interface_defs.h>
#define SIM_ASAN 1
#else
#define SIM_ASAN 0
#endif

thread_local sim_ctx *sim_cur;

// ---- the context switch (x86-64 System V): callee-saved registers, MXCSR and the x87 control
// word on the old stack, then the other stack's. A new fiber starts in fiber_start with r12 its
// argument and r13 its function ----
asm(R"(
    .text
    .globl sim_switch
    .hidden sim_switch
    .type sim_switch,@function
sim_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    subq $8, %rsp
    stmxcsr (%rsp)
    fnstcw 4(%rsp)
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    ldmxcsr (%rsp)
    fldcw 4(%rsp)
    addq $8, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size sim_switch,.-sim_switch
    .globl sim_fiber_start
    .hidden sim_fiber_start
    .type sim_fiber_start,@function
sim_fiber_start:
    movq %r12, %rdi
    callq *%r13
    ud2
    .size sim_fiber_start,.-sim_fiber_start
)");
extern "C" void sim_switch(void **save, void *to);
extern "C" void sim_fiber_start(void);

enum { ST_RUN, ST_BAR, ST_COLL, ST_DONE };
enum { C_SHFL, C_BALLOT };
static const size_t STACK = 128 << 10; // bytes per fiber, a guard page below each

struct fiber {
    void *sp;
    int stack; // its stack while it has started and not finished, else -1
    sim_ctx ctx;
    int state, kind, pred, lane_mask, width;
    unsigned mask;
    uint64_t val;
    void *fake; // ASan's fake stack while switched out
};

struct block {
    const char *name;
    const std::function<void()> *body;
    std::vector<fiber> f;
    void *sched_sp, *sched_fake;
    fiber *cur;
    const void *sched_bottom;
    size_t sched_size;
};
static thread_local block *B;
static thread_local char *stacks;
static thread_local size_t nstacks;
// stacks no started, unfinished fiber holds: a thread that never waits hands its stack to the next
static thread_local std::vector<int> free_stacks;

[[noreturn]] void sim_die(const char *fmt, ...)
{
    fflush(stdout);
    fprintf(stderr, "cudasim: ");
    if (B && B->cur) {
        sim_ctx &c = B->cur->ctx;
        fprintf(stderr, "kernel %s, block (%u,%u,%u), thread %u: ", B->name, c.bid.x, c.bid.y, c.bid.z,
                c.tid.x + c.tid.y * c.bdim.x + c.tid.z * c.bdim.x * c.bdim.y);
    } else if (B) {
        fprintf(stderr, "kernel %s: ", B->name);
    }
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    abort();
}

// ---- the schedule: forward, reverse, or a seeded random permutation per phase ----
static int order_kind = -1; // 0 forward, 1 reverse, 2 random
static uint64_t order_seed = 1;
static void order_read(void)
{
    const char *o = getenv("NMT_CUDASIM_ORDER");
    order_kind = 0;
    if (!o || !*o || !strcmp(o, "forward")) return;
    if (!strcmp(o, "reverse")) order_kind = 1;
    else if (!strncmp(o, "random", 6)) {
        order_kind = 2;
        if (o[6] == ':') order_seed = strtoull(o + 7, NULL, 10);
    } else sim_die("NMT_CUDASIM_ORDER=%s: expected forward, reverse or random[:SEED]", o);
}
static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}
// idx[0..n) in this phase's order; salt tells phases and blocks apart
static void order_make(std::vector<int> &idx, int n, uint64_t salt)
{
    static thread_local uint64_t launches;
    idx.resize(n);
    for (int i = 0; i < n; i++) idx[i] = order_kind == 1 ? n - 1 - i : i;
    if (order_kind != 2) return;
    uint64_t s = mix(order_seed ^ mix(salt ^ mix(++launches)));
    for (int i = n - 1; i > 0; i--) {
        s = mix(s);
        int j = (int)(s % (uint64_t)(i + 1));
        std::swap(idx[i], idx[j]);
    }
}

// ---- switching ----
static void asan_start(void **fake, const void *bottom, size_t size)
{
#if SIM_ASAN
    __sanitizer_start_switch_fiber(fake, bottom, size);
#else
    (void)fake, (void)bottom, (void)size;
#endif
}
static void asan_finish(void *fake, const void **bottom, size_t *size)
{
#if SIM_ASAN
    __sanitizer_finish_switch_fiber(fake, bottom, size);
#else
    (void)fake, (void)bottom, (void)size;
#endif
}
static char *stack_of(int i) { return stacks + (size_t)i * (STACK + 4096) + 4096; }

static void fiber_init(fiber *f, int stack);
static void resume(fiber *f)
{
    if (f->stack < 0) {
        fiber_init(f, free_stacks.back());
        free_stacks.pop_back();
    }
    sim_cur = &f->ctx;
    B->cur = f;
    asan_start(&B->sched_fake, stack_of(f->stack), STACK);
    sim_switch(&B->sched_sp, f->sp);
    asan_finish(B->sched_fake, NULL, NULL);
    B->cur = NULL;
    if (f->state == ST_DONE) {
        free_stacks.push_back(f->stack);
        f->stack = -1;
    }
}
static void yield(fiber *f, bool exiting)
{
    asan_start(exiting ? NULL : &f->fake, B->sched_bottom, B->sched_size);
    sim_switch(&f->sp, B->sched_sp);
    asan_finish(f->fake, &B->sched_bottom, &B->sched_size);
}
static void fiber_main(fiber *f)
{
    asan_finish(NULL, &B->sched_bottom, &B->sched_size);
    (*B->body)();
    f->state = ST_DONE;
    yield(f, true);
    abort(); // a finished fiber is never resumed
}

static void stacks_reserve(size_t n)
{
    if (n <= nstacks) return;
    if (stacks) munmap(stacks, nstacks * (STACK + 4096));
    size_t bytes = n * (STACK + 4096);
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) sim_die("no memory for %zu fiber stacks", n);
    stacks = (char *)p;
    nstacks = n;
    free_stacks.clear();
    for (size_t i = n; i-- > 0;) free_stacks.push_back((int)i);
    for (size_t i = 0; i < n; i++) mprotect(stacks + i * (STACK + 4096), 4096, PROT_NONE);
}

static void fiber_init(fiber *f, int i)
{
    uint64_t *sp = (uint64_t *)(stack_of(i) + STACK) - 10; // after its ret: 16-byte aligned
    f->stack = i;
    uint32_t csr[2];
    asm volatile("stmxcsr %0\n\tfnstcw %1" : "=m"(csr[0]), "=m"(csr[1]));
    memcpy(&sp[0], csr, 8);
    sp[3] = (uint64_t)(uintptr_t)fiber_main; // r13
    sp[4] = (uint64_t)(uintptr_t)f;          // r12
    sp[7] = (uint64_t)(uintptr_t)sim_fiber_start;
    f->sp = sp;
    f->fake = NULL;
}

// ---- what a thread calls: it waits in the scheduler until its partners arrive ----
static fiber *self(const char *what)
{
    if (!B || !B->cur) sim_die("%s outside a kernel", what);
    return B->cur;
}
void __syncthreads(void) { (void)__syncthreads_or(0); }
int __syncthreads_or(int pred)
{
    fiber *f = self("__syncthreads");
    f->state = ST_BAR;
    f->pred = pred != 0;
    yield(f, false);
    return f->pred;
}
static uint64_t collective(int kind, unsigned mask, uint64_t val, int lane_mask, int width)
{
    fiber *f = self("a warp collective");
    f->state = ST_COLL;
    f->kind = kind;
    f->mask = mask;
    f->val = val;
    f->lane_mask = lane_mask;
    f->width = width;
    yield(f, false);
    return f->val;
}
uint64_t sim_shfl_xor(unsigned mask, uint64_t bits, int lane_mask, int width)
{
    if (width <= 0 || width > 32 || (width & (width - 1))) sim_die("__shfl_xor_sync: width %d", width);
    return collective(C_SHFL, mask, bits, lane_mask, width);
}
unsigned __ballot_sync(unsigned mask, int pred) { return (unsigned)collective(C_BALLOT, mask, pred != 0, 0, 32); }

// ---- a warp's collective, once none of its lanes can run on: every lane of the mask must be
// there, with the same mask, at the same collective ----
static void check_group(int lo, int hi, int first)
{
    fiber *F = &B->f[0];
    unsigned m = F[first].mask;
    B->cur = &F[first];
    if (!(m >> (first - lo) & 1)) sim_die("mask 0x%08x leaves out the calling lane %d", m, first - lo);
    for (int b = 0; b < 32; b++) {
        if (!(m >> b & 1)) continue;
        int j = lo + b;
        if (j >= hi)
            sim_die("mask 0x%08x names lane %d, which this warp of %d threads lacks (a partial warp)", m, b, hi - lo);
        if (F[j].state == ST_DONE) sim_die("mask 0x%08x names lane %d, which has exited", m, b);
        if (F[j].state == ST_BAR)
            sim_die("lane %d waits at __syncthreads while lane %d is at a warp collective (mask 0x%08x)", b,
                    first - lo, m);
        if (F[j].mask != m) sim_die("lanes disagree on the mask: 0x%08x and lane %d's 0x%08x", m, b, F[j].mask);
        if (F[j].kind != F[first].kind) sim_die("lanes %d and %d at different warp collectives", first - lo, b);
    }
    B->cur = NULL;
}
static void perform(int lo, int first)
{
    fiber *F = &B->f[0];
    unsigned m = F[first].mask, ballot = 0;
    uint64_t got[32];
    for (int b = 0; b < 32; b++)
        if (m >> b & 1) ballot |= (unsigned)(F[lo + b].val & 1) << b;
    for (int b = 0; b < 32; b++) {
        if (!(m >> b & 1)) continue;
        fiber *f = &F[lo + b];
        int src = b ^ f->lane_mask;
        if (src / f->width != b / f->width || src > 31) src = b; // outside its segment: its own value
        if (f->kind == C_SHFL && !(m >> src & 1)) {
            B->cur = f;
            sim_die("__shfl_xor_sync reads lane %d, outside the mask 0x%08x", src, m);
        }
        got[b] = f->kind == C_BALLOT ? ballot : F[lo + src].val;
    }
    for (int b = 0; b < 32; b++)
        if (m >> b & 1) {
            F[lo + b].val = got[b];
            F[lo + b].state = ST_RUN;
        }
}

// runs warp w's lanes as far as they go: each until it waits or exits, collectives performed as
// their lanes gather, until every lane is at the barrier or done
static void run_warp(int w, int n)
{
    int lo = w * 32, hi = lo + 32 < n ? lo + 32 : n;
    for (;;) {
        for (int k = 0; k < hi - lo; k++) {
            int i = order_kind == 1 ? hi - 1 - k : lo + k;
            if (B->f[i].state == ST_RUN) resume(&B->f[i]);
        }
        int first = -1;
        for (int i = lo; i < hi && first < 0; i++)
            if (B->f[i].state == ST_COLL) first = i;
        if (first < 0) return;
        check_group(lo, hi, first);
        perform(lo, first);
    }
}

// the barrier: every thread there (release), or all done (the block ends), else a fault
static bool barrier(int n)
{
    int at = 0, done = 0, any = 0;
    for (int i = 0; i < n; i++) {
        if (B->f[i].state == ST_BAR) at++, any |= B->f[i].pred;
        else done++;
    }
    if (!at) return false;
    if (done) {
        for (int i = 0; i < n; i++)
            if (B->f[i].state == ST_DONE) B->cur = &B->f[i];
        sim_die("__syncthreads that %d of %d threads never reach (they returned)", done, n);
    }
    for (int i = 0; i < n; i++) {
        B->f[i].state = ST_RUN;
        B->f[i].pred = any;
    }
    return true;
}

static void run_block(dim3 bid, dim3 grid, dim3 bd, void *dyn, size_t shared)
{
    int n = (int)(bd.x * bd.y * bd.z), nw = (n + 31) / 32;
    if (dyn) memset(dyn, 0xff, shared); // poison: a read before a write shows
    for (int i = 0; i < n; i++) {
        fiber *f = &B->f[i];
        f->ctx = sim_ctx{{i % bd.x, i / bd.x % bd.y, i / (bd.x * bd.y)}, {bid.x, bid.y, bid.z}, bd, grid, dyn};
        f->state = ST_RUN;
        f->stack = -1;
    }
    std::vector<int> order;
    for (uint64_t phase = 0;; phase++) {
        order_make(order, nw, mix(phase) ^ ((uint64_t)bid.x << 32 | bid.y << 16 | bid.z));
        for (int w : order) run_warp(w, n);
        if (!barrier(n)) return;
    }
}

void sim_run_grid(const char *name, dim3 grid, dim3 bd, size_t shared, const std::function<void()> &body)
{
    if (order_kind < 0) order_read();
    int n = (int)(bd.x * bd.y * bd.z);
    stacks_reserve((size_t)n);
    block blk;
    blk.name = name;
    blk.body = &body;
    blk.f.resize(n);
    blk.cur = NULL;
    blk.sched_bottom = NULL;
    blk.sched_size = 0;
    block *outer = B;
    B = &blk;
    std::vector<char> dyn(shared);
    long nb = (long)grid.x * grid.y * grid.z;
    std::vector<int> order;
    order_make(order, (int)nb, 0x5eed);
    for (long k = 0; k < nb; k++) {
        long b = order[k];
        dim3 bid((unsigned)(b % grid.x), (unsigned)(b / grid.x % grid.y), (unsigned)(b / ((long)grid.x * grid.y)));
        run_block(bid, grid, bd, shared ? dyn.data() : NULL, shared);
    }
    B = outer;
    sim_cur = NULL;
}
