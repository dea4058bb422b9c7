/* backend.c: which backend is current, and choosing one by name (nmt_set_device, NMT_DEVICE).
 * A plain pointer, set before any work and only read afterwards, so that reading it on every
 * kernel call costs one load. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/cpu/cpu.h"
#include "backend/cuda/cuda.h"
#include "backend/devsim/devsim.h"
#include "base/err.h"

/* The CUDA backend, in its own library (src/backend/cuda/, built where nvcc exists): weak, so
 * that a program linked without it finds NULL here and says so. */
__attribute__((weak)) const backend_ops *cuda_backend_open(int device, char *why, size_t whylen);

const backend_ops *backend_current = &cpu_backend;

/* the precision of the calling thread's products (bk_prec_use): every backend's, so the seam's */
_Thread_local const bk_precision *bk_prec_current;
const bk_precision bk_prec_rows = {NULL, NULL, 1};

const backend_ops *backend_cpu(void) { return &cpu_backend; }

void backend_set(const backend_ops *b) { backend_current = b ? b : &cpu_backend; }

/* the backends this build has, by the names --device takes */
static const backend_ops *const known[] = {&cpu_backend, &devsim_backend};
enum { NKNOWN = sizeof known / sizeof known[0] };

/* "cuda" or "cuda:N" (device N, default 0) */
static int select_cuda(const char *name, nmt_err *err)
{
    if (!cuda_backend_open)
        return nmt_fail(err, NMT_ERR_ARG, "device '%s': this nmt was built without CUDA (nvcc was not found "
                        "when it was built, or make CUDA=0)", name);
    char *end = NULL;
    long n = name[4] == ':' ? strtol(name + 5, &end, 10) : 0;
    if (name[4] == ':' && (end == name + 5 || *end || n < 0 || n > 1024))
        return nmt_fail(err, NMT_ERR_ARG, "device '%s': expected cuda or cuda:N, N a device number", name);
    char why[256];
    const backend_ops *b = cuda_backend_open((int)n, why, sizeof why);
    if (!b) return nmt_fail(err, NMT_ERR_ARG, "device '%s': %s", name, why);
    backend_set(b);
    return NMT_OK;
}

int backend_select(const char *name, nmt_err *err)
{
    if (!name || !*name) return nmt_fail(err, NMT_ERR_ARG, "no device named (cpu or devsim)");
    for (int i = 0; i < NKNOWN; i++)
        if (!strcmp(name, known[i]->name)) {
            backend_set(known[i]);
            return NMT_OK;
        }
    if (!strncmp(name, "cuda", 4) && (name[4] == 0 || name[4] == ':')) return select_cuda(name, err);
    return nmt_fail(err, NMT_ERR_ARG, "unknown device '%s' (this build has: cpu, devsim%s)", name,
                    cuda_backend_open ? ", cuda[:N]" : "");
}

/* NMT_DEVICE, read once when the library is loaded, so that every program and test built on it
 * runs on the device it names; a bad name is kept and reported by backend_env_check (the
 * library's entry points that make models), since nothing can be reported from here. */
static nmt_err env_err;

__attribute__((constructor)) static void backend_from_env(void)
{
    const char *d = getenv("NMT_DEVICE");
    if (d && *d) backend_select(d, &env_err);
}

int backend_env_check(nmt_err *err)
{
    return env_err.code ? nmt_fail(err, env_err.code, "NMT_DEVICE: %s", env_err.msg) : NMT_OK;
}

/* models whose parameters live on the current device: while there are any, it stays */
static _Atomic int live_models;

void backend_models(int delta) { live_models += delta; }

int nmt_set_device(const char *name, nmt_err *err)
{
    int n = live_models;
    if (name && n > 0 && strcmp(name, backend_current->name))
        return nmt_fail(err, NMT_ERR_ARG, "nmt_set_device('%s'): %d model%s live on '%s', whose memory another device "
                        "cannot read: free %s first", name, n, n == 1 ? " is" : "s are", backend_current->name,
                        n == 1 ? "it" : "them");
    return backend_select(name, err);
}

const char *nmt_device(void) { return backend_current->name; }
