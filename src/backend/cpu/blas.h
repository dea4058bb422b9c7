/* blas.h: kept so that files which include the product seam by this path still build; the
 * products (mm, colsum_add) are dispatched to the current backend in backend/backend.h. */
#ifndef NMT_BLAS_H
#define NMT_BLAS_H

#include "backend/backend.h"

#endif
