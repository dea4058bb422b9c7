/* context.c: compute contexts (backend.h, bk_ctx): the default one that new models copy, chosen
 * by name (nmt_set_device, NMT_DEVICE), and the host's. Nothing here is read on a kernel call:
 * the layers follow their own context. */
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

/* the context of models made from now on; set by the program before it loads any (and by
 * the constructor below), read when a model is made */
static bk_ctx default_cx = {.b = &cpu_backend};
static const bk_ctx cpu_cx = {.b = &cpu_backend};

const backend_ops *backend_cpu(void) { return &cpu_backend; }
const bk_ctx *bk_ctx_cpu(void) { return &cpu_cx; }
const bk_ctx *bk_ctx_default(void) { return &default_cx; }

void bk_ctx_set_default(const backend_ops *b, int device)
{
    default_cx = (bk_ctx){.b = b ? b : &cpu_backend, .device = b ? device : 0};
}

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
    bk_ctx_set_default(b, (int)n);
    return NMT_OK;
}

int backend_select(const char *name, nmt_err *err)
{
    if (!name || !*name) return nmt_fail(err, NMT_ERR_ARG, "no device named (cpu or devsim)");
    for (int i = 0; i < NKNOWN; i++)
        if (!strcmp(name, known[i]->name)) {
            bk_ctx_set_default(known[i], 0);
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

/* Models already made keep their own context: only the next ones move. */
int nmt_set_device(const char *name, nmt_err *err) { return backend_select(name, err); }

const char *nmt_device(void) { return default_cx.b->name; }
