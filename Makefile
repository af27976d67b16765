# profsum — SQLite extension for JAX/XLA profiler traces.
#
#   make            build profsum.so (the loadable extension)
#   make test       build, then run the whole test suite (prints "N passed, N failed")
#   make asan       the test suite under AddressSanitizer + UBSan
#   make tsan       the C driver tests under ThreadSanitizer (data races are errors)
#   make valgrind   the C driver tests under valgrind (leaks are errors)
#   make fuzz       build the libFuzzer target and run it (FUZZ_SECONDS, default 600)
#   make corpus     check every JSON trace of ../shared/corpus against expected_counts.json
#   make bench      benchmark against gzip -dc (see bench/README.md)
#   make bench-sha256  SHA-256 throughput, SHA extensions and portable code
#   make install    install profsum.so to $(PREFIX)/lib and the profsum CLI to $(PREFIX)/bin
#   make clean
#
# Options: NETWORK=0 builds without libcurl (defines PROFSUM_OMIT_NETWORK).

.DEFAULT_GOAL := all
PREFIX  ?= /usr/local
NETWORK ?= 1
CC      ?= cc
PYTHON  ?= /usr/bin/python3
VERSION := $(shell cat VERSION)
# The build's stamp (profsum_debug(), bench/results.md): the commit, with
# "-dirty" when the sources differ from it (changed or untracked files under
# ext, sql, views; Makefile, VERSION), "unknown" outside a git checkout of
# this project (a tarball, or a copy inside another repository).  It is one
# of the build flags below, so a build after a commit carries that commit.
COMMIT  := $(shell if [ -z "$$(git rev-parse --show-prefix 2>/dev/null)" ] && git rev-parse --is-inside-work-tree >/dev/null 2>&1; \
             then c=$$(git rev-parse --short HEAD); \
               if [ -n "$$(git status --porcelain -- ext sql views Makefile VERSION 2>/dev/null)" ]; then c="$$c-dirty"; fi; \
             else c=unknown; fi; echo "$$c")

PKGS := sqlite3 zlib
# Inflater: ISA-L's igzip when libisal is installed (Debian libisal-dev:
# about 3.5x faster than zlib here, see docs/performance.md), else zlib.
# INFLATE=zlib forces zlib.
INFLATE ?= $(shell pkg-config --exists libisal && echo isal || echo zlib)
ifeq ($(INFLATE),isal)
PKGS += libisal
INFDEF := -DPROFSUM_USE_ISAL
else
INFDEF :=
endif
# libcurl: its headers (pkg-config --cflags libcurl) but no link: the
# extension opens libcurl.so.4 at the first network call (ext/curl_lazy.h;
# `sqlite3 :memory: -cmd '.load profsum.so' 'SELECT 1'` takes ~2.5 ms, ~10.5 ms
# with libcurl's ~30 libraries mapped; docs/wandb.md, "libcurl setup").
ifeq ($(NETWORK),1)
CURL_CFLAGS := $(shell pkg-config --cflags libcurl)
NETDEF := $(CURL_CFLAGS)
NETLIBS := -ldl -lpthread
else
NETDEF := -DPROFSUM_OMIT_NETWORK
NETLIBS :=
endif

PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS))
# The loadable extension must not link libsqlite3 (the host provides it).
PKG_LIBS   := $(shell pkg-config --libs $(filter-out sqlite3,$(PKGS))) $(NETLIBS) -lm

WARN    := -std=c11 -Wall -Wextra -Werror
OPT     ?= -O2
CFLAGS_ALL = $(WARN) $(OPT) -g -fPIC -Ibuild/gen $(PKG_CFLAGS) $(NETDEF) $(INFDEF) -D_GNU_SOURCE \
             -DPROFSUM_VERSION='"$(VERSION)"' -DPROFSUM_COMMIT='"$(COMMIT)"' \
             -DPROFSUM_BUILD_FLAGS='"$(OPT) NETWORK=$(NETWORK) INFLATE=$(INFLATE)"'
