/* memfile.c: what the harnesses share: fuzz inputs as files, for readers that take a path (one
 * in-memory file (memfd) per process, rewritten for every input, so that fuzzing touches no
 * disk), and one translation by a model a reader accepted. */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "nmt.h"

const char *fuzz_file(int slot, const uint8_t *data, size_t size)
{
    static int fds[4] = {-1, -1, -1, -1};
    static char paths[4][64];
    if (slot < 0 || slot > 3) return NULL;
    int fd = fds[slot];
    char *path = paths[slot];
    if (fd < 0) {
        fd = fds[slot] = memfd_create("nmt-fuzz", 0);
        if (fd < 0) return NULL;
        snprintf(path, sizeof paths[slot], "/proc/self/fd/%d", fd);
    }
    if (ftruncate(fd, 0) != 0) return NULL;
    size_t done = 0;
    while (done < size) {
        ssize_t w = pwrite(fd, data + done, size - done, (off_t)done);
        if (w <= 0) return NULL;
        done += (size_t)w;
    }
    return path;
}

void fuzz_split(const uint8_t *data, size_t size, uint8_t sep, size_t *n1, const uint8_t **p2, size_t *n2)
{
    const uint8_t *at = size ? memchr(data, sep, size) : NULL;
    *n1 = at ? (size_t)(at - data) : size;
    *p2 = at ? at + 1 : data;
    *n2 = at ? size - *n1 - 1 : size;
}

void fuzz_translate_once(const nmt_model *m)
{
    if (nmt_model_num_params(m) > 200000) return; /* keep executions fast */
    nmt_translate_opts o = nmt_translate_default_opts();
    o.beam = 2;
    o.attention = 1;
    nmt_decoder *d = NULL;
    nmt_err err;
    if (nmt_decoder_init(&d, m, &o, &err) == 0) {
        const char *src[1] = {"a b c"};
        nmt_translation t[1];
        if (nmt_translate(d, src, 1, t, &err) == 0) nmt_translation_free(t, 1);
    }
    nmt_decoder_free(d);
}
