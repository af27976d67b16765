# profsum — SQLite extension for JAX/XLA profiler traces.
#
#   make            build profsum.so (the loadable extension)
#   make test       build, then run the whole test suite (prints "N passed, N failed")
#   make asan       the test suite under AddressSanitizer + UBSan
#   make tsan       the C driver tests under ThreadSanitizer (data races are errors)
#   make valgrind   the C driver tests under valgrind (leaks are errors)
#   make fuzz       build the libFuzzer target and run it (FUZZ_SECONDS, default 600)
#   make fuzz-xplane  the same for the XSpace (.xplane.pb) decoder
#   make fuzz-import  the same for profsum_import and the v1 document
#   make corpus     check every trace of the corpus (PROFSUM_CORPUS) against its expected counts
#   make bench      benchmark against gzip -dc (see bench/README.md)
#   make bench-sha256  SHA-256 throughput, SHA extensions and portable code
#   make bench-floor   against igzip -dc and gzip -dc; make bench-history: 10,000 runs
#   make install    install profsum.so to $(PREFIX)/lib and the profsum CLI to $(PREFIX)/bin
#   make clean
#
# Options: NETWORK=0 builds without libcurl (defines PROFSUM_OMIT_NETWORK).

.DEFAULT_GOAL := all
PREFIX  ?= /usr/local
CC      ?= cc
PYTHON  ?= /usr/bin/python3
VERSION := $(shell cat VERSION)
# Every `pkg-config` query is quiet: on a machine without pkg-config or the
# -dev packages the build says once what to run (build/gen/deps-ok below)
# instead of a screen of pkg-config and compiler errors.
have = $(shell pkg-config --exists $(1) 2>/dev/null && echo yes)
pkgc = $(shell pkg-config $(1) 2>/dev/null)
# The build's stamp (profsum_debug(), bench/results.md): the commit, with
# "-dirty" when the sources differ from it (changed or untracked files under
# ext, sql, views; Makefile, VERSION), "unknown" outside a git checkout of
# this project (a tarball, or a copy inside another repository).  Only
# ext/profsum.c is compiled with it (build/gen/stamp), so a commit rebuilds
# one object per variant.
COMMIT  := $(shell if [ -z "$$(git rev-parse --show-prefix 2>/dev/null)" ] && git rev-parse --is-inside-work-tree >/dev/null 2>&1; \
             then c=$$(git rev-parse --short HEAD); \
               if [ -n "$$(git status --porcelain -- ext sql views Makefile VERSION 2>/dev/null)" ]; then c="$$c-dirty"; fi; \
             else c=unknown; fi; echo "$$c")

# Inflater: ISA-L's igzip when libisal is installed (Debian libisal-dev; see
# docs/performance.md), else zlib.  INFLATE=zlib forces zlib.
INFLATE ?= $(if $(call have,libisal),isal,zlib)
# Network (W&B functions): on when libcurl's headers are installed (Debian
# libcurl4-openssl-dev).  The extension takes only the headers and opens
# libcurl.so.4 at the first network call (ext/curl_lazy.h).  NETWORK=0 builds
# without; with NETWORK unset and no headers the build says so and does that.
ifeq ($(origin NETWORK),undefined)
NETWORK := $(if $(call have,libcurl),1,0)
NETWORK_AUTO_OFF := $(filter 0,$(NETWORK))
endif

# Flags of one configuration: $(call infdef,isal|zlib), $(call netdef,1|0).
infdef = $(if $(filter isal,$(1)),-DPROFSUM_USE_ISAL $(call pkgc,--cflags libisal))
inflibs = $(if $(filter isal,$(1)),$(call pkgc,--libs libisal)) $(call pkgc,--libs zlib)
netdef = $(if $(filter 1,$(1)),$(call pkgc,--cflags libcurl),-DPROFSUM_OMIT_NETWORK)
netlibs = $(if $(filter 1,$(1)),-ldl -lpthread)

