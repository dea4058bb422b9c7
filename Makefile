# Makefile for nmt: `make` builds bin/nmt, libnmt.a and libnmt.so; `make test` runs every test
# (then the same tests under ASan+UBSan); `make asan` runs only the sanitizer pass.
# BUILD names the object directory, so that differently-flagged builds never share objects.

BUILD    ?= build
CC       ?= cc
SHARED   ?= ../shared
# The OpenMP build of OpenBLAS, by path and rpath, so that neither a generic libblas nor a
# differently-threaded OpenBLAS chosen by update-alternatives can stand in for it at run time.
BLASDIR  ?= /usr/lib/x86_64-linux-gnu/openblas-openmp
BLASINC  ?= /usr/include/x86_64-linux-gnu/openblas-openmp
# AVX2 is the floor every x86-64 machine we target has; no -ffast-math keeps NaN checks and
# bit-for-bit reproducibility (-fno-math-errno only lets sqrt become one instruction, so the
# optimizer loops vectorise; nothing reads errno after a math call). -O3, not -O2: gcc 12's -O2
# vectorises only loops whose trip count needs no scalar tail, which leaves the element-wise
# loops over rows of 256 or 10,000 scalar (SMALL training is 6% faster; the values are the same,
# since nothing is reassociated).
ARCHFLAGS ?= -mavx2 -mfma
OPT      ?= -O3 -g
CFLAGS   := $(OPT) -std=c11 -D_GNU_SOURCE -fno-math-errno -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
            -fopenmp -fPIC $(ARCHFLAGS) -Iinclude -Isrc -I$(BLASINC) -MMD -MP $(SANFLAGS)
LDFLAGS  += -fopenmp $(SANFLAGS) -L$(BLASDIR) -Wl,-rpath,$(BLASDIR)
# libnmt (the core: text, data, model, training, decoding, model files) needs OpenBLAS, OpenMP,
# oneDNN, cJSON and zlib; libnmt-eval (metrics, aligners, reports, drawing) adds cairo and pango, with
# pangoft2 and fontconfig for a font map of its own. A program that only translates links the
# first alone. The drawing code and its tests compile with their headers, as system headers.
# Expanded when used (=, not :=), so that a first build sees what `deps` has just installed.
# SentencePiece (subword units) is C++: src/text/spm.cc, the one C++ file, wraps it behind a C
# interface, and the core links it and the C++ runtime.
CORE_LIBS := -lsentencepiece_train -lsentencepiece -lstdc++ -lopenblas -ldnnl -lcjson -lz -lm
VIZ_PKGS  := pangocairo pangoft2 fontconfig
VIZ_CFLAGS = $(patsubst -I%,-isystem %,$(shell pkg-config --cflags $(VIZ_PKGS)))
EVAL_LIBS = $(shell pkg-config --libs $(VIZ_PKGS))
$(BUILD)/src/viz/%.o $(BUILD)/f64/src/viz/%.o $(BUILD)/tests/test_plot.o $(BUILD)/tests/test_report.o: \
    CFLAGS += $(VIZ_CFLAGS)
# libnmt-serve (the HTTP server of `nmt serve`) adds libmicrohttpd and POSIX threads; only
# the server's own sources see its header.
SERVE_PKGS := libmicrohttpd
SERVE_CFLAGS = $(patsubst -I%,-isystem %,$(shell pkg-config --cflags $(SERVE_PKGS)))
SERVE_LIBS = $(shell pkg-config --libs $(SERVE_PKGS)) -lpthread
$(BUILD)/src/serve/%.o: CFLAGS += $(SERVE_CFLAGS)
# oneDNN (bf16 and int8 matrix products, run-time dispatch on the CPU's flags) and libxsmm (JIT
# kernels for small products) were measured by the GEMM benchmark (bench/bench_gemm.c, `make
# bench-gemm`; docs/results/speed.md, "Products by library"). oneDNN's int8 products pay 2-4x on
# the decoder's, so the core links it (CORE_LIBS, src/backend/cpu/gemm_dnnl.c); libxsmm only the
# benchmark (a static library; its JIT needs -ldl and -lrt).
DNNL_LIBS := -ldnnl
XSMM_LIBS := -lxsmm -lpthread -lrt -ldl
# The program alone reads option files (tools/opt_config.c): libyaml.
LDLIBS   += -lyaml $(SERVE_LIBS) $(EVAL_LIBS) $(CORE_LIBS)
# Open MPI, for `mpirun -np N nmt train` (docs/SCALING.md): the program alone links it, through
# one object (src/mpi/comm_mpi.c, which fills libnmt's communication table); the libraries have
# no MPI in them. Without Open MPI the object says so when started by mpirun. Both variables are
# expanded in recipes, after `deps` has installed the packages.
MPI_PKG   := ompi-c
MPI_FOUND = $(shell pkg-config --exists $(MPI_PKG) && echo yes)
MPI_CFLAGS = $(if $(MPI_FOUND),$(patsubst -I%,-isystem %,$(shell pkg-config --cflags $(MPI_PKG))) -DNMT_MPI)
MPI_LIBS  = $(if $(MPI_FOUND),$(shell pkg-config --libs $(MPI_PKG)))
MPI_OBJ   := $(BUILD)/src/mpi/comm_mpi.o