# Only the entry point is exported (ext/profsum.c): SQLite loads extensions
# with RTLD_GLOBAL, so exported helpers (jParse, jFree, ...) could bind to,
# or be bound by, another library's functions of the same name; and calls
# inside the extension skip the PLT.
LDFLAGS_SO := -shared -fvisibility=hidden -Wl,-z,now -Wl,-z,relro -Wl,-z,defs

SRCS := $(sort $(wildcard ext/*.c))
HDRS := $(wildcard ext/*.h) build/gen/schema_sql.h build/gen/flags

# The build options in a file that changes only when they change, so that
# `make NETWORK=0` or `make INFLATE=zlib` after a default build rebuilds
# (and a build after a commit, for the stamp).
BUILD_FLAGS := $(CC) $(OPT) NETWORK=$(NETWORK) INFLATE=$(INFLATE) COMMIT=$(COMMIT)
build/gen/flags: FORCE
	@mkdir -p build/gen
	@printf '%s\n' '$(BUILD_FLAGS)' | cmp -s - $@ 2>/dev/null || printf '%s\n' '$(BUILD_FLAGS)' > $@
.PHONY: FORCE
FORCE:
VIEWS := $(shell cat views/MANIFEST 2>/dev/null)

# sql/schema.sql and the views (in views/MANIFEST order) compiled into the
# extension as one C string: profsum_import() creates them on first use.
build/gen/schema_sql.h: sql/schema.sql views/MANIFEST $(VIEWS) Makefile
	@mkdir -p build/gen
	{ echo '#define PROFSUM_SCHEMA_SQL \\'; \
	  for f in sql/schema.sql $(VIEWS); do \
	    sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n" \\/' $$f; \
	  done; echo '""'; \
	  echo "#define PROFSUM_SCHEMA_ID \"$$(cat sql/schema.sql $(VIEWS) | cksum | tr ' ' '-')\""; } > $@

all: profsum.so profsum

# Install missing Debian packages (see .ci/deps.sh); quick when all present.
deps:
	@bash .ci/deps.sh

profsum.so: $(SRCS) $(HDRS) VERSION Makefile
	$(CC) $(CFLAGS_ALL) $(LDFLAGS_SO) -o $@ $(SRCS) $(PKG_LIBS)

# C driver: the extension linked statically into a tiny SQL runner (used by
# the asan/valgrind targets and the unit tests of the reader).
build/sqlrun: tests/sqlrun.c $(SRCS) $(HDRS) Makefile
	@mkdir -p build
	$(CC) $(CFLAGS_ALL) -DSQLITE_CORE -o $@ tests/sqlrun.c $(SRCS) \
	  $(shell pkg-config --libs $(PKGS)) $(NETLIBS) -lpthread -lm

# Unit tests of the JSON tree's arenas (tests/jsontree_test.c), with
# AddressSanitizer and UBSan; run by tests/test_jsontree_arena.py.
build/jsontree_test: tests/jsontree_test.c ext/jsontree.c ext/jsontree.h ext/profsum_int.h Makefile
	@mkdir -p build
	$(CC) $(CFLAGS_ALL) -O1 -fsanitize=address,undefined -fno-omit-frame-pointer \
	  -fno-sanitize-recover=undefined -DSQLITE_CORE -Iext -o $@ tests/jsontree_test.c ext/jsontree.c \
	  $(shell pkg-config --libs sqlite3) -lm

# The command line (docs/cli.md): ext/cli/profsum_cli.c with the extension
# compiled in (SQLITE_CORE; registered by sqlite3_auto_extension), linked
# against the system libsqlite3.  Not part of profsum.so (SRCS is ext/*.c).
profsum: ext/cli/profsum_cli.c $(SRCS) $(HDRS) VERSION Makefile
	$(CC) $(CFLAGS_ALL) -DSQLITE_CORE -o $@ ext/cli/profsum_cli.c $(SRCS) \
	  $(shell pkg-config --libs $(PKGS)) $(NETLIBS) -lpthread -lm

# The main job on a generated example (see examples/demo.sh).
demo: deps
	$(MAKE) profsum.so
	bash examples/demo.sh

test: deps
	$(MAKE) profsum.so build/sqlrun profsum build/nonet/profsum.so build/phases/profsum.so build/jsontree_test \
	  build/chunk/profsum.so
	$(PYTHON) tests/run.py

# The NETWORK=0 variant, for the test that its W&B functions say so.
build/nonet/profsum.so: $(SRCS) $(HDRS) Makefile
	@mkdir -p build/nonet
	$(MAKE) --no-print-directory NETWORK=0 OUT=$@ build-out

# The track pass with blocks of 8 records, stacks and sorted runs of 8
# elements (ext/track.c, profsum_reader.h): tests/test_track_blocks.py
# checks that it gives what the default build gives, block edges included.
build/chunk/profsum.so: $(SRCS) $(HDRS) Makefile
	@mkdir -p build/chunk
	$(MAKE) --no-print-directory EXTRA_CFLAGS="-DPROFSUM_TRK_BLOCK_LOG=3 -DPROFSUM_TRK_RUN_LOG=3" OUT=$@ build-out

# The suite again against a zlib-only build (the fallback inflater).
build/zlib/profsum.so: $(SRCS) $(HDRS) Makefile
	@mkdir -p build/zlib
	$(MAKE) --no-print-directory INFLATE=zlib OUT=$@ build-out
build-out:
	$(CC) $(CFLAGS_ALL) $(EXTRA_CFLAGS) $(LDFLAGS_SO) -o $(OUT) $(SRCS) $(PKG_LIBS)

# For profiling: each import writes its phases' milliseconds to stderr
# (ext/import.c, PROFSUM_PHASE_TIMES; bench/phases.py sums them up).
build/phases/profsum.so: $(SRCS) $(HDRS) Makefile
	@mkdir -p build/phases
	$(MAKE) --no-print-directory EXTRA_CFLAGS=-DPROFSUM_PHASE_TIMES OUT=$@ build-out
test-zlib: build/zlib/profsum.so
	PROFSUM_SO=$(CURDIR)/build/zlib/profsum.so $(PYTHON) tests/run.py

# ---- sanitizers -----------------------------------------------------------
# -DPROFSUM_SORT_HEAP_ONLY: the ASan builds sort out-of-order tracks with the
# heapsort fallback of the event sort (ordinary inputs never reach it), so the
# suite checks both paths: quicksort in `make test`, heapsort in `make asan`.
ASAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined \
  -DPROFSUM_SORT_HEAP_ONLY
build/asan/profsum.so: $(SRCS) $(HDRS) Makefile
	@mkdir -p build/asan
	$(CC) $(CFLAGS_ALL) -O1 $(ASAN_FLAGS) $(LDFLAGS_SO) -o $@ $(SRCS) $(PKG_LIBS)
build/asan/sqlrun: tests/sqlrun.c $(SRCS) $(HDRS) Makefile
	@mkdir -p build/asan
	$(CC) $(CFLAGS_ALL) -O1 $(ASAN_FLAGS) -DSQLITE_CORE -o $@ tests/sqlrun.c $(SRCS) \
	  $(shell pkg-config --libs $(PKGS)) $(NETLIBS) -lpthread -lm

# Python cannot be rebuilt with ASan, so the runtime is preloaded; leak
# checking is off for the Python run (CPython's own allocations) and on for
# the C driver run, which exercises the same reader paths.
# Out of memory at every allocation of the reading functions (tests/oom_test.c).
build/asan/oom_test: tests/oom_test.c $(SRCS) $(HDRS) Makefile
	@mkdir -p build/asan
	$(CC) $(CFLAGS_ALL) -O1 $(ASAN_FLAGS) -DSQLITE_CORE -o $@ tests/oom_test.c $(SRCS) \
	  $(shell pkg-config --libs $(PKGS)) $(NETLIBS) -lpthread -lm
asan: build/asan/profsum.so build/asan/sqlrun build/sqlrun build/asan/oom_test
	PROFSUM_SQLRUN=build/asan/sqlrun ASAN_OPTIONS=detect_leaks=1 $(PYTHON) tests/run_driver.py
	$(PYTHON) tests/oom_check.py build/asan/oom_test
	PROFSUM_SO=$(CURDIR)/build/asan/profsum.so PROFSUM_SQLRUN=build/asan/sqlrun \
	  LD_PRELOAD="$$($(CC) -print-file-name=libasan.so) $$($(CC) -print-file-name=libubsan.so)" \
	  ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	  $(PYTHON) tests/run.py

# ThreadSanitizer: the C driver's fixtures again, threads forced on (the
# inflate producer for gzip files of 128 KiB and more; the parse thread of a
# first import, which the driver's import checks take), every data race an
# error.  Not in `make asan` (TSan and ASan cannot share a process).
build/tsan/sqlrun: tests/sqlrun.c $(SRCS) $(HDRS) Makefile
	@mkdir -p build/tsan
	$(CC) $(CFLAGS_ALL) -O1 -fsanitize=thread -fno-omit-frame-pointer -DSQLITE_CORE -o $@ tests/sqlrun.c $(SRCS) \
	  $(shell pkg-config --libs $(PKGS)) $(NETLIBS) -lpthread -lm
tsan: build/tsan/sqlrun
	PROFSUM_SQLRUN=build/tsan/sqlrun TSAN_OPTIONS=halt_on_error=1:exitcode=66 $(PYTHON) tests/run_driver.py

valgrind: build/sqlrun
	PROFSUM_SQLRUN="valgrind -q --error-exitcode=9 --leak-check=full --errors-for-leak-kinds=definite,indirect build/sqlrun" \
	  $(PYTHON) tests/run_driver.py

# ---- fuzzing --------------------------------------------------------------
FUZZ_SECONDS ?= 600
build/fuzz_reader: tests/fuzz_reader.c $(SRCS) $(HDRS) Makefile
	@mkdir -p build
	clang -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -Ibuild/gen $(PKG_CFLAGS) $(NETDEF) $(INFDEF) -D_GNU_SOURCE \
	  -DSQLITE_CORE -DPROFSUM_WINDOW_INIT=64 -o $@ tests/fuzz_reader.c $(SRCS) $(shell pkg-config --libs $(PKGS)) $(NETLIBS) -lpthread -lm
fuzz: build/fuzz_reader
	@mkdir -p build/fuzz_corpus
	build/fuzz_reader -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -timeout=10 -artifact_prefix=build/ \
	  -print_final_stats=1 build/fuzz_corpus tests/fuzz_corpus

# ---- corpus and benchmark -------------------------------------------------
corpus: profsum.so
	$(PYTHON) tests/corpus_check.py

bench: profsum.so
	bash bench/run.sh

# SHA-256 throughput alone (the hash of every imported file): SHA extensions
# when the CPU has them, then the portable code.
build/sha256_speed: bench/sha256_speed.c ext/hash.c ext/hash.h ext/profsum_int.h Makefile
	@mkdir -p build
	$(CC) $(WARN) $(OPT) -Iext -Ibuild/gen $(PKG_CFLAGS) -D_GNU_SOURCE -DSQLITE_CORE -o $@ \
	  bench/sha256_speed.c ext/hash.c $(shell pkg-config --libs sqlite3) -lpthread

bench-sha256: build/sha256_speed
	build/sha256_speed
	PROFSUM_SHA256=portable build/sha256_speed

install: profsum.so profsum
	install -d $(DESTDIR)$(PREFIX)/lib
	install -m 0644 profsum.so $(DESTDIR)$(PREFIX)/lib/profsum.so
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 profsum $(DESTDIR)$(PREFIX)/bin/profsum

clean:
	rm -rf profsum.so profsum build

.PHONY: all deps demo test test-zlib build-out asan tsan valgrind fuzz corpus bench bench-sha256 install clean
