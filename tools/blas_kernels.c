/* blas_kernels.c: which kernels run nmt's FP32 products, and `nmt blas-kernels`. OpenBLAS picks
 * its kernels when it loads, and its pick is not always the fastest on the model's products
 * (Cooperlake's on Zen 4 train SMALL 15% slower than SkylakeX's; on a CPU it does not know it
 * falls back to SSE3), and oneDNN's matmul can beat all of them (NMT_GEMM=onednn). So at the first
 * run on a CPU model nmt times every candidate the CPU can run, one child process each, keeps the
 * fastest in a cache file, and restarts itself once with OPENBLAS_CORETYPE naming it, or sets
 * NMT_GEMM=onednn (OpenBLAS's own choice stays unless another is more than 3% faster). A user's
 * OPENBLAS_CORETYPE or NMT_GEMM wins; NMT_BLAS_AUTOTUNE=0 keeps OpenBLAS's own choice, corrected
 * only where it fell back below AVX2 (docs/CLI.md). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd.h"
#include "nmt.h"
#include "opt.h"

char *openblas_get_corename(void);
char *openblas_get_config(void);

#define CACHE_MAGIC "# nmt blas-kernels 1"
#define PROBE_SECONDS 0.25 /* per candidate and round: nmt_blas_speed's budget */
#define CLOSE 0.9          /* candidates timed twice: those within 10% of the fastest */
#define MARGIN 1.03        /* OpenBLAS's own choice stays unless another is more than 3% faster */
enum { MAXC = 8, NAMELEN = 32 };

/* OpenBLAS's x86-64 kernel sets worth timing, with the instructions each needs (/proc/cpuinfo's
 * names: the kernel lists only what the OS also enabled). */
static const struct {
    const char *name;
    const char *flags[6];
} known[] = {
    {"Haswell", {"avx2", "fma"}},
    {"Zen", {"avx2", "fma"}},
    {"SkylakeX", {"avx512f", "avx512vl", "avx512bw", "avx512dq", "avx512cd"}},
    {"Cooperlake", {"avx512f", "avx512vl", "avx512bw", "avx512dq", "avx512_bf16"}},
};

/* the candidate that is oneDNN's matmul rather than a set of OpenBLAS's kernels */
#define ONEDNN "oneDNN"

/* what NMT_GEMM asks for: 0 unset (nmt chooses), 1 openblas, 2 onednn, -1 anything else */
static int gemm_env(void)
{
    const char *v = getenv("NMT_GEMM");
    return !v ? 0 : !strcmp(v, "openblas") ? 1 : !strcmp(v, "onednn") ? 2 : -1;
}

typedef struct tune {
    char key[512];   /* "vendor family model; OpenBLAS version; candidates" */
    char path[4096]; /* the cache file; "" when there is no place for one */
    int n;           /* candidates; [0] is OpenBLAS's own choice */
    char name[MAXC][NAMELEN];
    double gflops[MAXC]; /* timed or read from the cache; 0 = not known */
    char best[NAMELEN];
} tune;

/* ------------------------------------------------------------------ the CPU and the cache file */

/* the value of /proc/cpuinfo's first "field : value" line into out; 0 when found */
static int cpuinfo(const char *field, char *out, size_t cap)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[8192]; /* a flags line of a recent CPU passes 1,500 bytes */
    int rc = -1;
    size_t n = strlen(field);
    while (f && rc && fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (strncmp(line, field, n) || !colon || strspn(line + n, " \t") != (size_t)(colon - line - n)) continue;
        snprintf(out, cap, "%s", colon + 1 + strspn(colon + 1, " \t"));
        out[strcspn(out, "\n")] = 0;
        rc = 0;
    }
    if (f) fclose(f);
    return rc;
}

/* 1 when every one of flags is a word of have (/proc/cpuinfo's flags) */
static int cpu_has(const char *have, const char *const *flags)
{
    for (int i = 0; i < 6 && flags[i]; i++) {
        size_t n = strlen(flags[i]);
        const char *p = have;
        while ((p = strstr(p, flags[i])) && ((p > have && p[-1] != ' ') || (p[n] && p[n] != ' '))) p += n;
        if (!p) return 0;
    }
    return 1;
}

/* the candidates, the cache key and the cache's path; 0, or -1 when the CPU cannot be named.
 * own: the kernels OpenBLAS chose by itself (this process, before any OPENBLAS_CORETYPE). */