WARN      := -std=c11 -Wall -Wextra -Werror
OPT       ?= -O2
BASE_CFLAGS = $(WARN) -g -fPIC -fvisibility=hidden -Ibuild/gen $(addprefix -I,$(LAYERS)) $(call pkgc,--cflags sqlite3 zlib) -D_GNU_SOURCE \
              -DPROFSUM_VERSION='"$(VERSION)"'
# Only the entry point is exported (ext/profsum.c): SQLite loads extensions
# with RTLD_GLOBAL, so exported helpers (jParse, jFree, ...) could bind to,
# or be bound by, another library's functions of the same name; and calls
# inside the extension skip the PLT.
LDFLAGS_SO := -shared -fvisibility=hidden -Wl,-z,now -Wl,-z,relro -Wl,-z,defs
SQLITE_LIBS = $(call pkgc,--libs sqlite3)

# The extension's sources by layer, lowest first (docs/internals.md): a file
# includes headers of its own layer and of the layers before it only
# (tests/test_layers.py checks it).
LAYERS  := ext/util ext/reader ext/summary ext/history ext/net ext/sql
SRCS    := $(sort $(foreach d,$(LAYERS),$(wildcard $(d)/*.c)))
HDRS    := $(sort $(foreach d,$(LAYERS),$(wildcard $(d)/*.h)))
CLISRCS := $(sort $(wildcard ext/cli/*.c))
VIEWS   := $(shell cat views/MANIFEST 2>/dev/null)

# ---- what a fresh machine lacks ---------------------------------------------
# Checked before the first compile: one line naming the command to run.
build/gen/deps-ok:
	@if ! command -v pkg-config >/dev/null 2>&1 || ! pkg-config --exists sqlite3 zlib 2>/dev/null \
	    || ! command -v $(firstword $(CC)) >/dev/null 2>&1; then \
	  echo "profsum: build dependencies missing (a C compiler, pkg-config, libsqlite3-dev, zlib1g-dev): run 'make deps' (installs them with apt-get), then make again" >&2; \
	  exit 1; fi
	@mkdir -p build/gen && touch $@
.PHONY: deps-note
deps-note:
	@$(if $(NETWORK_AUTO_OFF),echo "profsum: libcurl's headers not found: building without network support (wandb_* functions say so); 'make deps' installs libcurl4-openssl-dev" >&2,:)

# sql/schema.sql and the views (in views/MANIFEST order) compiled into the
# extension as one C string: profsum_import() creates them on first use.
build/gen/schema_sql.h: sql/schema.sql views/MANIFEST $(VIEWS) sql/functions.sql Makefile
	@mkdir -p build/gen
	@{ echo '#define PROFSUM_SCHEMA_SQL \\'; \
	  for f in sql/schema.sql $(VIEWS); do \
	    sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n" \\/' $$f; \
	  done; echo '""'; \
	  echo "#define PROFSUM_SCHEMA_ID \"$$(cat sql/schema.sql $(VIEWS) | cksum | tr ' ' '-')\""; \
	  echo '#define PROFSUM_FUNCTIONS_DOC \\'; \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n" \\/' sql/functions.sql; \
	  echo '""'; } > $@

.PHONY: FORCE
FORCE:
# The commit stamp in a file that changes only when the commit does.
build/gen/stamp: FORCE
	@mkdir -p build/gen
	@printf '%s\n' '$(COMMIT)' | cmp -s - $@ 2>/dev/null || printf '%s\n' '$(COMMIT)' > $@

# The fingerprint of the extension's sources (profsum_trace.profsum_build:
# the import option reuse takes only a trace of the same build), in a
# header that changes only when the sources do.
build/gen/build_id.h: FORCE
	@mkdir -p build/gen
	@id=$$(cat $(SRCS) $(HDRS) sql/schema.sql $(VIEWS) | cksum | tr ' ' '-'); \
	  printf '#define PROFSUM_BUILD_ID "%s"\n' "$$id" | cmp -s - $@ 2>/dev/null || \
	  printf '#define PROFSUM_BUILD_ID "%s"\n' "$$id" > $@

# ---- build variants -----------------------------------------------------------
# Each variant compiles ext/*.c into build/obj/<variant>/ with its own flags
# (header dependencies from -MMD); build/gen/flags-<variant> holds those flags
# and changes only when they do, so `make NETWORK=0` or `make INFLATE=zlib`
# after a default build recompiles, and nothing else does.
#   rel      the loadable extension (profsum.so)
#   core     SQLITE_CORE: linked into the CLI and the C test driver
#   nonet    NETWORK=0 loadable (the test that W&B functions say so)
#   phases   imports print their phases' milliseconds (bench/phases.py)
#   chunk    the track pass with blocks, stacks and sorted runs of 8 (the
#            block edges, checked by tests/test_track_blocks.py); the
#            XPlane reader's producer applying the insights' records of
#            each batch it hands over (tests/test_engine_side.py)
#   zlib     the zlib inflater (make test-zlib)
#   asan, asancore   AddressSanitizer + UBSan (gcc)
#   tsancore ThreadSanitizer (the C driver)
#   ubsan    clang's UBSan with float-cast-overflow (make ubsan)
# the write phase's splits (a merge level's halves, the grouping's halves,
# the sweep's pieces, the exact check's slices of a track) from 64 events
# on instead of tens of thousands, and the end-order sort's look at what it
# set aside (and its buffer's first size) every 16 events instead of 4,096,
# so that the sanitizer suites and the out-of-memory sweeps run them on
# their small fixtures
SPLIT_SMALL := -DPROFSUM_SORT_SPLIT_MIN=64 -DPROFSUM_GROUP_SPLIT_MIN=64 -DPROFSUM_SWEEP_SPLIT_MIN=64 \
  -DPROFSUM_EXACT_SLICE_MIN=64 -DPROFSUM_SORT_SPILL_LOOK=16
ASAN_FLAGS := -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined \
  -DPROFSUM_SORT_HEAP_ONLY $(SPLIT_SMALL)
UBSAN_FLAGS := -O1 -fsanitize=undefined,float-cast-overflow -fno-sanitize-recover=all -fno-omit-frame-pointer

# $(call variant,NAME,CC,FLAGS,INFLATE,NETWORK)
define variant
CC_$(1)    := $(2)
FLAGS_$(1)  = $$(BASE_CFLAGS) $(3) $$(call infdef,$(4)) $$(call netdef,$(5))
LIBS_$(1)   = $$(call inflibs,$(4)) $$(call netlibs,$(5)) -lm
STAMP_$(1) := -DPROFSUM_BUILD_FLAGS='"$(strip $(3)) NETWORK=$(5) INFLATE=$(4)"'
OBJS_$(1)  := $$(patsubst ext/%.c,build/obj/$(1)/%.o,$$(SRCS))
build/gen/flags-$(1): FORCE | build/gen/deps-ok
	@printf '%s\n' '$$(CC_$(1)) $$(FLAGS_$(1))' | cmp -s - $$@ 2>/dev/null || printf '%s\n' '$$(CC_$(1)) $$(FLAGS_$(1))' > $$@
build/obj/$(1)/%.o: ext/%.c build/gen/flags-$(1) | build/gen/schema_sql.h
	@mkdir -p $$(@D)
	$$(CC_$(1)) $$(FLAGS_$(1)) $$(OBJ_EXTRA) -MMD -MP -c -o $$@ $$<
build/obj/$(1)/sql/profsum.o: build/gen/stamp build/gen/build_id.h
build/obj/$(1)/summary/import.o: build/gen/build_id.h
build/obj/$(1)/sql/profsum.o: OBJ_EXTRA = -DPROFSUM_COMMIT='"$$(COMMIT)"' $$(STAMP_$(1))
-include $$(OBJS_$(1):.o=.d)
endef
$(eval $(call variant,rel,$(CC),$(OPT),$(INFLATE),$(NETWORK)))
$(eval $(call variant,core,$(CC),$(OPT) -DSQLITE_CORE,$(INFLATE),$(NETWORK)))
$(eval $(call variant,nonet,$(CC),$(OPT),$(INFLATE),0))
$(eval $(call variant,phases,$(CC),$(OPT) -DPROFSUM_PHASE_TIMES,$(INFLATE),$(NETWORK)))
$(eval $(call variant,chunk,$(CC),$(OPT) -DPROFSUM_TRK_BLOCK_LOG=3 -DPROFSUM_TRK_RUN_LOG=3 -DPROFSUM_XP_INS_EAGER,$(INFLATE),$(NETWORK)))
$(eval $(call variant,zlib,$(CC),$(OPT),zlib,$(NETWORK)))
$(eval $(call variant,asan,$(CC),$(ASAN_FLAGS),$(INFLATE),$(NETWORK)))
$(eval $(call variant,asancore,$(CC),$(ASAN_FLAGS) -DSQLITE_CORE,$(INFLATE),$(NETWORK)))
$(eval $(call variant,tsancore,$(CC),-O1 -fsanitize=thread -fno-omit-frame-pointer -DSQLITE_CORE $(SPLIT_SMALL),$(INFLATE),$(NETWORK)))
$(eval $(call variant,ubsan,clang,$(UBSAN_FLAGS),$(INFLATE),$(NETWORK)))

all: profsum.so profsum

# Install missing Debian packages (see .ci/deps.sh); quick when all present.
deps:
	@bash .ci/deps.sh

profsum.so: $(OBJS_rel) | deps-note
	$(CC_rel) $(FLAGS_rel) $(LDFLAGS_SO) -o $@ $^ $(LIBS_rel)
build/nonet/profsum.so: $(OBJS_nonet)
	@mkdir -p $(@D)
	$(CC_nonet) $(FLAGS_nonet) $(LDFLAGS_SO) -o $@ $^ $(LIBS_nonet)
build/chunk/profsum.so: $(OBJS_chunk)
	@mkdir -p $(@D)
	$(CC_chunk) $(FLAGS_chunk) $(LDFLAGS_SO) -o $@ $^ $(LIBS_chunk)
# The suite again against a zlib-only build (the fallback inflater).
build/zlib/profsum.so: $(OBJS_zlib)
	@mkdir -p $(@D)
	$(CC_zlib) $(FLAGS_zlib) $(LDFLAGS_SO) -o $@ $^ $(LIBS_zlib)
# For profiling: each import writes its phases' milliseconds to stderr
# (ext/import.c, PROFSUM_PHASE_TIMES; bench/phases.py sums them up).
build/phases/profsum.so: $(OBJS_phases)
	@mkdir -p $(@D)
	$(CC_phases) $(FLAGS_phases) $(LDFLAGS_SO) -o $@ $^ $(LIBS_phases)

# C driver: the extension linked statically into a tiny SQL runner (used by
# the asan/valgrind targets and the unit tests of the reader).
build/sqlrun: tests/sqlrun.c $(OBJS_core)
	$(CC_core) $(FLAGS_core) -o $@ $^ $(SQLITE_LIBS) $(LIBS_core) -lpthread

# The command line (docs/cli.md): ext/cli/*.c with the extension compiled in
# (SQLITE_CORE; registered by sqlite3_auto_extension), linked against the
# system libsqlite3.  Not part of profsum.so.
# Its objects are compiled with the core flags into build/obj/cli/, each
# with its header dependencies, so a change recompiles one object.
CLIOBJS := $(patsubst ext/cli/%.c,build/obj/cli/%.o,$(CLISRCS))
build/obj/cli/%.o: ext/cli/%.c build/gen/flags-core | build/gen/schema_sql.h
	@mkdir -p $(@D)
	$(CC_core) $(FLAGS_core) -MMD -MP -c -o $@ $<
-include $(CLIOBJS:.o=.d)
profsum: $(CLIOBJS) $(OBJS_core) | deps-note
	$(CC_core) $(FLAGS_core) -o $@ $(CLIOBJS) $(OBJS_core) $(SQLITE_LIBS) $(LIBS_core) -lpthread

# Unit tests of the JSON tree's arenas (tests/jsontree_test.c), with
# AddressSanitizer and UBSan; run by tests/test_jsontree_arena.py.
build/jsontree_test: tests/jsontree_test.c ext/util/jsontree.c ext/util/jsontree.h ext/util/cnum.c ext/util/cnum.h ext/util/profsum_int.h | build/gen/deps-ok
	@mkdir -p build
	$(CC) $(WARN) -g -O1 -fsanitize=address,undefined -fno-omit-frame-pointer \
	  -fno-sanitize-recover=undefined -DSQLITE_CORE -D_GNU_SOURCE -Iext/util -o $@ tests/jsontree_test.c ext/util/jsontree.c ext/util/cnum.c \
	  $(SQLITE_LIBS) -lm

# Unit tests of the cut of a text at a UTF-8 character boundary
# (tests/utf8cut_test.c), with AddressSanitizer and UBSan; run by
# tests/test_utf8cut.py.
build/utf8cut_test: tests/utf8cut_test.c ext/util/utf8cut.c ext/util/utf8cut.h ext/util/utf8rule.c ext/util/utf8rule.h ext/util/profsum_int.h | build/gen/deps-ok
	@mkdir -p build
	$(CC) $(WARN) -g -O1 -fsanitize=address,undefined -fno-omit-frame-pointer \
	  -fno-sanitize-recover=undefined -DSQLITE_CORE -D_GNU_SOURCE -Iext/util -o $@ tests/utf8cut_test.c ext/util/utf8cut.c ext/util/utf8rule.c \
	  $(SQLITE_LIBS)

# Unit tests of the run of bytes a JSON string keeps as they are
# (tests/jsonesc_test.c), with AddressSanitizer and UBSan; run by
# tests/test_jsonesc.py.
# build/jsonesc_test_words: the same without the SSE2 loop (-U__SSE2__),
# so that the word loop runs over whole strings, as on other CPUs.
build/jsonesc_test: tests/jsonesc_test.c ext/util/jsonesc.h ext/util/profsum_int.h | build/gen/deps-ok
	@mkdir -p build
	$(CC) $(WARN) -g -O1 -fsanitize=address,undefined -fno-omit-frame-pointer \
	  -fno-sanitize-recover=undefined -DSQLITE_CORE -D_GNU_SOURCE -Iext/util -o $@ tests/jsonesc_test.c \
	  $(SQLITE_LIBS)
build/jsonesc_test_words: tests/jsonesc_test.c ext/util/jsonesc.h ext/util/profsum_int.h | build/gen/deps-ok
	@mkdir -p build
	$(CC) $(WARN) -U__SSE2__ -g -O1 -fsanitize=address,undefined -fno-omit-frame-pointer \
	  -fno-sanitize-recover=undefined -DSQLITE_CORE -D_GNU_SOURCE -Iext/util -o $@ tests/jsonesc_test.c \
	  $(SQLITE_LIBS)

# Unit tests of the hash of the string pool and the tallies
# (tests/hash_test.c), with AddressSanitizer and UBSan; run by
# tests/test_hash.py.
build/hash_test: tests/hash_test.c ext/util/hash.c ext/util/hash.h ext/util/profsum_int.h | build/gen/deps-ok
	@mkdir -p build
	$(CC) $(WARN) -g -O1 -fsanitize=address,undefined -fno-omit-frame-pointer \
	  -fno-sanitize-recover=undefined -DSQLITE_CORE -D_GNU_SOURCE -Iext/util -o $@ tests/hash_test.c ext/util/hash.c \
	  $(SQLITE_LIBS) -lpthread

# Differential tests of the decimal text to double conversion against
# strtod (tests/decnum_test.c), with AddressSanitizer and UBSan; run by
# tests/test_decnum.py.
build/decnum_test: tests/decnum_test.c ext/reader/decnum.c ext/reader/strindex.h ext/reader/profsum_reader.h ext/util/profsum_int.h | build/gen/deps-ok
	@mkdir -p build
	$(CC) $(WARN) -g -O1 -fsanitize=address,undefined -fno-omit-frame-pointer \
	  -fno-sanitize-recover=undefined -DSQLITE_CORE -D_GNU_SOURCE -Iext/util -Iext/reader -o $@ tests/decnum_test.c ext/reader/decnum.c \
	  $(SQLITE_LIBS) -lm

# The main job on a generated example (see examples/demo.sh).
demo: deps
	$(MAKE) --no-print-directory profsum.so
	bash examples/demo.sh

# (the out-of-memory driver that some tests run when `make asan` built it
# is brought up to date too, so that they never run an older build's code)
TEST_BUILD := profsum.so build/sqlrun profsum build/nonet/profsum.so build/phases/profsum.so build/jsontree_test \
  build/utf8cut_test build/jsonesc_test build/jsonesc_test_words build/hash_test build/decnum_test build/chunk/profsum.so $(wildcard build/asan/oom_sql)
test: deps
	$(MAKE) --no-print-directory -j$$(nproc) $(TEST_BUILD)
	$(PYTHON) tests/run.py

test-zlib: build/zlib/profsum.so
	PROFSUM_SO=$(CURDIR)/build/zlib/profsum.so $(PYTHON) tests/run.py

# ---- sanitizers -----------------------------------------------------------
# -DPROFSUM_SORT_HEAP_ONLY: the ASan builds sort out-of-order tracks with the
# heapsort fallback of the event sort (ordinary inputs never reach it), so the
# suite checks both paths: quicksort in `make test`, heapsort in `make asan`.
build/asan/profsum.so: $(OBJS_asan)
	@mkdir -p $(@D)
	$(CC_asan) $(FLAGS_asan) $(LDFLAGS_SO) -o $@ $^ $(LIBS_asan)
build/asan/sqlrun: tests/sqlrun.c $(OBJS_asancore)
	@mkdir -p $(@D)
	$(CC_asancore) $(FLAGS_asancore) -o $@ $^ $(SQLITE_LIBS) $(LIBS_asancore) -lpthread
# Out of memory at every allocation of the reading functions (tests/oom_test.c).
build/asan/oom_test: tests/oom_test.c tests/oom_common.h $(OBJS_asancore)
	@mkdir -p $(@D)
	$(CC_asancore) $(FLAGS_asancore) -o $@ $(filter-out %.h,$^) $(SQLITE_LIBS) $(LIBS_asancore) -lpthread

# Out of memory at every allocation of one SQL statement (tests/oom_sql.c,
# used by the XPlane tests of the asan run).
build/asan/oom_sql: tests/oom_sql.c tests/oom_common.h $(OBJS_asancore)
	@mkdir -p $(@D)
	$(CC_asancore) $(FLAGS_asancore) -o $@ $(filter-out %.h,$^) $(SQLITE_LIBS) $(LIBS_asancore) -lpthread

# Python cannot be rebuilt with ASan, so the runtime is preloaded; leak
# checking is off for the Python run (CPython's own allocations) and on for
# the C driver run, which exercises the same reader paths.
ASAN_PRELOAD = LD_PRELOAD="$$($(CC) -print-file-name=libasan.so) $$($(CC) -print-file-name=libubsan.so)" \
  ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
asan: build/asan/profsum.so build/asan/sqlrun build/sqlrun build/asan/oom_test build/asan/oom_sql profsum profsum.so
	PROFSUM_SQLRUN=build/asan/sqlrun ASAN_OPTIONS=detect_leaks=1 $(PYTHON) tests/run_driver.py
	$(PYTHON) tests/oom_check.py build/asan/oom_test
	PROFSUM_SO=$(CURDIR)/build/asan/profsum.so PROFSUM_SQLRUN=build/asan/sqlrun $(ASAN_PRELOAD) \
	  $(PYTHON) tests/run.py

# The corpus check (below) with the AddressSanitizer build.
corpus-asan: build/asan/profsum.so
	PROFSUM_SO=$(CURDIR)/build/asan/profsum.so $(ASAN_PRELOAD) $(PYTHON) tests/corpus_check.py

# clang's UndefinedBehaviorSanitizer, float-cast-overflow included (gcc's
# -fsanitize=undefined does not check float to integer conversions), as a
# loadable extension with the shared UBSan runtime: the Python suite, every
# report an error.
build/ubsan/profsum.so: $(OBJS_ubsan)
	@mkdir -p $(@D)
	$(CC_ubsan) $(FLAGS_ubsan) -shared-libsan -Wl,-rpath,"$$(clang --print-runtime-dir)" $(LDFLAGS_SO) \
	  -o $@ $^ $(LIBS_ubsan)
ubsan: build/ubsan/profsum.so build/sqlrun profsum
	PROFSUM_SO=$(CURDIR)/build/ubsan/profsum.so UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	  $(PYTHON) tests/run.py

# ThreadSanitizer: the C driver's fixtures again, threads forced on (the
# inflate producer for gzip files of 128 KiB and more; the parse thread of a
# first import, which the driver's import checks take), every data race an
# error.  Not in `make asan` (TSan and ASan cannot share a process).
build/tsan/sqlrun: tests/sqlrun.c $(OBJS_tsancore)
	@mkdir -p $(@D)
	$(CC_tsancore) $(FLAGS_tsancore) -o $@ $^ $(SQLITE_LIBS) $(LIBS_tsancore) -lpthread
tsan: build/tsan/sqlrun
	PROFSUM_SQLRUN=build/tsan/sqlrun TSAN_OPTIONS=halt_on_error=1:exitcode=66 $(PYTHON) tests/run_driver.py

valgrind: build/sqlrun
	PROFSUM_SQLRUN="valgrind -q --error-exitcode=9 --leak-check=full --errors-for-leak-kinds=definite,indirect build/sqlrun" \
	  $(PYTHON) tests/run_driver.py

# ---- fuzzing --------------------------------------------------------------
FUZZ_SECONDS ?= 600
FUZZ_CFLAGS = -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined $(BASE_CFLAGS) $(call infdef,$(INFLATE)) \
  $(call netdef,$(NETWORK)) -DSQLITE_CORE -DPROFSUM_WINDOW_INIT=64
FUZZ_LIBS = $(SQLITE_LIBS) $(call inflibs,$(INFLATE)) $(call netlibs,$(NETWORK)) -lpthread -lm
build/fuzz_reader: tests/fuzz_reader.c $(SRCS) $(HDRS) build/gen/schema_sql.h build/gen/build_id.h | build/gen/deps-ok
	@mkdir -p build
	clang $(FUZZ_CFLAGS) -Wno-error -o $@ tests/fuzz_reader.c $(SRCS) $(FUZZ_LIBS)
# The XSpace decoder alone, with small windows so that every refill and
# whole-line path is reached by small inputs.
build/fuzz_xplane: tests/fuzz_xplane.c $(SRCS) $(HDRS) build/gen/schema_sql.h build/gen/build_id.h | build/gen/deps-ok
	@mkdir -p build
	clang $(FUZZ_CFLAGS) -Wno-error -DPROFSUM_XP_READAHEAD=64 -DPROFSUM_XP_LINE_WHOLE=256 -DPROFSUM_XP_LAZY_MIN=16 \
	  -o $@ tests/fuzz_xplane.c $(SRCS) $(FUZZ_LIBS)
fuzz-xplane: build/fuzz_xplane
	@mkdir -p build/fuzz_xplane_corpus
	build/fuzz_xplane -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -timeout=10 -artifact_prefix=build/ \
	  -print_final_stats=1 build/fuzz_xplane_corpus tests/fuzz_xplane_corpus
fuzz: build/fuzz_reader
	@mkdir -p build/fuzz_corpus
	build/fuzz_reader -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -timeout=10 -artifact_prefix=build/ \
	  -print_final_stats=1 build/fuzz_corpus tests/fuzz_corpus
# The import, the views over what it wrote and the v1 document, on a fresh
# in-memory database per input (tests/fuzz_import.c).
build/fuzz_import: tests/fuzz_import.c $(SRCS) $(HDRS) build/gen/schema_sql.h build/gen/build_id.h | build/gen/deps-ok
	@mkdir -p build
	clang $(FUZZ_CFLAGS) -Wno-error -o $@ tests/fuzz_import.c $(SRCS) $(FUZZ_LIBS)
fuzz-import: build/fuzz_import
	@mkdir -p build/fuzz_import_corpus
	build/fuzz_import -max_total_time=$(FUZZ_SECONDS) -max_len=16384 -len_control=0 -timeout=10 -artifact_prefix=build/ \
	  -print_final_stats=1 build/fuzz_import_corpus tests/fuzz_import_corpus

# ---- corpus and benchmark -------------------------------------------------
corpus: profsum.so
	$(PYTHON) tests/corpus_check.py

bench: profsum.so
	bash bench/run.sh

# Against igzip -dc and gzip -dc in one run (bench/floor.py; igzip: Debian
# package isal), on the 10 MB and 100 MB traces of bench/data/; and a
# history of 10,000 runs (bench/history_bench.py).
bench-floor: profsum.so
	@mkdir -p bench/data
	@for s in 10M 100M; do f=bench/data/trace-tpu-$$s-s1.json.gz; [ -f $$f ] || \
	  $(PYTHON) bench/gen_trace.py --size $$s --out $$f >/dev/null || exit 1; done
	$(PYTHON) bench/floor.py --rounds 3 bench/data/trace-tpu-10M-s1.json.gz bench/data/trace-tpu-100M-s1.json.gz

bench-history: profsum.so
	$(PYTHON) bench/history_bench.py --runs 10000 --plans

# SHA-256 throughput alone (the hash of every imported file): SHA extensions
# when the CPU has them, then the portable code.
build/sha256_speed: bench/sha256_speed.c ext/util/hash.c ext/util/hash.h ext/util/profsum_int.h | build/gen/deps-ok
	@mkdir -p build
	$(CC) $(BASE_CFLAGS) $(OPT) -DSQLITE_CORE -o $@ bench/sha256_speed.c ext/util/hash.c $(SQLITE_LIBS) -lpthread

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

.PHONY: all deps demo test test-zlib asan corpus-asan ubsan tsan valgrind fuzz fuzz-xplane fuzz-import corpus bench bench-floor bench-history bench-sha256 install clean

# ---- Python and Node packages (python/README.md, node/README.md) ------------
#   make wheel      build/wheel/profsum-$(VERSION)-py3-none-<platform>.whl: the
#                   Python package with this profsum.so inside, built with the
#                   system's setuptools and wheel (Debian python3-setuptools,
#                   python3-wheel), no network, no pip
#   make node-pkg   build/node/profsum-$(VERSION).tgz: the npm package with
#                   this profsum.so inside (npm pack, no network)
# Both stage a copy under build/, so the source tree is not written.
wheel: profsum.so
	rm -rf build/python-src && mkdir -p build/python-src build/wheel
	cp -r python/pyproject.toml python/setup.py python/README.md python/profsum LICENSE build/python-src/
	rm -rf build/python-src/profsum/__pycache__ build/python-src/profsum/profsum.so
	cd build/python-src && PROFSUM_SO=$(CURDIR)/profsum.so PROFSUM_VERSION=$(VERSION) \
	  $(PYTHON) -c 'import setuptools.build_meta as b; print("build/wheel/" + b.build_wheel("../wheel"))'

node-pkg: profsum.so
	rm -rf build/node/pkg && mkdir -p build/node/pkg
	cp node/package.json node/index.js node/index.d.ts node/README.md LICENSE build/node/pkg/
	cp profsum.so build/node/pkg/profsum.so
	cd build/node && npm pack --silent ./pkg

.PHONY: wheel node-pkg