# The CUDA backend (src/backend/cuda/, docs/CUDA.md) is CUDA C++ in a library of its own,
# BUILD/libnmt-cuda.a, which bin/nmt, the test programs and libnmt.so link when it is built: by
# default wherever nvcc is found (PATH, or CUDA_HOME/bin) and the build is not a sanitizer's;
# `make CUDA=0` leaves it out (the core never needs nvcc), `make CUDA=1` insists. It compiles
# for sm_90 (H100/H200) and carries sm_90 PTX for newer GPUs. The CUDA runtime is linked
# statically; cuBLAS is opened only when --device cuda asks for it (src/backend/cuda/cuda.cu).
CUDA_HOME ?= /usr/local/cuda
ifeq ($(origin NVCC),undefined)
NVCC := $(shell command -v nvcc 2>/dev/null || ls $(CUDA_HOME)/bin/nvcc 2>/dev/null)
endif
CUDA ?= $(if $(NVCC),$(if $(SANFLAGS),0,1),0)
CUDA_ARCH ?= -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90
# --fmad=false: no a*b+c contracted, so that the element-wise kernels round as the CPU's do
NVCCFLAGS := -std=c++20 -O3 -g $(CUDA_ARCH) --extended-lambda --fmad=false -Werror all-warnings \
             -Xcompiler -Wall,-Wextra,-Werror,-fPIC -Iinclude -Isrc -MMD -MP
