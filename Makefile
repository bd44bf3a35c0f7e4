# tessera — convenience wrapper around CMake and ctest.
#
#   make              build into build/ (installs missing packages via scripts/deps.sh)
#   make run          build, then run the main job ($(RUN_ARGS))
#   make test         build, then the fast test tier
#   make test-long    fast and long tiers
#   make test-asan    fast tier under ASan+UBSan in build-asan/
#   make test-tsan    fast tier under TSan (embedded only) in build-tsan/
#   make fuzz         libFuzzer targets in build-fuzz/, FUZZ_SECONDS each
#   make format       apply .clang-format to every C file; format-check only reports
#   make install PREFIX=/usr/local
#   make deps | clean
#
# Extra CMake options: make CMAKE_ARGS='-DTESS_WITH_MPI=OFF'.

BUILD        ?= build
JOBS         ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE        ?= cmake
CMAKE_ARGS   ?=
PREFIX       ?= /usr/local
FUZZ_SECONDS ?= 30
RUN_ARGS     ?= run pagerank --gen web:2000000 --iterations 20 --progress
CTEST_ARGS   ?= --output-on-failure -j$(JOBS)
comma        := ,

# OpenMPI inside containers, as root, on few cores.  Only defaults: the
# caller's environment wins.
export OMPI_ALLOW_RUN_AS_ROOT ?= 1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM ?= 1
export OMPI_MCA_btl_vader_single_copy_mechanism ?= none
export OMPI_MCA_rmaps_base_oversubscribe ?= 1

# Sanitizer options for tests live in tests/CMakeLists.txt (ctest sets them);
# these are for the fuzz runs.
FUZZ_ENV = ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

# configure(dir, extra cmake args): configure once; later builds re-glob sources
# by themselves (CONFIGURE_DEPENDS).
define configure
	@if [ ! -f $(1)/CMakeCache.txt ]; then \
	    echo "== configuring $(1)"; \
	    $(CMAKE) -S . -B $(1) $(2) $(CMAKE_ARGS) || { rm -f $(1)/CMakeCache.txt; exit 1; }; \
	fi
endef

# ctest_tier(dir, ctest args, name): run ctest and finish with one summary line.
define ctest_tier
	@$(3) ctest --test-dir $(1) $(2) $(CTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 0 ]; then echo "== $(4): PASSED"; else echo "== $(4): FAILED (ctest exit $$rc)"; fi; \
	exit $$rc
endef

MAKEFLAGS += --no-print-directory

.PHONY: all deps build run test test-long asan test-asan tsan test-tsan fuzz \
        format format-check install clean

all: build

deps:
	@scripts/deps.sh

build: deps
	$(call configure,$(BUILD),)
	@$(CMAKE) --build $(BUILD) -j$(JOBS)

run: all
	./$(BUILD)/tessera $(RUN_ARGS)

test: all
	$(call ctest_tier,$(BUILD),-L fast,,make test (fast tier))

test-long: all
	$(call ctest_tier,$(BUILD),-L 'fast|long',,make test-long (fast and long tiers))

asan: deps
	$(call configure,build-asan,-DTESS_SANITIZE=address$(comma)undefined)
	@$(CMAKE) --build build-asan -j$(JOBS)

test-asan: asan
	$(call ctest_tier,build-asan,-L fast,,make test-asan (fast tier, ASan+UBSan))

tsan: deps
	$(call configure,build-tsan,-DTESS_SANITIZE=thread -DTESS_WITH_MPI=OFF)
	@$(CMAKE) --build build-tsan -j$(JOBS)

# The tsan label if any test carries it, else the whole fast tier (MPI tests
# skip themselves: this build has TESS_HAVE_MPI=0).
test-tsan: tsan
	@if ctest --test-dir build-tsan -N -L tsan | grep -q 'Total Tests: [1-9]'; then \
	    label=tsan; else label=fast; fi; \
	ctest --test-dir build-tsan -L $$label $(CTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 0 ]; then echo "== make test-tsan ($$label): PASSED"; \
	else echo "== make test-tsan ($$label): FAILED (ctest exit $$rc)"; fi; exit $$rc

fuzz:
	@scripts/deps.sh fuzz
	$(call configure,build-fuzz,-DCMAKE_C_COMPILER=clang -DTESS_FUZZ=ON -DTESS_WITH_MPI=OFF -DTESS_BUILD_TESTS=OFF -DTESS_WITH_CUDA=OFF)
	@$(CMAKE) --build build-fuzz -j$(JOBS) --target fuzz
	@mkdir -p build-fuzz/artifacts; status=0; n=0; \
	for name in $$(cat build-fuzz/fuzz/targets.txt); do \
	    bin=build-fuzz/fuzz/$$name; n=$$((n + 1)); \
	    corpus=$$(mktemp -d); log=build-fuzz/$$name.log; \
	    if [ -d tests/fuzz/corpus/$$name ]; then cp -R tests/fuzz/corpus/$$name/. "$$corpus"/; fi; \
	    dict=; if [ -f tests/fuzz/$$name.dict ]; then dict=-dict=tests/fuzz/$$name.dict; fi; \
	    echo "== fuzz $$name for $(FUZZ_SECONDS)s (seeds: $$(ls "$$corpus" | wc -l))"; \
	    if $(FUZZ_ENV) "$$bin" -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 \
	           -print_final_stats=1 -artifact_prefix=build-fuzz/artifacts/$$name- $$dict \
	           "$$corpus" > "$$log" 2>&1; then \
	        grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb' "$$log" | tr '\n' ' '; echo; \
	    else \
	        status=1; tail -n 60 "$$log"; echo "== fuzz $$name: FAILED (log: $$log, inputs: build-fuzz/artifacts/)"; \
	    fi; \
	    rm -rf "$$corpus"; \
	done; \
	if [ $$status -eq 0 ]; then echo "== make fuzz ($$n targets, $(FUZZ_SECONDS)s each): PASSED"; \
	else echo "== make fuzz: FAILED"; fi; exit $$status

# Every tracked C source and header (the fuzz corpora are data).
FORMAT_FILES = $(shell git ls-files '*.c' '*.h' 2>/dev/null)
CLANG_FORMAT ?= clang-format

format:
	@scripts/deps.sh format
	@$(CLANG_FORMAT) -i $(FORMAT_FILES)

format-check:
	@scripts/deps.sh format
	@$(CLANG_FORMAT) --dry-run --Werror $(FORMAT_FILES) && \
	    echo "== make format-check: PASSED ($(words $(FORMAT_FILES)) files)" || \
	    { echo "== make format-check: FAILED (run 'make format')"; exit 1; }

install: all
	$(CMAKE) --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD) build-asan build-tsan build-fuzz
