/* libfuzzer_main.c: libFuzzer's entry point for one harness, chosen at compile time with
 * -DFUZZ_TARGET=fuzz_<name> (make fuzz builds one program per harness). */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FUZZ_TARGET(data, size);
    return 0;
}
