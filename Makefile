# Build of the Mali-board profiler. Quick reference:
#   make                  build agent + collector for BOARD (default: host) into build/<board>/
#   make defconfig        (re)create build/<board>/.config from configs/<board>_defconfig
#   make menuconfig       edit the configuration (Kconfig, kconfiglib)
#   make olddefconfig     update an old .config with defaults for new options
#   make check            install deps, -Werror build, unit + integration tests under ASan+UBSan,
#                         boards, deps audit (every package used is installed by scripts/deps.sh)
#   make check-fast       the unit suites only (sanitizer build), no deps/boards/integration
#   make demo             install deps, build, profile a sample OpenCL workload, print the report
#   make fuzz             libFuzzer: frame + envelope decoder, record validators, HTTP parser, trace readers, 600 s each (FUZZ_SECONDS=N)
#   make bench            benchmarks, results in bench/RESULTS.md
#   make deps             install the Debian packages the build needs (idempotent)
# Variables: BOARD=<name> (board/<name>/), DEFCONFIG=<file>, O=<dir> (output dir), SAN=1 (sanitizers), V=1.

BOARD ?= host
DEFCONFIG ?= configs/$(BOARD)_defconfig
O ?= build/$(BOARD)$(if $(SAN),-san)
PY := /usr/bin/python3
KCONFIGLIB := /usr/lib/python3/dist-packages
KCONFIG_RUN = KCONFIG_CONFIG=$(O)/.config $(PY) $(KCONFIGLIB)

