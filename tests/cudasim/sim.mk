# sim.mk: the CUDA emulation (tests/cudasim, docs/CUDA.md), included by the Makefile. `make
# test-cuda-sim` rewrites src/backend/cuda's launches (rewrite.py), compiles the backend for the
# CPU with g++ and AddressSanitizer against the emulated runtime and cuBLAS, links the kernel
# tests and nmt with it, and runs tests/cudasim/run.sh. It needs the toolkit's headers, not a GPU.
SIM_DIR   := $(BUILD)/cudasim
SIM_SAN   := -fsanitize=address -fno-omit-frame-pointer
SIM_FLAGS := -O1 -g -ftls-model=initial-exec -D_GNU_SOURCE -Wall -Wextra -Werror -fPIC -pthread -ffp-contract=off $(SIM_SAN) \
             -Itests/cudasim/include -Itests/cudasim -isystem $(CUDA_HOME)/include -MMD -MP
SIM_LIBDIR := $(abspath $(SIM_DIR))
SIM_CU    := $(CUDA_SRC:src/backend/cuda/%.cu=$(SIM_DIR)/kern/%.o)
SIM_RT    := $(SIM_DIR)/libcudasim.so
SIM_BLAS  := $(SIM_DIR)/libcublas.so.13
SIM_LINK  = -Wl,-u,cuda_backend_open $(SIM_CU) $(LIBS_A) -L$(SIM_DIR) -lcudasim -Wl,-rpath,$(SIM_LIBDIR) \
            $(LDFLAGS) $(SIM_SAN) $(LDLIBS) -ldl -lpthread
SIM_BIN   := $(SIM_DIR)/test_backend $(SIM_DIR)/test_backend_pair $(SIM_DIR)/test_cuda_host $(SIM_DIR)/nmt

.PHONY: test-cuda-sim cuda-sim
cuda-sim: $(SIM_BIN) $(SIM_BLAS) $(SIM_DIR)/build.env $(BUILD)/tests/test_backend_pair.o

test-cuda-sim: cuda-sim
	@NMT_SHARED=$(SHARED) sh tests/cudasim/run.sh $(SIM_DIR) $(BUILD)

# the backend's sources and headers, launches rewritten; nothing else changes
$(SIM_DIR)/src/backend/cuda/%: src/backend/cuda/% tests/cudasim/rewrite.py
	@mkdir -p $(dir $@)
	python3 tests/cudasim/rewrite.py $< $@

$(SIM_DIR)/kern/%.o: $(SIM_DIR)/src/backend/cuda/%.cu $(SIM_DIR)/src/backend/cuda/cuda_int.h $(SIM_DIR)/src/backend/cuda/cuda.h tests/cudasim/sim.mk
	@mkdir -p $(dir $@)
	$(CXX) -std=c++20 -x c++ $(SIM_FLAGS) -I$(SIM_DIR)/src -Isrc -Iinclude -c $< -o $@

$(SIM_DIR)/rt/%.o: tests/cudasim/%.cc tests/cudasim/sim.mk
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 $(SIM_FLAGS) -O2 -Isrc -c $< -o $@

$(SIM_RT): $(SIM_DIR)/rt/fiber.o $(SIM_DIR)/rt/runtime.o
	$(CXX) -shared -o $@ $^ $(SIM_SAN) -lpthread

$(SIM_BLAS): $(SIM_DIR)/rt/cublas.o $(SIM_RT)
	$(CXX) -shared -Wl,-soname,libcublas.so.13 -o $@ $< -L$(SIM_DIR) -lcudasim -Wl,-rpath,'$$ORIGIN' $(SIM_SAN)

$(SIM_DIR)/test_%: $(BUILD)/tests/test_%.o $(SIM_CU) $(SIM_RT) $(LIBS_A)
	$(CXX) -o $@ $< $(SIM_LINK)

# the host side's own test: a C program of the emulation's, not of the plain suite
$(SIM_DIR)/test_cuda_host.o: tests/cudasim/test_cuda_host.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests -c $< -o $@

$(SIM_DIR)/test_cuda_host: $(SIM_DIR)/test_cuda_host.o $(SIM_CU) $(SIM_RT) $(LIBS_A)
	$(CXX) -o $@ $< $(SIM_LINK)

$(SIM_DIR)/nmt: $(CMD_OBJ) $(MPI_OBJ) $(SIM_CU) $(SIM_RT) $(LIBS_A)
	$(CXX) -o $@ $(CMD_OBJ) $(MPI_OBJ) $(SIM_LINK) $(MPI_LIBS)

-include $(SIM_DIR)/test_cuda_host.d $(SIM_CU:.o=.d) $(SIM_DIR)/rt/fiber.d $(SIM_DIR)/rt/runtime.d $(SIM_DIR)/rt/cublas.d

# what tests/cudasim/run.sh needs to build a kernel file with an injected bug: the compiler, the
# kernels' flags and what a test program links after the kernel objects
$(SIM_DIR)/build.env: tests/cudasim/sim.mk Makefile
	@mkdir -p $(dir $@)
	@printf "SIM_CXX='%s'\nSIM_KFLAGS='%s'\nSIM_TAIL='%s'\n" "$(CXX)" "-std=c++20 -x c++ $(SIM_FLAGS)" \
	    "$(LIBS_A) -L$(SIM_DIR) -lcudasim -Wl,-rpath,$(SIM_LIBDIR) $(LDFLAGS) $(SIM_SAN) $(LDLIBS) -ldl -lpthread" > $@