static int tune_init(tune *t, const char *own)
{
    memset(t, 0, sizeof *t);
    char vendor[64], family[16], model[16], version[64] = "OpenBLAS ?", flags[4096];
    if (cpuinfo("vendor_id", vendor, sizeof vendor) || cpuinfo("cpu family", family, sizeof family) ||
        cpuinfo("model", model, sizeof model) || cpuinfo("flags", flags, sizeof flags))
        return -1;
    sscanf(openblas_get_config(), "%*s %54s", version + 9); /* "OpenBLAS 0.3.21 DYNAMIC_ARCH ...": 9 + 54 + 1 */
    char list[MAXC * (NAMELEN + 1)] = "";
    size_t len = 0;
    for (size_t i = 0; i <= sizeof known / sizeof known[0] && t->n < MAXC; i++) {
        const char *name = i ? known[i - 1].name : own; /* OpenBLAS's own choice first */
        if (i && (!strcmp(name, own) || !cpu_has(flags, known[i - 1].flags))) continue;
        snprintf(t->name[t->n++], NAMELEN, "%s", name);
        len += snprintf(list + len, sizeof list - len, " %.*s", NAMELEN - 1, name);
    }
#ifndef NMT_REAL_DOUBLE
    if (gemm_env() == 0 && t->n < MAXC) { /* NMT_GEMM=openblas leaves OpenBLAS's sets alone */
        snprintf(t->name[t->n++], NAMELEN, "%s", ONEDNN);
        len += snprintf(list + len, sizeof list - len, " %s", ONEDNN);
    }
#endif
    snprintf(t->key, sizeof t->key, "%s %s %s; %s;%s", vendor, family, model, version, list);
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (xdg && *xdg) snprintf(t->path, sizeof t->path, "%s/nmt/blas-kernels", xdg);
    else if (home && *home) snprintf(t->path, sizeof t->path, "%s/.cache/nmt/blas-kernels", home);
    return 0;
}

static int candidate(const tune *t, const char *name)
{
    for (int i = 0; i < t->n; i++)
        if (!strcmp(t->name[i], name)) return i;
    return -1;
}

/* One entry: KEY <TAB> BEST <TAB> NAME=GFLOPS ..., BEST and every NAME among the key's candidates.
 * 1 when it is this CPU's (t->best and t->gflops filled), 0 another's, -1 malformed. */
static int cache_entry(tune *t, char *line)
{
    char *tab1 = strchr(line, '\t'), *tab2 = tab1 ? strchr(tab1 + 1, '\t') : NULL;
    if (!tab2 || strchr(tab2 + 1, '\t')) return -1;
    *tab1 = *tab2 = 0;
    if (strcmp(line, t->key)) return *line && *line != ' ' ? 0 : -1;
    if (candidate(t, tab1 + 1) < 0) return -1;
    snprintf(t->best, NAMELEN, "%s", tab1 + 1);
    for (char *tok = strtok(tab2 + 1, " \n"); tok; tok = strtok(NULL, " \n")) {
        char *eq = strchr(tok, '='), *end;
        if (!eq) return -1;
        *eq = 0;
        double g = strtod(eq + 1, &end);
        int i = candidate(t, tok);
        if (i < 0 || *end || !(g >= 0 && g < 1e6)) return -1;
        t->gflops[i] = g;
    }
    return 1;
}

/* 1 when the cache holds this CPU's choice, 0 when it does not (or there is no file), -1 when
 * the file is not a cache (said once, with its first bad line: it is then timed and rewritten) */
static int cache_read(tune *t)
{
    /* O_NONBLOCK: a FIFO at the path would block the open, and every nmt command with it */
    int fd = t->path[0] ? open(t->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC) : -1;
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) || !S_ISREG(st.st_mode))) {
        close(fd);
        fprintf(stderr, "[W::nmt] %s: not a regular file: nmt's OpenBLAS kernel cache is not used\n", t->path);
        t->path[0] = 0; /* nor written: the run goes on without it */
        return 0;
    }
    FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
    if (!f) {
        if (fd >= 0) close(fd);
        return 0;
    }
    char line[2048];
    int found = 0, lineno = 0, bad = 0;
    while (!found && !bad && fgets(line, sizeof line, f)) {
        lineno++;
        if (lineno == 1) bad = strncmp(line, CACHE_MAGIC, strlen(CACHE_MAGIC)) != 0;
        else if ((found = cache_entry(t, line)) < 0) bad = 1;
    }
    fclose(f);
    if (!bad) return found;
    fprintf(stderr, "[W::nmt] %s:%d: not an entry of nmt's OpenBLAS kernel cache: the file is ignored, and "
                    "rewritten once the kernels are timed again\n", t->path, lineno);
    memset(t->gflops, 0, sizeof t->gflops);
    t->best[0] = 0;
    return -1;
}

