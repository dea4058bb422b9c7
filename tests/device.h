/* device.h: for the kernel tests that run on the device NMT_DEVICE names: a GPU this machine or
 * build lacks is a SKIP that says why (the test then reports nothing run), any other bad name a
 * failure. Include after test.h. */
#ifndef NMT_TEST_DEVICE_H
#define NMT_TEST_DEVICE_H

#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "base/err.h"

/* 1 when the device is missing (the caller returns test_done at once), else 0 */
static inline int test_device_missing(const char *test)
{
    nmt_err e;
    if (!backend_env_check(&e)) return 0;
    printf("%s: SKIP: %s\n", test, e.msg);
    const char *want = getenv("NMT_DEVICE");
    if (!want || strncmp(want, "cuda", 4)) CHECKF(0, "%s", e.msg);
    return 1;
}

#endif