ifeq ($(wildcard board/$(BOARD)/board.mk),)
$(error unknown board '$(BOARD)': no board/$(BOARD)/board.mk. Known boards: $(patsubst board/%/board.mk,%,$(wildcard board/*/board.mk)))
endif
include board/$(BOARD)/board.mk

Q := $(if $(V),,@)
CC ?= cc
ifeq ($(origin CC),default)
CC := $(CROSS_COMPILE)gcc
endif
AR := $(CROSS_COMPILE)ar
PROTOC_C ?= protoc-c

-include $(O)/.config

GEN := $(O)/gen
CFLAGS_BASE := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wno-unused-parameter -g -O2 -fno-omit-frame-pointer
CFLAGS_BASE += $(if $(WERROR),-Werror)
SAN_FLAGS := -fsanitize=address -fsanitize=undefined
CFLAGS_BASE += $(if $(SAN),$(SAN_FLAGS) -fno-sanitize-recover=undefined)
CPPFLAGS_BASE := -I$(O)/include -I$(GEN) -Iproto -Icommon -Iagent -Icollector -Itests/lib -MMD -MP
LDFLAGS_BASE := $(if $(SAN),$(SAN_FLAGS))
ALL_CFLAGS = $(CFLAGS_BASE) $(BOARD_CFLAGS) $(CFLAGS)
ALL_CPPFLAGS = $(CPPFLAGS_BASE) $(CPPFLAGS)

AGENT_LIBS := -lprotobuf-c
ifeq ($(CONFIG_AGENT_BPF_LIBBPF),y)
AGENT_LIBS += -lbpf -lelf -lz
endif
ifeq ($(CONFIG_AGENT_OPENCL),y)
AGENT_LIBS += -ldl
endif
# Capstone: linked into static agents; dynamic ones load libcapstone.so.4 when they first
# decode (agent/trace/cs_api.c), so only `agent trace` pays its ~3 MiB of relocated tables.
ifeq ($(CONFIG_AGENT_TRACER),y)
AGENT_LIBS += $(if $(filter y,$(CONFIG_STATIC)),-lcapstone,-ldl)
endif
AGENT_LDFLAGS := $(if $(CONFIG_STATIC),-static)
COLLECTOR_LIBS := -lsqlite3 -lprotobuf-c -lm
TEST_LIBS := -lcmocka $(COLLECTOR_LIBS) $(AGENT_LIBS)

PROTO_SRC := $(wildcard proto/*.proto)
PROTO_C := $(patsubst proto/%.proto,$(GEN)/%.pb-c.c,$(PROTO_SRC))
PROTO_H := $(patsubst proto/%.proto,$(GEN)/%.pb-c.h,$(PROTO_SRC))
CONFIG_H := $(O)/include/generated/config.h

COMMON_SRC := $(wildcard common/*.c proto/*.c)
AGENT_SRC := $(filter-out agent/main.c,$(wildcard agent/*.c agent/*/*.c))
COLLECTOR_SRC := $(filter-out collector/main.c,$(wildcard collector/*.c collector/*/*.c))
UNIT_SRC := $(wildcard tests/unit/test_*.c)
INTEG_SRC := $(wildcard tests/integration/test_*.c)
TESTLIB_SRC := $(wildcard tests/lib/*.c)
WORKLOAD_SRC := $(wildcard tests/workloads/*.c)
BENCH_SRC := $(wildcard bench/*.c)

obj = $(patsubst %.c,$(O)/obj/%.o,$(1))
COMMON_OBJ := $(call obj,$(COMMON_SRC)) $(patsubst $(GEN)/%.c,$(O)/obj/gen/%.o,$(PROTO_C))
AGENT_OBJ := $(call obj,$(AGENT_SRC))
COLLECTOR_OBJ := $(call obj,$(COLLECTOR_SRC))

LIBCOMMON := $(O)/libcommon.a
LIBAGENT := $(O)/libagent.a
LIBCOLLECTOR := $(O)/libcollector.a
LIBTEST := $(O)/libtest.a

AGENT_BIN := $(O)/agent
COLLECTOR_BIN := $(O)/collector
UNIT_BINS := $(patsubst tests/unit/%.c,$(O)/tests/%,$(UNIT_SRC))
INTEG_BINS := $(patsubst tests/integration/%.c,$(O)/tests/%,$(INTEG_SRC))
WORKLOAD_BINS := $(patsubst tests/workloads/%.c,$(O)/workloads/%,$(WORKLOAD_SRC))
BENCH_BINS := $(patsubst bench/%.c,$(O)/bench/%,$(BENCH_SRC))

PROGRAMS := $(AGENT_BIN) $(if $(filter y,$(CONFIG_COLLECTOR)),$(COLLECTOR_BIN))

# Feature fragments (mk/<feature>.mk) add their own rules and may append to
# EXTRA_TARGETS (built by `all` and `tests`) and EXTRA_CHECK (shell commands
# that `make check` runs before the test suites; they must exit non-zero on failure).
EXTRA_TARGETS :=
EXTRA_CHECK :=
-include $(sort $(wildcard mk/*.mk))
$(eval $(BOARD_TWIN_RULES))

.PHONY: all deps check-deps defconfig menuconfig olddefconfig savedefconfig tests check check-fast unit integration demo fuzz bench clean distclean help
.DEFAULT_GOAL := all
.SECONDARY:

all: $(PROGRAMS) $(EXTRA_TARGETS)

help:
	@sed -n '1,/^$$/p' Makefile

# ---------------------------------------------------------------- configuration
# kconfiglib comes from scripts/deps.sh: on a fresh machine the first thing make does
# (remaking the included .config) installs the dependencies.
$(KCONFIGLIB)/kconfiglib.py:
	@scripts/deps.sh $(BOARD)

$(O)/.config: $(DEFCONFIG) Kconfig | $(KCONFIGLIB)/kconfiglib.py
	@mkdir -p $(O)
	@if [ -f $@ ]; then echo "  OLDDEF  $@"; $(KCONFIG_RUN)/olddefconfig.py Kconfig >/dev/null; \
	 else echo "  DEFCONF $@ (from $<)"; $(KCONFIG_RUN)/defconfig.py --kconfig Kconfig $< >/dev/null; fi
	@touch $@

defconfig: | $(KCONFIGLIB)/kconfiglib.py
	@mkdir -p $(O)
	$(KCONFIG_RUN)/defconfig.py --kconfig Kconfig $(DEFCONFIG)

olddefconfig: $(O)/.config
	$(KCONFIG_RUN)/olddefconfig.py Kconfig

menuconfig: $(O)/.config
	$(KCONFIG_RUN)/menuconfig.py Kconfig

savedefconfig: $(O)/.config
	$(KCONFIG_RUN)/savedefconfig.py --kconfig Kconfig --out $(O)/defconfig
	@echo "wrote $(O)/defconfig (copy it to configs/$(BOARD)_defconfig to keep it)"

$(CONFIG_H): $(O)/.config Kconfig
	@mkdir -p $(dir $@)
	@echo "  GENCONF $@"
	$(Q)$(KCONFIG_RUN)/genconfig.py --header-path $@ Kconfig
	@touch $@

# ---------------------------------------------------------------- generated protobuf
# All schema files at once: profiler.proto imports the per-concern ones.
$(PROTO_C) $(PROTO_H) &: $(PROTO_SRC)
	@mkdir -p $(GEN)
	@echo "  PROTOC  $(PROTO_SRC)"
	$(Q)$(PROTOC_C) --proto_path=proto --c_out=$(GEN) $(PROTO_SRC)

# ---------------------------------------------------------------- objects
$(O)/obj/%.o: %.c $(CONFIG_H) $(PROTO_H)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -c $< -o $@

# CONFIG_H: every object waits for it, and with it for what it depends on (a board's musl
# sysroot, whose headers the generated code includes; -j2 once compiled these first)
$(O)/obj/gen/%.pb-c.o: $(GEN)/%.pb-c.c $(PROTO_H) $(CONFIG_H)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CPPFLAGS) $(filter-out -Werror,$(ALL_CFLAGS)) -c $< -o $@

$(LIBCOMMON): $(COMMON_OBJ)
	$(Q)rm -f $@ && $(AR) rcs $@ $^
$(LIBAGENT): $(AGENT_OBJ)
	$(Q)rm -f $@ && $(AR) rcs $@ $^
$(LIBCOLLECTOR): $(COLLECTOR_OBJ)
	$(Q)rm -f $@ && $(AR) rcs $@ $^
$(LIBTEST): $(call obj,$(TESTLIB_SRC))
	$(Q)rm -f $@ && $(AR) rcs $@ $^

# AGENT_ARCHIVES: archives the agent takes members from, between its own and libcommon (mk/*.mk)
$(AGENT_BIN): $(O)/obj/agent/main.o $(LIBAGENT) $(AGENT_ARCHIVES) $(LIBCOMMON)
	@echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS_BASE) $(AGENT_LDFLAGS) $(LDFLAGS) -o $@ $^ $(AGENT_LIBS)

$(COLLECTOR_BIN): $(O)/obj/collector/main.o $(LIBCOLLECTOR) $(LIBCOMMON)
	@echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS_BASE) $(LDFLAGS) -o $@ $^ $(COLLECTOR_LIBS)

$(O)/tests/%: $(O)/obj/tests/unit/%.o $(LIBTEST) $(LIBCOLLECTOR) $(LIBAGENT) $(LIBCOMMON)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS_BASE) $(LDFLAGS) -o $@ $^ $(TEST_LIBS)

$(O)/tests/%: $(O)/obj/tests/integration/%.o $(LIBTEST) $(LIBCOLLECTOR) $(LIBAGENT) $(LIBCOMMON)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS_BASE) $(LDFLAGS) -o $@ $^ $(TEST_LIBS)

# Workloads are the profiled programs: never sanitizer-instrumented (ASan and
# LeakSanitizer do not run under ptrace or beside a preloaded OpenCL layer).
$(O)/obj/tests/workloads/%.o: ALL_CFLAGS = $(filter-out $(SAN_FLAGS) -fno-sanitize-recover=undefined,$(CFLAGS_BASE)) $(BOARD_CFLAGS) $(CFLAGS)
$(O)/workloads/%: $(O)/obj/tests/workloads/%.o
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ -lOpenCL -lm -lpthread

$(O)/bench/%: $(O)/obj/bench/%.o $(LIBTEST) $(LIBCOLLECTOR) $(LIBAGENT) $(LIBCOMMON)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS_BASE) $(LDFLAGS) -o $@ $^ $(TEST_LIBS)

tests: $(PROGRAMS) $(EXTRA_TARGETS) $(UNIT_BINS) $(INTEG_BINS) $(WORKLOAD_BINS)

# ---------------------------------------------------------------- top-level flows
deps:
	@scripts/deps.sh $(BOARD)

# Units and integration tests, both against the sanitizer build.
unit: tests
	@scripts/run-tests.sh unit $(O)

integration: tests
	@scripts/run-tests.sh integration $(O)

# Deps audit (scripts/deps-audit.py): the builds and checks below run under strace, the
# test tools are probed once, and every package they used must be installed by
# scripts/deps.sh on a fresh machine (DEPS_AUDIT=0 skips it).
AUDIT_DIR := build/deps-audit
AUDIT = $(if $(filter 0,$(DEPS_AUDIT)),,scripts/deps-audit.py trace $(AUDIT_DIR)/$(1).trace --)
AUDIT_BOARDS = $(addprefix --board ,$(BOARD_BUILD_BOARDS) $(BOARD_CHECK_BOARDS))

# make check's first step installs every package of the host and of every board it checks,
# so that nothing is installed while its builds run under the audit's strace (the audit also
# leaves out what the package manager's processes open: scripts/deps-audit.py).
CHECK_DEPS_BOARDS = host $(if $(filter host,$(BOARD)),$(if $(filter 0,$(BOARD_CHECK)),,$(BOARD_BUILD_BOARDS) $(BOARD_CHECK_BOARDS)),$(BOARD))
CHECK_RESULTS := build/check-results
# $(call CHECK_STEP,name,command): run it whatever the others did; the summary names each result
CHECK_STEP = scripts/check-step.sh $(CHECK_RESULTS) '$(1)' $(2)
# the same for a step that stops make check when it fails (deps, the builds)
CHECK_STOP = scripts/check-step.sh $(CHECK_RESULTS) --stop '$(1)' $(2)

# (its first step: the results, with every step's time, start here)
check-deps:
	$(Q)mkdir -p build && rm -f $(CHECK_RESULTS)
	$(Q)$(call CHECK_STOP,deps,scripts/deps.sh $(CHECK_DEPS_BOARDS))

# make check's builds use every CPU (issue 43: a plain `make check` compiled one file at a time,
# ~2 of its 21 minutes); a caller's own -j (a jobserver in MAKEFLAGS) is left to rule.
CHECK_JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CHECK_J = $(if $(findstring jobserver,$(MAKEFLAGS)),,-j$(CHECK_JOBS))

# The builds stop make check (nothing to test without them); every later step runs whatever
# the others did, and the end names every result. The minimal configuration's builds run beside
# the boards (EXTRA_CHECK), their output printed after them (issue 43: both leave a core idle in
# their serial and single-threaded parts); the deps audit (one CPU, ~25 s: it needs every step's
# trace, the boards' too) runs beside the tests, its output printed after theirs (session wci).
check: check-deps
	$(Q)rm -rf $(AUDIT_DIR) && mkdir -p build
	@echo "== -Werror build ($(O)) =="
	$(Q)$(call CHECK_STOP,-Werror build,$(call AUDIT,build) $(MAKE) --no-print-directory $(CHECK_J) WERROR=1 all)
	@echo "== sanitizer build + tests =="
	$(Q)$(call CHECK_STOP,sanitizer build,$(call AUDIT,build-san) $(MAKE) --no-print-directory $(CHECK_J) SAN=1 WERROR=1 tests)
	$(Q)$(call CHECK_STEP,minimal configuration,$(call AUDIT,config) env CHECK_J=$(CHECK_J) scripts/check-config.sh) \
		>build/check-config.log 2>&1 & cfg=$$!; \
	$(foreach c,$(EXTRA_CHECK),$(call CHECK_STEP,$(notdir $(c)),$(call AUDIT,$(notdir $(c))) $(c)) &&) true; \
	wait $$cfg; echo "== minimal configuration (every optional feature off; ran beside the steps above) =="; \
	cat build/check-config.log
	$(Q)$(if $(filter 0,$(DEPS_AUDIT)),,$(call CHECK_STEP,deps audit,sh -c \
		'scripts/deps-audit.py probe $(AUDIT_DIR) && scripts/deps-audit.py check --self-test $(AUDIT_BOARDS) $(AUDIT_DIR)/*.trace') \
		>build/check-audit.log 2>&1 & audit=$$!;) \
	$(call CHECK_STEP,tests,scripts/run-tests.sh all build/$(BOARD)-san); \
	$(if $(filter 0,$(DEPS_AUDIT)),,wait $$audit; echo "== deps audit (ran beside the tests) =="; cat build/check-audit.log)
	$(Q)scripts/check-step.sh $(CHECK_RESULTS) --summary

# The unit suites alone, against the sanitizer build (no deps, boards or integration tests).
# (The names are this make's, under $(O); the sanitizer build's are under build/$(BOARD)-san.)
SAN_O := build/$(BOARD)-san
check-fast:
	$(Q)$(MAKE) --no-print-directory SAN=1 WERROR=1 $(patsubst $(O)/%,$(SAN_O)/%,$(PROGRAMS) $(UNIT_BINS))
	$(Q)scripts/run-tests.sh unit $(SAN_O)

demo: deps
	$(Q)$(MAKE) --no-print-directory $(CHECK_J) all tests
	$(Q)scripts/demo.sh $(O)

fuzz: deps
	$(Q)scripts/fuzz.sh $(O)-fuzz $(or $(FUZZ_SECONDS),600)

bench: deps
	$(Q)$(MAKE) --no-print-directory all tests $(BENCH_BINS)
	$(Q)scripts/bench.sh $(O)

clean:
	rm -rf $(O)/obj $(O)/gen $(O)/tests $(O)/bench $(O)/workloads $(O)/*.a $(PROGRAMS)

distclean:
	rm -rf build

-include $(shell find $(O)/obj -name '*.d' 2>/dev/null)