/* mkdir -p of the directories above path: 0, or -1 (errno set) */
static int make_dirs(const char *path)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    for (char *slash = strchr(dir + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
        *slash = 0;
        if (mkdir(dir, 0755) && errno != EEXIST) return -1;
        *slash = '/';
    }
    return 0;
}

/* Writes the file anew with this CPU's entry (another CPU's entries are kept): a temporary file
 * renamed over it, so that a reader sees the old file or the new one. 0, or -1 after a warning. */
static int cache_write(const tune *t)
{
    char tmp[4200], line[2048];
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", t->path, (long)getpid());
    FILE *out = make_dirs(t->path) ? NULL : fopen(tmp, "w"), *old = out ? fopen(t->path, "r") : NULL;
    int ok = out && fprintf(out, "%s: CPU; OpenBLAS; candidates <TAB> the fastest <TAB> GFLOP/s of each\n", CACHE_MAGIC) > 0;
    for (int first = 1; ok && old && fgets(line, sizeof line, old); first = 0) {
        tune other = *t;
        char copy[2048];
        snprintf(copy, sizeof copy, "%s", line);
        if (!first && cache_entry(&other, copy) == 0 && strchr(line, '\n')) ok = fputs(line, out) >= 0;
    }
    ok = ok && fprintf(out, "%s\t%s\t", t->key, t->best) > 0;
    for (int i = 0; ok && i < t->n; i++)
        if (t->gflops[i] > 0) ok = fprintf(out, "%s%s=%.1f", i ? " " : "", t->name[i], t->gflops[i]) > 0;
    ok = ok && fputc('\n', out) != EOF;
    if (old) fclose(old);
    if (out && fclose(out)) ok = 0;
    if (ok && rename(tmp, t->path)) ok = 0;
    if (ok) return 0;
    fprintf(stderr, "[W::nmt] cannot write %s (%s): OpenBLAS's kernels will be timed again at the next run "
                    "(OPENBLAS_CORETYPE or NMT_BLAS_AUTOTUNE=0 skip it)\n", t->path, strerror(errno));
    if (out) unlink(tmp);
    return -1;
}

/* ------------------------------------------------------------------ timing */

/* Runs `nmt blas-kernels ARG` with OPENBLAS_CORETYPE=core (NULL: unset, OpenBLAS's own choice;
 * ONEDNN: unset and NMT_GEMM=onednn) and its standard output into buf; 0 when it exited 0. */
