/* backend.c: which backend is current. A plain pointer, set before any work and only read
 * afterwards, so that reading it on every kernel call costs one load. */
#include "backend/backend.h"
#include "backend/cpu/cpu.h"

const backend_ops *backend_current = &cpu_backend;

const backend_ops *backend_cpu(void) { return &cpu_backend; }

void backend_set(const backend_ops *b) { backend_current = b ? b : &cpu_backend; }