CUDA_SRC := $(sort $(wildcard src/backend/cuda/*.cu))
CUDA_OBJ := $(CUDA_SRC:%.cu=$(BUILD)/%.o)
ifeq ($(CUDA),1)
ifeq ($(NVCC),)
$(error CUDA=1, but no nvcc on PATH or in $(CUDA_HOME)/bin (set NVCC or CUDA_HOME))
endif
CUDA_LIB  := $(BUILD)/libnmt-cuda.a
# -u: context.c refers to the backend's entry weakly, which alone would not take it from the archive;
# CUDA_PRE goes before the core's archive, whose functions (backend_cpu) the CUDA objects call, so
# that a program using no backend of its own (test_aer) still links
CUDA_PRE  := -Wl,-u,cuda_backend_open $(CUDA_LIB)
CUDA_LINK := -L$(CUDA_HOME)/lib64 -lcudart_static -ldl -lrt -lpthread
endif

CORE_DIRS := base backend backend/cpu backend/devsim text data nn train decode io
EVAL_DIRS := eval viz
SERVE_DIRS := serve
LIB_SRC  := $(sort $(foreach d,$(CORE_DIRS),$(wildcard src/$(d)/*.c)))
LIB_CXX  := src/text/spm.cc
EVAL_SRC := $(sort $(foreach d,$(EVAL_DIRS),$(wildcard src/$(d)/*.c)))
SERVE_SRC := $(sort $(foreach d,$(SERVE_DIRS),$(wildcard src/$(d)/*.c)))
# The page of `nmt serve`, compiled into the library as byte arrays (scripts/embed_web.py).
WEB_SRC  := $(sort $(wildcard web/*.html web/*.css web/*.js))
WEB_C    := $(BUILD)/gen/web_assets.c
CMD_SRC  := $(sort $(wildcard tools/*.c))
TEST_SRC := $(sort $(wildcard tests/test_*.c))
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o) $(LIB_CXX:%.cc=$(BUILD)/%.o)
EVAL_OBJ := $(EVAL_SRC:%.c=$(BUILD)/%.o)
SERVE_OBJ := $(SERVE_SRC:%.c=$(BUILD)/%.o) $(WEB_C:.c=.o)
LIBS_A   := $(BUILD)/libnmt-serve.a $(BUILD)/libnmt-eval.a $(BUILD)/libnmt.a
# The fuzz harnesses (fuzz/): one libFuzzer program each under `make fuzz`; the committed inputs
# are replayed through the same functions by tests/test_fuzz_replay.c in every `make test`.
FUZZ_NAMES := modelfile checkpoint corpus tokenize detokenize alignio bleu request http api npz marian
FUZZ_OBJ := $(patsubst %.c,$(BUILD)/%.o,fuzz/memfile.c $(FUZZ_NAMES:%=fuzz/fuzz_%.c))
CMD_OBJ  := $(CMD_SRC:%.c=$(BUILD)/%.o)
TEST_BIN := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
# The float64 build of the library (with fault-injection switches) for the finite-difference
# gradient checks: test programs named test_*_f64.c link against it.
F64_OBJ  := $(LIB_SRC:%.c=$(BUILD)/f64/%.o) $(EVAL_SRC:%.c=$(BUILD)/f64/%.o) $(LIB_CXX:%.cc=$(BUILD)/%.o)
F64FLAGS := -DNMT_REAL_DOUBLE -DNMT_FAULTS

# bin/nmt is the installed-by-hand program; sanitizer builds keep theirs inside BUILD.
ifeq ($(BUILD),build)
NMT_BIN  := bin/nmt
else
NMT_BIN  := $(BUILD)/bin/nmt
endif

.PHONY: all deps deps-test test asan check-tests clean demo bench bench-ab bench-gemm bench-serve fuzz install install-python python
.SECONDARY:
EXAMPLES := $(BUILD)/examples/translate

# `make` only builds: the packages come from `make deps` (or `make test` and
# `make demo`, which run it first).
all: $(NMT_BIN) $(LIBS_A) $(BUILD)/libnmt.so $(BUILD)/libnmt-eval.so $(BUILD)/libnmt-serve.so $(EXAMPLES)
	@cp -f $(BUILD)/libnmt.a libnmt.a 2>/dev/null || true

deps:
	@sh scripts/install-deps.sh

# The packages only the tests use (a browser); the tests that need one skip when it is missing.
deps-test:
	@sh scripts/install-deps.sh --test

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

# The C++ file: the C flags that apply to C++ (no -std=c11, no -Wstrict-prototypes); the
# SentencePiece headers are system headers, so their own warnings stay theirs.
CXX      ?= g++
CXXFLAGS := $(OPT) -std=c++17 -D_GNU_SOURCE -Wall -Wextra -Werror -Wshadow -fPIC $(ARCHFLAGS) -Iinclude -Isrc -MMD -MP $(SANFLAGS)
$(BUILD)/%.o: %.cc
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -c $< -o $@

$(BUILD)/%.o: %.cu
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -c $< -o $@

$(BUILD)/libnmt-cuda.a: $(CUDA_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(MPI_OBJ): src/mpi/comm_mpi.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(MPI_CFLAGS) -c $< -o $@

$(BUILD)/f64/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(F64FLAGS) -c $< -o $@

$(BUILD)/libnmt_f64.a: $(F64_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/libnmt.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/libnmt-eval.a: $(EVAL_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/libnmt-serve.a: $(SERVE_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(WEB_C): $(WEB_SRC) scripts/embed_web.py
	@mkdir -p $(dir $@)
	python3 scripts/embed_web.py $@ $(WEB_SRC)

$(WEB_C:.c=.o): $(WEB_C)
	$(CC) $(CFLAGS) -c $< -o $@

# --no-undefined: the core must not reach into the evaluation library (nor the reverse, but
# through libnmt.so). Each library names itself by the part of its version that promises
# compatibility (SONAME libnmt.so.1 from 1.x; before 1.0, where any release may break it,
# libnmt.so.0.2 for 0.2.x), so that a program linked today refuses an incompatible libnmt rather
# than misbehaving; the link in BUILD lets the other two find libnmt.so.SOVERSION beside them.
NMT_VERSION := $(shell sed -n 's/.*NMT_VERSION_STRING "\(.*\)".*/\1/p' tools/cmd.h)
NMT_VPARTS := $(subst ., ,$(NMT_VERSION))
SOMAJOR := $(if $(filter 0,$(word 1,$(NMT_VPARTS))),0.$(word 2,$(NMT_VPARTS)),$(word 1,$(NMT_VPARTS)))
$(BUILD)/libnmt.so: $(LIB_OBJ) $(CUDA_LIB)
	$(CC) -shared -Wl,--no-undefined -Wl,-soname,libnmt.so.$(SOMAJOR) -o $@ $(LIB_OBJ) $(CUDA_PRE) $(CUDA_LINK) $(LDFLAGS) \
	    $(CORE_LIBS)
	ln -sf libnmt.so $@.$(SOMAJOR)

$(BUILD)/libnmt-eval.so: $(EVAL_OBJ) $(BUILD)/libnmt.so
	$(CC) -shared -Wl,--no-undefined -Wl,-soname,libnmt-eval.so.$(SOMAJOR) -o $@ $(EVAL_OBJ) -L$(BUILD) -lnmt \
	    -Wl,-rpath,'$$ORIGIN' $(LDFLAGS) $(EVAL_LIBS) $(CORE_LIBS)
	ln -sf libnmt-eval.so $@.$(SOMAJOR)

$(BUILD)/libnmt-serve.so: $(SERVE_OBJ) $(BUILD)/libnmt.so
	$(CC) -shared -Wl,--no-undefined -Wl,-soname,libnmt-serve.so.$(SOMAJOR) -o $@ $(SERVE_OBJ) -L$(BUILD) -lnmt \
	    -Wl,-rpath,'$$ORIGIN' $(LDFLAGS) $(SERVE_LIBS) $(CORE_LIBS)

$(NMT_BIN): $(CMD_OBJ) $(MPI_OBJ) $(LIBS_A) $(CUDA_LIB)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $(CMD_OBJ) $(MPI_OBJ) $(CUDA_PRE) $(LIBS_A) $(CUDA_LINK) $(LDFLAGS) $(LDLIBS) $(MPI_LIBS)

$(BUILD)/tests/%: $(BUILD)/tests/%.o $(LIBS_A) $(CUDA_LIB)
	$(CC) -o $@ $< $(CUDA_PRE) $(LIBS_A) $(CUDA_LINK) $(LDFLAGS) $(LDLIBS)

$(BUILD)/tests/test_fuzz_replay: $(BUILD)/tests/test_fuzz_replay.o $(FUZZ_OBJ) $(LIBS_A)
	$(CC) -o $@ $< $(FUZZ_OBJ) $(LIBS_A) $(LDFLAGS) $(LDLIBS)

$(BUILD)/tests/%_f64.o: tests/%_f64.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(F64FLAGS) -c $< -o $@

$(BUILD)/tests/%_f64: $(BUILD)/tests/%_f64.o $(BUILD)/libnmt_f64.a
	$(CC) -o $@ $< $(BUILD)/libnmt_f64.a $(LDFLAGS) $(LDLIBS)

# The example sees only the public header and the core library, as a user's program would.
$(BUILD)/examples/%: examples/%.c $(BUILD)/libnmt.a include/nmt.h
	@mkdir -p $(dir $@)
	$(CC) $(OPT) -std=c11 -Wall -Wextra -Werror -Iinclude $(SANFLAGS) -o $@ $< $(BUILD)/libnmt.a $(LDFLAGS) $(CORE_LIBS)

# make install PREFIX=DIR (default /usr/local; DESTDIR for staged installs): the program, the three
# libraries (static and shared: libnmt.so -> libnmt.so.0.2 -> libnmt.so.VERSION, as ldconfig
# expects), nmt.h, and a pkg-config file per library, so that a C program finds them the usual way:
#   cc app.c $(pkg-config --cflags nmt) $(pkg-config --libs nmt)           (shared libnmt)
#   cc app.c $(pkg-config --cflags nmt) $(pkg-config --libs --static nmt)  (and its dependencies)
#   cc app.c $(pkg-config --cflags --libs nmt-eval)  (metrics, aligners, drawing; nmt-serve: the server)
PREFIX  ?= /usr/local
LIBDIR  ?= $(PREFIX)/lib
PC_SED = -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@VERSION@|$(NMT_VERSION)|' \
         -e 's|@LIBS_PRIVATE@|-L$(BLASDIR) -Wl,-rpath,$(BLASDIR) -fopenmp $(CORE_LIBS)|'
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(PREFIX)/include
	install -m 755 $(NMT_BIN) $(DESTDIR)$(PREFIX)/bin/nmt
	install -m 644 $(LIBS_A) $(DESTDIR)$(LIBDIR)/
	for l in libnmt libnmt-eval libnmt-serve; do \
	    install -m 755 $(BUILD)/$$l.so $(DESTDIR)$(LIBDIR)/$$l.so.$(NMT_VERSION) && \
	    ln -sf $$l.so.$(NMT_VERSION) $(DESTDIR)$(LIBDIR)/$$l.so.$(SOMAJOR) && \
	    ln -sf $$l.so.$(SOMAJOR) $(DESTDIR)$(LIBDIR)/$$l.so || exit 1; \
	done
	install -m 644 include/nmt.h $(DESTDIR)$(PREFIX)/include/nmt.h
	for p in nmt nmt-eval nmt-serve; do sed $(PC_SED) $$p.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/$$p.pc || exit 1; done
	@$(MAKE) --no-print-directory install-python

# The Python package (python/, docs/PYTHON.md) for PYTHON (Debian's python3 by default: its numpy and
# setuptools), against the installed libraries: into PYLIBDIR, which that python reads for /usr/local.
# Skipped, with the reason, where PYTHON has no development headers (python3-dev).
PYTHON  ?= /usr/bin/python3
PYVER    = $(shell $(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])')
PYLIBDIR ?= $(PREFIX)/lib/python$(PYVER)/dist-packages
install-python:
	@if [ -f "$$($(PYTHON) -c 'import sysconfig; print(sysconfig.get_paths()["include"])')/Python.h" ]; then \
	    rm -rf python/build python/nmt.egg-info && \
	    NMT_LIBDIR=$(DESTDIR)$(LIBDIR) NMT_RPATH=$(LIBDIR) NMT_VERSION=$(NMT_VERSION) $(PYTHON) -m pip install -q \
	        --no-build-isolation --no-index --no-deps --upgrade --target $(DESTDIR)$(PYLIBDIR) ./python && \
	    rm -rf python/build python/nmt.egg-info; \
	else echo "install: the Python package is not installed: $(PYTHON) has no Python.h (python3-dev)"; fi

# A virtual environment in BUILD/venv with the package installed, linked to BUILD's libnmt.so:
#   make python && BUILD/venv/bin/python -c 'import nmt'
python: all
	@sh scripts/python_venv.sh $(PYTHON) $(BUILD)/venv $(BUILD)

check-tests: $(NMT_BIN) $(TEST_BIN) $(EXAMPLES)
	@NMT_SHARED=$(SHARED) NMT_BIN=$(NMT_BIN) NMT_EXAMPLES=$(BUILD)/examples sh tests/run.sh $(BUILD) $(RUNFLAGS)

# The full suite, then the same suite under AddressSanitizer + UndefinedBehaviorSanitizer;
# the last line of output sums both passes. Both builds compile JOBS files at once (default: the
# CPUs), and tests/run.sh runs as many tests at once (NMT_TEST_JOBS).
JOBS ?= $(shell nproc 2>/dev/null || echo 1)
test: deps deps-test
	@$(MAKE) --no-print-directory -j$(JOBS) all
	@rm -f build/.tally build-asan/.tally
	@$(MAKE) --no-print-directory -j$(JOBS) check-tests BUILD=build RUNFLAGS=--no-total || true
	@$(MAKE) --no-print-directory -j$(JOBS) check-tests BUILD=build-asan OPT="-O1 -g" \
	    SANFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
	    RUNFLAGS="--quick --no-total" || true
	@sh tests/total.sh build/.tally build-asan/.tally

asan: deps
	@rm -f build-asan/.tally
	@$(MAKE) --no-print-directory check-tests BUILD=build-asan OPT="-O1 -g" \
	    SANFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
	    RUNFLAGS=--quick

demo: deps
	@$(MAKE) --no-print-directory all
	@sh scripts/demo.sh

bench: all
	@sh scripts/bench.sh

# Two revisions side by side: make bench-ab A=<rev> B=<rev> (default: HEAD's parent against HEAD)
A ?= HEAD~1
B ?= HEAD
bench-ab: deps
	@sh scripts/bench_ab.sh $(A) $(B)

# Fuzzing with libFuzzer (clang, with ASan and UBSan): every harness for FUZZ_SECONDS each, from
# fuzz/corpus/<harness> (new inputs go to build-fuzz/corpus, crashes to build-fuzz/artifacts).
# Single-threaded (no OpenMP: runs are reproducible; variables only OpenMP pragmas use then look
# unused, hence no -Werror here). docs/FUZZING.md has the results.
FUZZ_CC      ?= clang-14
FUZZ_SECONDS ?= 60
FUZZ_DIR     := build-fuzz
FUZZ_CFLAGS  := -O1 -g -std=c11 -D_GNU_SOURCE -fno-math-errno -Wno-unknown-pragmas $(ARCHFLAGS) \
                -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -Iinclude -Isrc -I$(BLASINC)
# The http harness runs the whole server in its process (with libmicrohttpd, which is not
# instrumented: the findings are in the server's own code and answers).
FUZZ_LIBOBJ  := $(patsubst %.c,$(FUZZ_DIR)/%.o,$(LIB_SRC) $(wildcard src/eval/*.c) $(SERVE_SRC) $(FUZZ_DIR)/gen/web_assets.c \
                fuzz/memfile.c) $(LIB_CXX:%.cc=$(FUZZ_DIR)/%.o)
$(FUZZ_DIR)/src/serve/%.o: FUZZ_CFLAGS += $(SERVE_CFLAGS)

$(FUZZ_DIR)/gen/web_assets.c: $(WEB_SRC) scripts/embed_web.py
	@mkdir -p $(dir $@)
	python3 scripts/embed_web.py $@ $(WEB_SRC)

$(FUZZ_DIR)/%.o: %.c | deps
	@sh scripts/install-deps.sh fuzz
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

# The C++ file with clang++: no vptr check, whose run-time part only a C++ link would bring.
$(FUZZ_DIR)/%.o: %.cc | deps
	@mkdir -p $(dir $@)
	$(subst clang,clang++,$(FUZZ_CC)) -O1 -g -std=c++17 -fsanitize=address,undefined -fno-sanitize=vptr \
	    -fno-sanitize-recover=all -fno-omit-frame-pointer -fsanitize=fuzzer-no-link -Iinclude -Isrc -c $< -o $@

$(FUZZ_DIR)/fuzz_%: $(FUZZ_DIR)/fuzz/fuzz_%.o $(FUZZ_LIBOBJ) fuzz/libfuzzer_main.c
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -DFUZZ_TARGET=fuzz_$* -o $@ fuzz/libfuzzer_main.c $< $(FUZZ_LIBOBJ) \
	    -L$(BLASDIR) -Wl,-rpath,$(BLASDIR) $(LDLIBS)

fuzz: $(FUZZ_NAMES:%=$(FUZZ_DIR)/fuzz_%)
	@sh scripts/fuzz.sh $(FUZZ_DIR) $(FUZZ_SECONDS) $(FUZZ_NAMES)

# The model's matrix products on each kernel the CPU could run them with (OpenBLAS, oneDNN FP32,
# bf16 and int8, libxsmm), side by side: make bench-gemm [GEMM_THREADS=1,2] [GEMM_SET=small|paper|all].
# OpenBLAS twice: with the kernels the environment gives it, then with its AVX-512 ones forced.
GEMM_THREADS ?= 1,2
GEMM_SET     ?= all
bench-gemm: $(BUILD)/bench/bench_gemm
	@echo "$$(date -u '+%F %H:%M UTC'); $$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //') (family $$(grep -m1 'cpu family' /proc/cpuinfo | sed 's/.*: //')), $$(nproc) cores; load average $$(cut -d' ' -f1-3 /proc/loadavg)"
	@$(BUILD)/bench/bench_gemm --threads $(GEMM_THREADS) --set $(GEMM_SET)
	@OPENBLAS_CORETYPE=SkylakeX $(BUILD)/bench/bench_gemm --threads $(GEMM_THREADS) --set $(GEMM_SET) --kernels openblas-f32 | grep -v '^set'
	@echo "load average at the end $$(cut -d' ' -f1-3 /proc/loadavg)"

$(BUILD)/bench/bench_gemm: $(BUILD)/bench/bench_gemm.o $(BUILD)/libnmt.a
	$(CC) -o $@ $< $(BUILD)/libnmt.a $(LDFLAGS) $(DNNL_LIBS) $(XSMM_LIBS) $(CORE_LIBS)

# nmt serve under 1, 8 and 64 concurrent clients beside nmt translate on the same sentences
bench-serve: all
	@sh scripts/bench_serve.sh

clean:
	rm -rf build build-asan build-* bin libnmt.a

include tests/cudasim/sim.mk
-include $(LIB_OBJ:.o=.d) $(CUDA_OBJ:.o=.d) $(EVAL_OBJ:.o=.d) $(SERVE_OBJ:.o=.d) $(F64_OBJ:.o=.d) $(CMD_OBJ:.o=.d) $(TEST_BIN:=.d) $(FUZZ_OBJ:.o=.d) $(MPI_OBJ:.o=.d)