static int run_child(const char *core, const char *arg, char *buf, size_t cap)
{
    int fd[2];
    buf[0] = 0;
    if (pipe(fd)) return -1;
    pid_t pid = fork();
    if (pid == 0) {
        if (core && strcmp(core, ONEDNN)) setenv("OPENBLAS_CORETYPE", core, 1);
        else unsetenv("OPENBLAS_CORETYPE");
        /* the user's NMT_GEMM=onednn must not turn an OpenBLAS candidate into oneDNN */
        if (core && !strcmp(core, ONEDNN)) setenv("NMT_GEMM", "onednn", 1);
        else unsetenv("NMT_GEMM");
        int null = open("/dev/null", O_WRONLY);
        dup2(fd[1], 1);
        if (null >= 0) dup2(null, 2); /* OpenBLAS's "Core not found" */
        close(fd[0]);
        execl("/proc/self/exe", "nmt", "blas-kernels", arg, (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    ssize_t n, got = 0;
    while (pid > 0 && got < (ssize_t)cap - 1 && (n = read(fd[0], buf + got, cap - 1 - got)) > 0) got += n;
    buf[got] = 0;
    close(fd[0]);
    int status = 0;
    return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -1;
}

/* Candidate i's GFLOP/s in a child process that loaded those kernels ([0], OpenBLAS's own choice,
 * with no OPENBLAS_CORETYPE), or 0 when it did not run them (OpenBLAS did not take the name, or
 * the child failed). */
static double probe(const tune *t, int i)
{
    char buf[128], name[NAMELEN];
    double g = 0;
    if (run_child(i ? t->name[i] : NULL, "--probe", buf, sizeof buf)) return 0;
    return sscanf(buf, "%31s %lf", name, &g) == 2 && !strcmp(name, t->name[i]) && g > 0 ? g : 0;
}

/* the fastest candidate so far, -1 when none ran */
static int fastest(const tune *t)
{
    int b = -1;
    for (int i = 0; i < t->n; i++)
        if (t->gflops[i] > 0 && (b < 0 || t->gflops[i] > t->gflops[b])) b = i;
    return b;
}

/* Times every candidate, then again, in turn, those within CLOSE of the fastest (each keeps its
 * better round: other work on the machine comes and goes), and keeps the fastest in t->best (0),
 * or -1 when none ran. */
static int measure(tune *t)
{
    memset(t->gflops, 0, sizeof t->gflops);
    t->best[0] = 0;
    for (int i = 0; i < t->n; i++) t->gflops[i] = probe(t, i);
    int b = fastest(t);
    for (int i = 0; b >= 0 && i < t->n; i++) {
        double g = t->gflops[i] >= CLOSE * t->gflops[b] ? probe(t, i) : 0;
        if (g > t->gflops[i]) t->gflops[i] = g;
    }
    if ((b = fastest(t)) < 0) return -1;
    if (t->gflops[0] * MARGIN >= t->gflops[b]) b = 0; /* no restart for a gain within the noise */
    snprintf(t->best, NAMELEN, "%s", t->name[b]);
    return 0;
}

static void say_timed(const tune *t)
{
    fprintf(stderr, "[M::nmt] the FP32 products' kernels on this CPU, timed once on the model's products (GFLOP/s, 1 thread):");
    for (int i = 0; i < t->n; i++) fprintf(stderr, " %s %.1f%s", t->name[i], t->gflops[i], i ? "" : " (its own choice)");
    fprintf(stderr, "; nmt runs %s%s%s\n", t->best, t->path[0] ? ", kept in " : "", t->path);
}

/* The cache's lock within NMT_BLAS_LOCK_WAIT seconds (default 20: several timings): 0, or -1
 * after saying so. A holder that never lets go (a process stopped with Ctrl-Z while timing) must
 * not stop every other nmt command: they go on without the cache. */
static int lock_cache(int fd, const char *lock)
{
    const char *v = getenv("NMT_BLAS_LOCK_WAIT");
    char *end;
    double limit = v ? strtod(v, &end) : 20;
    if (!v || *end || !(limit >= 0 && limit <= 3600)) limit = 20;
    struct stat st;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        fprintf(stderr, "[W::nmt] %s: not a regular file: nmt's OpenBLAS kernel cache is not used\n", lock);
        return -1;
    }
    for (long tenths = 0; flock(fd, LOCK_EX | LOCK_NB); tenths++) {
        if (tenths >= limit * 10) {
            fprintf(stderr, "[W::nmt] %s is still held after %.0f s (a stopped nmt?): going on without the OpenBLAS "
                            "kernel cache\n", lock, limit);
            return -1;
        }
        if (tenths == 20) fprintf(stderr, "[M::nmt] waiting for %s: another nmt is timing OpenBLAS's kernels\n", lock);
        usleep(100000);
    }
    return 0;
}

/* Times the candidates and rewrites the cache, under a lock on the cache, so that nmt commands
 * started together time once: the others wait (a while), then read the result. */
static int retime(tune *t, int force)
{
    char lock[4200];
    snprintf(lock, sizeof lock, "%s.lock", t->path);
    int fd = t->path[0] && !make_dirs(t->path) ? open(lock, O_RDWR | O_CREAT | O_NONBLOCK | O_CLOEXEC, 0644) : -1;
    if (fd >= 0 && lock_cache(fd, lock)) {
        close(fd);
        return -1;
    }
    int rc = !force && fd >= 0 && cache_read(t) == 1 ? 0 : -2;
    if (rc == -2) /* said before the pause, which is otherwise silent */
        fprintf(stderr, "[M::nmt] timing the FP32 products' kernels on this CPU (%d candidates, a few seconds, once per CPU "
                        "model)...\n", t->n);
    if (rc == -2 && (rc = measure(t)) == 0) {
        say_timed(t);
        if (t->path[0]) cache_write(t);
    }
    if (fd >= 0) close(fd); /* and the lock with it */
    return rc;
}

/* ------------------------------------------------------------------ at start-up */

/* OpenBLAS 0.3.21 does not know CPUs newer than it (Emerald Rapids, family 6 model 207) and falls
 * back to its SSE3 "Prescott" kernels, 2.5x slower in training. The rule without timing: when the
 * CPU has AVX2 and FMA but OpenBLAS chose a core without them, the AVX-512 or AVX2 family. */
static const char *fixed_rule(const char *own)
{
    /* the same list as the library's warning (src/backend/cpu/blas.c, kernels_check) */
    static const char *const fast[] = {"Haswell", "SkylakeX", "Cooperlake", "SapphireRapids", "Zen", NULL};
    for (int i = 0; own && fast[i]; i++)
        if (!strcmp(own, fast[i])) return own;
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return own;
    return __builtin_cpu_supports("avx512f") ? "SkylakeX" : "Haswell";
}

static int autotune_on(void)
{
    const char *v = getenv("NMT_BLAS_AUTOTUNE");
    return !v || strcmp(v, "0");
}

/* The kernels this process should run: the cached or timed fastest, else the fixed rule's. */
static const char *chosen(tune *t, const char *own)
{
    if (!autotune_on() || tune_init(t, own) || t->n < 2) return fixed_rule(own);
    int found = cache_read(t);
    if (found == 1 || retime(t, found < 0) == 0) return t->best; /* a bad file was said once */
    return fixed_rule(own);
}

int blas_kernels_choose(char **argv)
{
    int g = gemm_env();
    if (g < 0) {
        fprintf(stderr, "nmt: NMT_GEMM=%s: expected openblas or onednn (or unset: nmt chooses)\n", getenv("NMT_GEMM"));
        return -1;
    }
    /* the user's choice, or this process was restarted with nmt's */
    if (getenv("OPENBLAS_CORETYPE") || g == 2) return 0;
    const char *own = openblas_get_corename();
    tune t;
    const char *want = chosen(&t, own ? own : "Unknown");
    if (!strcmp(want, ONEDNN)) { /* read at the first product: no restart needed */
        setenv("NMT_GEMM", "onednn", 1);
        setenv("NMT_BLAS_CHOSEN", ONEDNN, 1);
        return 0;
    }
    if (!own || !strcmp(want, own)) return 0;
    setenv("OPENBLAS_CORETYPE", want, 1);
    setenv("NMT_BLAS_CHOSEN", want, 1); /* tells the restarted process the setting is nmt's */
    execv("/proc/self/exe", argv); /* returns only on failure: go on with OpenBLAS's own kernels */
    unsetenv("OPENBLAS_CORETYPE");
    unsetenv("NMT_BLAS_CHOSEN");
    return 0;
}

const char *blas_kernels_user_pin(void)
{
    const char *core = getenv("OPENBLAS_CORETYPE"), *ours = getenv("NMT_BLAS_CHOSEN");
    if (!core || (ours && !strcmp(ours, core)) || !autotune_on()) return NULL; /* nmt's, or kept as asked */
    static const char *const avx512[] = {"SkylakeX", "Cooperlake", "SapphireRapids", NULL};
    for (int i = 0; avx512[i]; i++)
        if (!strcasecmp(core, avx512[i])) return NULL;
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") ? core : NULL;
}

/* ------------------------------------------------------------------ nmt blas-kernels */

static const char blas_usage[] =
    "Usage: nmt blas-kernels [--retune]\n"
    "Which kernels run nmt's FP32 matrix products on this CPU, and why. OpenBLAS picks its kernels\n"
    "when it loads; at its first run on a CPU model nmt times every kernel set the CPU can run\n"
    "(OpenBLAS's own choice, Haswell, Zen, SkylakeX, Cooperlake) and oneDNN's matmul on the model's\n"
    "matrix products, one thread, about a quarter of a second each, keeps the fastest in\n"
    "$XDG_CACHE_HOME/nmt/blas-kernels (else ~/.cache/nmt/blas-kernels), one line per CPU model and\n"
    "OpenBLAS version, and restarts with OPENBLAS_CORETYPE naming it, or sets NMT_GEMM=onednn.\n"
    "OPENBLAS_CORETYPE or NMT_GEMM (openblas, onednn) set by the user wins; NMT_BLAS_AUTOTUNE=0 keeps\n"
    "OpenBLAS's own choice (corrected only where it fell back below AVX2 on an AVX2 CPU).\n\n";

/* the line saying which kernels a plain nmt command runs, and why */
static void show_choice(tune *t, const char *own, int named)
{
    const char *env = getenv("OPENBLAS_CORETYPE");
    if (gemm_env() == 2) printf("nmt runs    %s: NMT_GEMM=onednn is set\n", ONEDNN);
    else if (env) printf("nmt runs    %s: OPENBLAS_CORETYPE is set%s\n", env,
                    blas_kernels_user_pin() ? " (AVX2 kernels on an AVX-512 CPU: unset it to let nmt choose)" : "");
    else if (!autotune_on()) printf("nmt runs    %s: NMT_BLAS_AUTOTUNE=0 (OpenBLAS's own choice, or the AVX2/AVX-512 family for its SSE3 fallback)\n", fixed_rule(own));
    else if (!named || t->n < 2) printf("nmt runs    %s: nothing to choose from\n", fixed_rule(own));
    else if (t->best[0]) printf("nmt runs    %s: the fastest in the cache\n", t->best);
    else printf("nmt runs    the fastest, timed at the next nmt command\n");
}

/* OpenBLAS's own choice: this process's kernels, or a child's when OPENBLAS_CORETYPE is set */
static int own_kernels(char *own)
{
    const char *core = openblas_get_corename();
    char buf[128];
    if (!getenv("OPENBLAS_CORETYPE")) return snprintf(own, NAMELEN, "%s", core ? core : "Unknown") < 0;
    return run_child(NULL, "--own", buf, sizeof buf) || sscanf(buf, "%31s", own) != 1;
}

static int blas_show(int retune)
{
    char own[NAMELEN];
    tune t;
    if (own_kernels(own)) { fprintf(stderr, "nmt blas-kernels: error: cannot tell OpenBLAS's own choice\n"); return CMD_ERR; }
    int named = tune_init(&t, own) == 0;
    if (!named) printf("cpu         unknown (no /proc/cpuinfo): nothing is timed\n");
    else printf("cpu         %s\ncandidates ", t.key);
    for (int i = 0; named && i < t.n; i++) printf(" %s%s", t.name[i], i ? "" : " (OpenBLAS's own choice)");
    if (named) printf("\ncache       %s\n", t.path[0] ? t.path : "none (neither XDG_CACHE_HOME nor HOME is set)");
    if (named && retune && t.n >= 2 && retime(&t, 1)) {
        fprintf(stderr, "nmt blas-kernels: error: no candidate could be timed\n");
        return CMD_ERR;
    }
    if (named && !retune) cache_read(&t);
    if (named && t.best[0]) {
        printf("timed      ");
        for (int i = 0; i < t.n; i++) t.gflops[i] > 0 ? printf(" %s %.1f", t.name[i], t.gflops[i]) : printf(" %s -", t.name[i]);
        printf(" GFLOP/s\n");
    }
    show_choice(&t, own, named);
    return CMD_OK;
}

int cmd_blas_kernels(int argc, char **argv)
{
    int retune = 0, probe_only = 0, own_only = 0;
    opt table[] = {
        OPT_FLAG("--retune", &retune, 1, "time the candidates now and rewrite this CPU's line of the cache"),
        OPT_FLAG("--probe", &probe_only, 1, "(nmt's own use) print this process's kernels and their GFLOP/s"),
        OPT_FLAG("--own", &own_only, 1, "(nmt's own use) print this process's kernels"),
        OPT_END,
    };
    opt_cmd c = {"blas-kernels", blas_usage, NULL, table, 0, NULL};
    int nargs, rc = opt_parse(&c, argc, argv, NULL, &nargs);
    if (rc != OPT_GO) return rc;
    if (gemm_env() < 0) {
        fprintf(stderr, "nmt blas-kernels: error: NMT_GEMM=%s: expected openblas or onednn (or unset: nmt chooses)\n",
                getenv("NMT_GEMM"));
        return CMD_USAGE;
    }
    const char *core = openblas_get_corename();
    if (own_only) { printf("%s\n", core ? core : "Unknown"); return CMD_OK; }
    if (gemm_env() == 2) core = ONEDNN; /* the products are oneDNN's, whatever OpenBLAS loaded */
    if (!probe_only) return blas_show(retune);
    nmt_err err;
    double g;
    if (nmt_blas_speed(PROBE_SECONDS, &g, &err)) { fprintf(stderr, "nmt blas-kernels: error: %s\n", err.msg); return CMD_ERR; }
    printf("%s %.3f\n", core ? core : "Unknown", g);
    return CMD_OK;
}
