/* test_devsim.c: the simulated device catches what it exists to catch. Its memory faults when the
 * host touches it, a kernel given host memory or a span past a block stops the process with the
 * kernel's and the argument's names, and its counts of launches, copies and marks are exact.
 * Each violation runs in a child process, whose death is the check. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/devsim/devsim.h"
#include "base/err.h"
#include "test.h"

static const backend_ops *dv = &devsim_backend;

/* runs f in a child with stderr to a file; the signal that ended it (0: exited) and its stderr */
static int in_child(void (*f)(void *), void *arg, char *msg, size_t size)
{
    char path[] = "/tmp/nmt-devsim-XXXXXX";
    int fd = mkstemp(path);
    NMT_ASSERT(fd >= 0);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd, 2);
        f(arg);
        _exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    ssize_t n = pread(fd, msg, size - 1, 0);
    msg[n > 0 ? n : 0] = 0;
    close(fd);
    unlink(path);
    /* under AddressSanitizer a fault is its report and exit, not the signal itself */
    if (WIFEXITED(st) && WEXITSTATUS(st) && strstr(msg, "SEGV")) return SIGSEGV;
    return WIFSIGNALED(st) ? WTERMSIG(st) : 0;
}

static void host_read(void *p) { volatile real x = *(volatile real *)p; (void)x; }
static void host_write(void *p) { *(volatile real *)p = 1; }
static void gemm_host_operand(void *p)
{
    real host[16] = {0};
    dv->gemm(0, 0, 4, 4, 4, p, 4, host, 4, 0, p, 4); /* B on the host */
}
static void gemm_past_block(void *p) { dv->gemm(0, 0, 4, 4, 4, p, 4, p, 4, 0, (real *)p + 8, 4); } /* C runs off */
static void copy_out_past(void *p)
{
    real host[32];
    dv->copy_out(host, p, sizeof host); /* the block holds 16 */
}
static void free_inside(void *p) { dv->free((real *)p + 1); }
/* two 2x2 products over the 16-real block p: A and B in reals 0-7, C in 6-13, sel (device ints)
 * in the block's last two reals */
static void batched(const real *A, const real *B, real *C, const int *sel)
{
    bk_batch s = {2, 1, 4, 0, 4, 0, 4, 0, sel};
    dv->gemm_batched(0, 0, 2, 2, 2, A, 2, B, 2, 0, C, 2, &s);
}
static void batched_host_operand(void *p)
{
    real host[8] = {0};
    batched(p, host, (real *)p + 6, NULL); /* B on the host */
}
/* sel {0, 1}: within the block; sel {0, 10} moves the second B to 40 reals in, past the block,
 * which only sel's values show */
static void batched_sel(void *p, int last)
{
    int sel[2] = {0, last};
    int *dsel = (int *)((real *)p + 14);
    dv->copy_in(dsel, sel, sizeof sel);
    batched(p, p, (real *)p + 6, dsel);
}
static void batched_sel_in(void *p) { batched_sel(p, 1); }
static void batched_sel_past(void *p) { batched_sel(p, 10); }

static void test_faults(void)
{
    real *p = dv->alloc(sizeof(real) * 16);
    NMT_ASSERT(p);
    CHECK(devsim_owns(p) && devsim_owns(p + 15) && !devsim_owns(p + 16) && !devsim_owns(&p));
    char msg[512];
    CHECKF(in_child(host_read, p, msg, sizeof msg) == SIGSEGV, "a host read of device memory did not fault");
    CHECKF(in_child(host_write, p, msg, sizeof msg) == SIGSEGV, "a host write of device memory did not fault");
    int sig = in_child(gemm_host_operand, p, msg, sizeof msg);
    CHECKF(sig == SIGABRT && strstr(msg, "gemm: argument B") && strstr(msg, "host memory"),
           "a host operand: signal %d, '%s'", sig, msg);
    sig = in_child(gemm_past_block, p, msg, sizeof msg);
    CHECKF(sig == SIGABRT && strstr(msg, "gemm: argument C") && strstr(msg, "outside"), "a span past the block: %d, '%s'",
           sig, msg);
    sig = in_child(copy_out_past, p, msg, sizeof msg);
    CHECKF(sig == SIGABRT && strstr(msg, "copy_out"), "a copy past the block: %d, '%s'", sig, msg);
    sig = in_child(batched_host_operand, p, msg, sizeof msg);
    CHECKF(sig == SIGABRT && strstr(msg, "gemm_batched: argument B") && strstr(msg, "host memory"),
           "gemm_batched with a host operand: %d, '%s'", sig, msg);
    sig = in_child(batched_sel_in, p, msg, sizeof msg);
    CHECKF(sig == 0, "gemm_batched within the block stopped: %d, '%s'", sig, msg);
    sig = in_child(batched_sel_past, p, msg, sizeof msg);
    CHECKF(sig == SIGABRT && strstr(msg, "gemm_batched: argument B") && strstr(msg, "outside"),
           "gemm_batched whose sel reads past the block: %d, '%s'", sig, msg);
    sig = in_child(free_inside, p, msg, sizeof msg);
    CHECKF(sig == SIGABRT && strstr(msg, "free"), "freeing inside a block: %d, '%s'", sig, msg);
    dv->free(p);
    CHECK(!devsim_owns(p));
}

/* copies move bytes both ways and are counted; kernels are counted one launch per call; the
 * marks' spans give the cost between consecutive marks */
static void test_counts(void)
{
    devsim_stats a, b;
    real h[16], back[16];
    for (int i = 0; i < 16; i++) h[i] = (real)i - 7.5f;
    real *p = dv->alloc(sizeof h), *q = dv->alloc(sizeof h);
    devsim_get_stats(&a);
    dv->copy_in(p, h, sizeof h);
    dv->mark(BK_MARK_STEP);
    dv->act_rows(BK_TANH, q, 4, p, 4, NULL, 4, 4);
    dv->copy_rows(p, 4, q, 4, 4, 4);
    dv->mark(BK_MARK_STEP);
    dv->zero_rows(q, 4, 4, 4);
    dv->mark(BK_MARK_STEP);
    dv->copy_out(back, p, sizeof back);
    devsim_get_stats(&b);
    int same = 1;
    for (int i = 0; i < 16; i++) same &= fabs(back[i] - tanh(h[i])) < 1e-6;
    CHECKF(same, "copy_in, two kernels and copy_out did not give tanh of the input");
    CHECKF(b.launches - a.launches == 3, "%llu launches counted for 3 kernels", b.launches - a.launches);
    CHECK(b.bytes_in - a.bytes_in == sizeof h && b.bytes_out - a.bytes_out == sizeof h);
    const devsim_span *s = &b.span[BK_MARK_STEP];
    CHECKF(s->marks == 3 && s->launches[1] - s->launches[0] == 3 && s->bytes_in[1] == s->bytes_in[0],
           "step marks: %llu marks, %llu launches between the first and last", s->marks,
           s->launches[1] - s->launches[0]);
    CHECK(b.live_bytes - a.live_bytes == 0 && b.peak_bytes >= 2 * sizeof h);
    dv->free(p);
    dv->free(q);
    devsim_get_stats(&b);
    CHECK(a.live_bytes - b.live_bytes == 2 * sizeof h);
}

int main(void)
{
    test_faults();
    test_counts();
    return test_done("test_devsim");
}
