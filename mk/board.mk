# Boards (board/<name>/, board/README.md): cross builds, size report, cross unit tests
# under qemu-user, and the emulated board test (QEMU -M virt, TCG).
#
#   make BOARD=<b>                 static cross agent in build/<b>/agent; prints the stripped size
#   make BOARD=<b> board-size      the same, and fails if the stripped agent is over BOARD_SIZE_MAX
#   make BOARD=<b> board-unit      cross-built unit suites (BOARD_UNIT_TESTS) under qemu-user
#   make BOARD=qemu-virt-<a> board-test   boot Debian's kernel + initramfs, agent -> host collector
#   make BOARD=<b> board-check     deps, -Werror build, board-size, board-unit, board-test (if any)
#   make board-check-all           builds of BOARD_BUILD_BOARDS, board-check of BOARD_CHECK_BOARDS
#                                  (`make check` runs it via scripts/board-check.sh; BOARD_CHECK=0 skips)
#
# A board.mk may set: BOARD_DEB_ARCH (Debian arch of the cross libraries), BOARD_QEMU_USER,
# BOARD_BTF_KERNEL_PKG, and for emulated boards QEMU_SYSTEM, QEMU_MACHINE, QEMU_CPU, QEMU_MEM,
# QEMU_CONSOLE, QEMU_KERNEL_PKG.

# Stripped static agent: the target is BOARD_SIZE_TARGET; board-size fails above
# BOARD_SIZE_MAX (a board.mk may raise it, saying why).
BOARD_SIZE_TARGET := 1048576
BOARD_SIZE_MAX ?= $(BOARD_SIZE_TARGET)
# Unit suites run under qemu-user: agent-side code without collector/SQLite or helper
# processes. test_perf is left out: qemu-user has no perf_event_open (ENOSYS); the
# counting path runs for real in the emulated boards' kernels (board-test).
BOARD_UNIT_TESTS ?= events frame loop record spool sysinfo transport gpu snapshot_wire trace_snapshot_rules
# the fake kbase device: the core and one file per driver generation
FAKE_KBASE_OBJ = $(patsubst %.c,$(O)/obj/%.o,$(wildcard tests/lib/fake_kbase*.c))
BOARD_TEST_TIMEOUT ?= 300
BOARD_TEST_SECONDS ?= 3
BOARD_BUILD_BOARDS ?= arndale-octa android-arm64
BOARD_CHECK_BOARDS ?= qemu-virt-armhf qemu-virt-arm64
HOST_COLLECTOR := build/host/collector

# A changed board.mk (flags) rebuilds everything: every object depends on the config header.
$(CONFIG_H): board/$(BOARD)/board.mk

STRIP := $(CROSS_COMPILE)strip
READELF := $(CROSS_COMPILE)readelf
AGENT_STRIPPED := $(O)/agent.stripped

.PHONY: board-size board-unit board-guest board-test board-check board-check-all board-opencl

# A cross board without its toolchain: say what to run (make deps/check install it first).
ifneq ($(CROSS_COMPILE),)
ifeq ($(filter deps check board-check board-check-all clean distclean help,$(MAKECMDGOALS)),)
ifeq ($(shell command -v $(CROSS_COMPILE)gcc 2>/dev/null),)
$(error board $(BOARD): no $(CROSS_COMPILE)gcc. Run: make deps BOARD=$(BOARD))
endif
endif
endif

# 32-bit ARM has no __int128. While agent sources use it unguarded (no #ifdef
# __SIZEOF_INT128__), those objects are built with a 64-bit stand-in so the board
# builds, and the build says so: a product of two 64-bit values then wraps (perf_scale()
# with multiplexed counters after a few seconds). The fix belongs in agent/perf.c
# (board/README.md); this block then does nothing.
ifeq ($(BOARD_DEB_ARCH),armhf)
BOARD_INT128_SRC := $(shell grep -l '__int128' agent/*.c agent/*/*.c 2>/dev/null | xargs -r grep -L '__SIZEOF_INT128__')
ifneq ($(BOARD_INT128_SRC),)
$(call obj,$(BOARD_INT128_SRC)): BOARD_CFLAGS += -D'__int128=long long'
BOARD_INT128_WARNING := board: WARNING: $(BOARD_INT128_SRC) use __int128, which 32-bit ARM lacks; built with a 64-bit stand-in (see board/README.md)
ifeq ($(MAKELEVEL)$(MAKE_RESTARTS),0)
$(info $(BOARD_INT128_WARNING))
endif
endif
endif

# ---------------------------------------------------------------- size (printed after link)
AGENT_LDFLAGS += $(BOARD_LDFLAGS)
ifneq ($(CROSS_COMPILE),)
EXTRA_TARGETS += $(AGENT_STRIPPED)
endif

$(AGENT_STRIPPED): $(AGENT_BIN)
	$(Q)$(STRIP) -o $@ $<
	@s=$$(stat -c %s $@); u=$$(stat -c %s $<); \
	 if $(READELF) -l $< | grep -q 'program interpreter'; then l=dynamic; else l=static; fi; \
	 echo "  SIZE    $(BOARD): agent $$s bytes stripped ($$(( (s + 1023) / 1024 )) KiB, $$l), $$u with debug info;" \
	   "target $(BOARD_SIZE_TARGET)$$([ $$s -gt $(BOARD_SIZE_TARGET) ] && echo ": OVER by $$((s - $(BOARD_SIZE_TARGET)))")"

# Static builds with the tracer: only the board's Capstone architectures are linked
# (board/capstone-arch-stubs.c; BOARD_CAPSTONE_ARCHS in board.mk, e.g. ARM or AArch64).
ifeq ($(CONFIG_AGENT_TRACER)$(CONFIG_STATIC),yy)
ifneq ($(BOARD_CAPSTONE_ARCHS),)
CAPSTONE_STUBS_O := $(O)/obj/board/capstone-arch-stubs.o
$(CAPSTONE_STUBS_O): board/capstone-arch-stubs.c $(CONFIG_H) board/$(BOARD)/board.mk
	@mkdir -p $(dir $@)
	@echo "  CC      $< (Capstone: $(BOARD_CAPSTONE_ARCHS) only)"
	$(Q)$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) $(foreach a,$(BOARD_CAPSTONE_ARCHS),-DCAPSTONE_KEEP_$(a)) -c $< -o $@
$(AGENT_BIN): $(CAPSTONE_STUBS_O)
endif
endif

# C library of the agent (board.mk: BOARD_LIBC, default glibc). musl: the agent, libcommon
# and the board's unit suites are compiled and linked with musl's specs file (musl-dev:<arch>,
# Debian's cross gcc), the cross libraries stay Debian's glibc-built static ones;
# board/musl-compat.c gives them the few glibc entry points musl lacks (__*_chk, fcntl64,
# rawmemchr); the force-included board/musl-glibc.h gives every file glibc's __WORDSIZE.
# The OpenCL layer/shim libraries run inside the profiled app: glibc.
# musl has no dlopen in static programs: `agent calibrate` and --features then report OpenCL
# unavailable (board/README.md). BOARD_LIBC=glibc on the command line builds the glibc agent.
ifneq ($(CROSS_COMPILE),)
# The C library chosen last in this build directory: switching rebuilds every object.
BOARD_LIBC_STAMP := $(O)/board-libc
$(shell mkdir -p $(O) && { [ "$$(cat $(BOARD_LIBC_STAMP) 2>/dev/null)" = "$(or $(BOARD_LIBC),glibc)" ] || echo "$(or $(BOARD_LIBC),glibc)" >$(BOARD_LIBC_STAMP); })
$(CONFIG_H): $(BOARD_LIBC_STAMP)
endif
ifeq ($(BOARD_LIBC),musl)
ifneq ($(CROSS_COMPILE),)
BOARD_GNU_TRIPLET := $(patsubst %-,%,$(CROSS_COMPILE))
BOARD_MUSL_SPECS := /usr/lib/$(subst -gnu,-musl,$(BOARD_GNU_TRIPLET))/musl-gcc.specs
MUSL_SYSROOT := $(O)/musl
MUSL_COMPAT_O := $(O)/obj/board/musl-compat.o
ALL_CPPFLAGS += -specs=$(BOARD_MUSL_SPECS) -isystem $(MUSL_SYSROOT)/inc -include board/musl-glibc.h
AGENT_LDFLAGS += -specs=$(BOARD_MUSL_SPECS) -L$(MUSL_SYSROOT)/lib
# Unit suites: dynamic, musl's loader; glibc-built libcmocka.so is loaded through the rpath
# (musl maps its libc.so.6 dependency to itself; the link does not check libcmocka against
# glibc symbol versions); -rdynamic exports the compat functions to it.
BOARD_XTEST_LDFLAGS := -specs=$(BOARD_MUSL_SPECS) -L$(MUSL_SYSROOT)/lib \
	-Wl,-rpath,$(abspath $(MUSL_SYSROOT)/lib) -Wl,--allow-shlib-undefined -rdynamic
BOARD_XTEST_OBJ := $(MUSL_COMPAT_O)
$(MUSL_SYSROOT)/.stamp: scripts/board-musl.sh board/$(BOARD)/board.mk
	@test -r $(BOARD_MUSL_SPECS) || { echo "board $(BOARD): no $(BOARD_MUSL_SPECS) (make deps BOARD=$(BOARD))"; exit 1; }
	$(Q)scripts/board-musl.sh $(BOARD_GNU_TRIPLET) $(MUSL_SYSROOT)
	@touch $@
# Every object depends on the config header: the sysroot is there before any compile.
$(CONFIG_H): $(MUSL_SYSROOT)/.stamp
$(MUSL_COMPAT_O): board/musl-compat.c $(CONFIG_H)
	@mkdir -p $(dir $@)
	@echo "  CC      $< (musl)"
	$(Q)$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -c $< -o $@
$(AGENT_BIN): $(MUSL_COMPAT_O)
endif
endif

# ---------------------------------------------------------------- twin boards (issue 43)
# A build-only board (arndale-octa) and the emulated board that stands for it (qemu-virt-armhf)
# compile the same sources with the same cross compiler, flags and configuration but for
# CONFIG_BOARD_NAME: make check built every object twice (~50 s of CPU a board). With
# BOARD_TWIN_O=build/<twin> (board-check-all, after the twin's build), the objects of libcommon,
# libagent and the agent's main that do not use CONFIG_BOARD_NAME are copied from the twin when
# both builds' signatures (compiler version and target, every compile flag with the build
# directory masked, the objects built with the __int128 stand-in, the .config less
# CONFIG_BOARD_NAME and comments) are equal; the files that name the board, the capture
# libraries, the musl sysroot and the link are this board's own. Any difference: a full build.
# (A copied object's debug info names the twin's generated headers.)
ifneq ($(CROSS_COMPILE),)
BOARD_OBJ_SIGNATURE_FILE := $(O)/obj-signature
BOARD_NAME_SRC := $(shell grep -rl --include='*.c' CONFIG_BOARD_NAME agent common proto collector 2>/dev/null)
BOARD_NAME_HDR := $(shell grep -rl --include='*.h' CONFIG_BOARD_NAME agent common proto collector 2>/dev/null)
BOARD_OBJ_SIGNATURE = $(shell $(CC) -dumpmachine) $(shell $(CC) -dumpfullversion) \
	$(subst $(O)/,@O@/,$(ALL_CFLAGS) $(ALL_CPPFLAGS)) int128:$(BOARD_INT128_SRC) \
	config:$(shell grep -v -e '^CONFIG_BOARD_NAME=' -e '^\#' -e '^$$' $(O)/.config 2>/dev/null | sort | md5sum | cut -c1-32)
# written by `all` (the build the twin's objects come from), read by the twin's build
# (board-check-all orders them); rewritten only when it changes
EXTRA_TARGETS += $(BOARD_OBJ_SIGNATURE_FILE)
.PHONY: board-obj-signature-force
$(BOARD_OBJ_SIGNATURE_FILE): board-obj-signature-force
	$(Q)[ "$$(cat $@ 2>/dev/null)" = '$(strip $(BOARD_OBJ_SIGNATURE))' ] || echo '$(strip $(BOARD_OBJ_SIGNATURE))' >$@
ifneq ($(BOARD_TWIN_O),)
ifeq ($(BOARD_NAME_HDR),)
ifeq ($(shell cat $(BOARD_TWIN_O)/obj-signature 2>/dev/null),$(strip $(BOARD_OBJ_SIGNATURE)))
BOARD_TWIN_USE := y
endif
endif
ifneq ($(BOARD_TWIN_USE),y)
ifneq ($(wildcard $(O)/.config),)
BOARD_TWIN_WHY := compiler or flags or configuration differ from $(BOARD_TWIN_O)/obj-signature
$(info board $(BOARD): $(BOARD_TWIN_O)'s objects not used: $(if $(BOARD_NAME_HDR),$(BOARD_NAME_HDR) name the board,$(BOARD_TWIN_WHY)))
endif
endif
endif
endif
# (evaluated by the Makefile after every mk/*.mk has added its objects; generated sources other
# than protobuf's have rules of their own, pmu_events_embedded.o: built here)
define BOARD_TWIN_RULES
ifeq ($(BOARD_TWIN_USE),y)
BOARD_TWIN_OBJ := $$(filter-out $$(call obj,$$(BOARD_NAME_SRC)) $$(filter-out %.pb-c.o,$$(filter $$(O)/obj/gen/%,$$(AGENT_OBJ) $$(COMMON_OBJ))),\
	$$(COMMON_OBJ) $$(AGENT_OBJ) $$(O)/obj/agent/main.o)
$$(BOARD_TWIN_OBJ): $$(O)/obj/%: $$(BOARD_TWIN_O)/obj/%
	@mkdir -p $$(dir $$@)
	$$(Q)cp $$< $$@
endif
endef

board-size: $(AGENT_STRIPPED)
	@s=$$(stat -c %s $<); \
	 if [ "$(CONFIG_STATIC)" = y ] && $(READELF) -l $< | grep -q 'program interpreter'; then \
	   echo "board-size: FAIL: CONFIG_STATIC=y but $< is dynamically linked"; exit 1; fi; \
	 if [ $$s -gt $(BOARD_SIZE_MAX) ]; then \
	   echo "board-size: FAIL: $(BOARD) agent is $$s bytes stripped, over $(BOARD_SIZE_MAX)"; exit 1; fi; \
	 if [ $$s -gt $(BOARD_SIZE_TARGET) ]; then \
	   echo "board-size: $(BOARD): $$s bytes stripped: over the $(BOARD_SIZE_TARGET) target by $$((s - $(BOARD_SIZE_TARGET))), under this board's cap $(BOARD_SIZE_MAX)"; \
	 else echo "board-size: $(BOARD) ok: $$s bytes stripped <= $(BOARD_SIZE_TARGET)"; fi
	$(if $(BOARD_INT128_WARNING),@echo "$(BOARD_INT128_WARNING)")

# ---------------------------------------------------------------- guest kernel (and its BTF)
BOARD_KERNEL_PKG := $(or $(QEMU_KERNEL_PKG),$(BOARD_BTF_KERNEL_PKG))
ifneq ($(BOARD_KERNEL_PKG),)
$(O)/kernel/.stamp: board/$(BOARD)/board.mk scripts/board-fetch.sh
	$(Q)scripts/board-fetch.sh kernel $(BOARD_DEB_ARCH) $(BOARD_KERNEL_PKG) $(O)/kernel
	@touch $@
$(O)/kernel/vmlinux.btf: $(O)/kernel/.stamp
	@test -s $@ || { echo "board: $(BOARD_KERNEL_PKG) ($(BOARD_DEB_ARCH)) has no BTF"; exit 1; }
# The BPF programs' vmlinux.h (mk/bpf.mk) from that kernel's BTF, when the board uses it.
ifeq ($(BPF_VMLINUX_BTF),$(O)/kernel/vmlinux.btf)
$(GEN)/vmlinux.h: $(O)/kernel/vmlinux.btf
endif
endif

# ---------------------------------------------------------------- unit suites under qemu-user
ifneq ($(BOARD_QEMU_USER),)
BOARD_UNIT_BINS := $(patsubst %,$(O)/xtests/test_%,$(filter $(BOARD_UNIT_TESTS),$(patsubst tests/unit/test_%.c,%,$(UNIT_SRC))))

# Linked dynamically against the multiarch libraries (Debian has no static libcmocka);
# with BOARD_LIBC=musl against musl (see above), the cross libraries static.
$(O)/xtests/%: $(O)/obj/tests/unit/%.o $(LIBAGENT) $(LIBCOMMON) $(BOARD_XTEST_OBJ)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS_BASE) $(BOARD_XTEST_LDFLAGS) $(LDFLAGS) -o $@ $^ -lcmocka $(AGENT_LIBS) -lm

# test_gpu runs the agent's Mali code on the fake kbase device, linked in (no LD_PRELOAD: static-friendly).
$(O)/xtests/test_gpu: $(FAKE_KBASE_OBJ)

board-unit: $(BOARD_UNIT_BINS)
	$(Q)scripts/board-unit.sh $(BOARD_QEMU_USER) $(BOARD_UNIT_BINS)
else
board-unit:
	@echo "board-unit: $(BOARD) is not a cross board (no BOARD_QEMU_USER): nothing to run"
endif

# ---------------------------------------------------------------- emulated board test
ifneq ($(QEMU_SYSTEM),)
GUEST := $(O)/guest

$(GUEST)/busybox: scripts/board-fetch.sh
	$(Q)scripts/board-fetch.sh busybox $(BOARD_DEB_ARCH) $(GUEST)
	@touch $@

$(GUEST)/busy: tests/workloads/busy.c tests/workloads/wl_clock.h
	@mkdir -p $(dir $@)
	@echo "  LD      $@ (static)"
	$(Q)$(CC) $(ALL_CFLAGS) -s -static -pthread -o $@ $<

# The Mali counters on the booted board: a test-only static agent whose own open/ioctl/mmap/
# close calls go to the fake kbase device (tests/fake_kbase/wrap.c, linked with --wrap; LD_PRELOAD
# cannot reach a static binary), serving a T628 MP6 from tests/fake_kbase/guest.script.
ifeq ($(CONFIG_AGENT_MALI),y)
FAKEGPU_AGENT := $(GUEST)/agent-fakegpu
FAKEGPU_WRAP := open open64 ioctl mmap mmap64 munmap close
$(FAKEGPU_AGENT): $(O)/obj/agent/main.o $(O)/obj/tests/fake_kbase/wrap.o $(FAKE_KBASE_OBJ) \
		  $(LIBAGENT) $(AGENT_ARCHIVES) $(LIBCOMMON) $(filter %.o,$(CAPSTONE_STUBS_O) $(MUSL_COMPAT_O))
	@mkdir -p $(dir $@)
	@echo "  LD      $@ (static, fake Mali device)"
	$(Q)$(CC) $(LDFLAGS_BASE) $(AGENT_LDFLAGS) $(LDFLAGS) $(foreach f,$(FAKEGPU_WRAP),-Wl,--wrap=$(f)) -o $@ $^ \
		$(AGENT_LIBS) -lm
	$(Q)$(STRIP) $@
endif

# ---- issue 30 (hardware counters in the guest): the loop of known length, /bin/pmu_loop
$(GUEST)/pmu_loop: tests/workloads/pmu_loop.c tests/workloads/wl_clock.h
	@mkdir -p $(dir $@)
	@echo "  LD      $@ (static)"
	$(Q)$(CC) $(ALL_CFLAGS) -s -static -o $@ $<
# The Linux 3.4 personality (tests/linux34/) in the armhf guest, /bin/linux34: the Arndale's
# own architecture (its syscall table, tests/lib/linux34.c); the guest's 6.1 kernel has
# seccomp user notification. Not for arm64 (3.4 had no arm64).
ifeq ($(BOARD_DEB_ARCH),armhf)
GUEST_LINUX34 := $(GUEST)/linux34
$(GUEST)/linux34: tests/linux34/linux34.c tests/lib/linux34.c tests/lib/linux34.h
	@mkdir -p $(dir $@)
	@echo "  LD      $@ (static)"
	$(Q)$(CC) $(ALL_CFLAGS) -Itests/lib -s -static -o $@ tests/linux34/linux34.c tests/lib/linux34.c
endif
# ---- end issue 30
# ---- issue 36: the trace snapshot (agent/trace/snapshot*.c) in the guest's kernel, /bin/snapshot_check
# (tests/board/snapshot_check.c): the agent's own snapshot and page-server code, linked into a static
# test program (glibc, as pmu_loop; Debian's cross libprotobuf-c.a)
SNAPSHOT_CHECK_SRC := tests/board/snapshot_check.c agent/trace/snapshot_arm.c agent/trace/snapshot_common.c \
	agent/trace/snapshot_serve.c proto/validate_snapshot.c common/fail.c common/net.c $(GEN)/snapshot.pb-c.c
$(GUEST)/snapshot_check: $(SNAPSHOT_CHECK_SRC) agent/trace/snapshot.h agent/trace/snapshot_priv.h \
			 agent/trace/snapshot_serve.h proto/validate_snapshot.h $(CONFIG_H)
	@mkdir -p $(dir $@)
	@echo "  LD      $@ (static)"
	$(Q)$(CC) $(ALL_CFLAGS) -I$(O)/include -I$(GEN) -Iproto -Icommon -Iagent -s -static -o $@ $(SNAPSHOT_CHECK_SRC) \
		-lprotobuf-c

# ---- issue 36: the sample kernels whose windows board-accuracy.sh compares with full traces
# (mk/board-accuracy.mk): static, built as $(O)/xkernels/<arch>/ are (XK_CFLAGS; Thumb-2 on armhf)
GUEST_ACC := $(addprefix $(GUEST)/acc/,chase hash qsort)
$(GUEST)/acc/%: tools/qemu-plugin/kernels/%.c tools/qemu-plugin/kernels/kernel.h tools/qemu-plugin/kernels/sattolo.h
	@mkdir -p $(dir $@)
	@echo "  XCC     $@"
	$(Q)$(CC) $(XK_CFLAGS) -o $@ $<

$(GUEST)/initramfs.cpio.gz: $(AGENT_STRIPPED) $(GUEST)/busy $(GUEST)/busybox $(O)/kernel/.stamp $(FAKEGPU_AGENT) \
			    $(GUEST)/pmu_loop $(GUEST_LINUX34) $(GUEST)/snapshot_check $(GUEST_ACC) scripts/board-guest-accuracy.sh \
			    scripts/board-initramfs.sh scripts/board-guest-init.sh tests/fake_kbase/guest.script \
			    tests/fake_kbase/guest-t6xx.script
	@echo "  CPIO    $@"
	$(Q)PMU_LOOP=$(GUEST)/pmu_loop LINUX34=$(GUEST_LINUX34) SNAPSHOT_CHECK=$(GUEST)/snapshot_check ACC_DIR=$(GUEST)/acc scripts/board-initramfs.sh $@ $(GUEST)/busybox $(AGENT_STRIPPED) $(GUEST)/busy $(O)/kernel/modules \
		$(if $(FAKEGPU_AGENT),$(FAKEGPU_AGENT) tests/fake_kbase/guest.script tests/fake_kbase/guest-t6xx.script)

board-guest: $(GUEST)/initramfs.cpio.gz

board-test: board-guest
	$(Q)$(MAKE) -s --no-print-directory BOARD=host O=build/host DEFCONFIG=configs/host_defconfig SAN= $(HOST_COLLECTOR) \
	  build/host/board-accuracy/trace_truth build/host/qemu-plugin/edag_tracer.so
	$(Q)BOARD=$(BOARD) OUT=$(O) COLLECTOR=$(HOST_COLLECTOR) QEMU_SYSTEM=$(QEMU_SYSTEM) \
	  QEMU_MACHINE=$(QEMU_MACHINE) QEMU_CPU=$(QEMU_CPU) QEMU_MEM=$(QEMU_MEM) QEMU_CONSOLE=$(QEMU_CONSOLE) BOARD_BPF=$(CONFIG_AGENT_BPF) \
	  BOARD_TEST_TIMEOUT=$(BOARD_TEST_TIMEOUT) BOARD_TEST_SECONDS=$(BOARD_TEST_SECONDS) \
	  QEMU_ICOUNT="$(QEMU_ICOUNT)" QEMU_PMU_DT="$(QEMU_PMU_DT)" QEMU_PMU_EXTRA_CPU="$(QEMU_PMU_EXTRA_CPU)" \
	  scripts/board-test.sh
else
board-test:
	@echo "board-test: $(BOARD) is not an emulated board; try BOARD=qemu-virt-arm64 or BOARD=qemu-virt-armhf"
	@exit 2
endif

# ---------------------------------------------------------------- OpenCL on a glibc board (issue 35)
# Debian's PoCL + clinfo of the board's architecture under qemu-user: the static agent's
# helper, the capture libraries bound to GLIBC_$(BOARD_GLIBC_MAX) (scripts/board-opencl.sh).
ifneq ($(BOARD_GLIBC_MAX)$(BOARD_QEMU_USER),)
BOARD_OPENCL := $(if $(and $(BOARD_GLIBC_MAX),$(BOARD_QEMU_USER),$(filter y,$(CONFIG_AGENT_OPENCL))),board-opencl)
endif
board-opencl: $(AGENT_STRIPPED) $(addprefix $(O)/lib/,libprofcl_layer.so libprofcl_preload.so prof-clhelper)
	$(Q)OUT=$(O) DEB_ARCH=$(BOARD_DEB_ARCH) QEMU_USER=$(BOARD_QEMU_USER) TRIPLET=$(patsubst %-,%,$(CROSS_COMPILE)) GLIBC_MAX=$(BOARD_GLIBC_MAX) \
	  OPENCL_SKIP=$(BOARD_OPENCL_SKIP) scripts/board-opencl.sh

# ---------------------------------------------------------------- per board and all boards
board-check: deps
	@echo "== board $(BOARD): -Werror build, size$(if $(BOARD_QEMU_USER), + unit suites under $(BOARD_QEMU_USER))$(if $(BOARD_OPENCL), + OpenCL under $(BOARD_QEMU_USER))$(if $(QEMU_SYSTEM), + emulated board test) =="
	$(Q)$(MAKE) --no-print-directory WERROR=1 all board-size
	$(if $(BOARD_QEMU_USER),$(Q)$(MAKE) --no-print-directory WERROR=1 board-unit)
	$(if $(BOARD_OPENCL),$(Q)$(MAKE) --no-print-directory WERROR=1 board-opencl)
	$(if $(QEMU_SYSTEM),$(Q)$(MAKE) --no-print-directory WERROR=1 board-test)

# Real boards: deps, -Werror build and size; emulated boards: the whole board-check.
# The boards are independent (each its own O=build/<board>): under `make -jN board-check-all`
# they run side by side, sharing the N job slots, so one board's single-threaded steps (qemu-user
# suites, the emulated calibrate, the QEMU boot) overlap another's compiles (issue 43; before,
# one board after the other left a core idle through each of those). First, one after the
# other: every board's deps (apt must not run twice at once) and the host collector that
# board-test and board-opencl use. -Otarget (scripts/board-check.sh) keeps each step's lines
# together. A failed board still fails the whole (make stops starting new ones).
BOARD_CHECK_OVERRIDES = O=build/$(1) DEFCONFIG=configs/$(1)_defconfig SAN=
BOARD_ALL_BOARDS := $(BOARD_CHECK_BOARDS) $(BOARD_BUILD_BOARDS)
board-check-all: $(addprefix board-check-one-,$(BOARD_ALL_BOARDS))
board-check-prep:
	$(Q)$(foreach b,$(BOARD_ALL_BOARDS),$(MAKE) --no-print-directory BOARD=$(b) $(call BOARD_CHECK_OVERRIDES,$(b)) deps &&) true
	$(Q)$(MAKE) -s --no-print-directory BOARD=host O=build/host DEFCONFIG=configs/host_defconfig SAN= $(HOST_COLLECTOR) \
	  build/host/board-accuracy/trace_truth build/host/qemu-plugin/edag_tracer.so
# Twins (issue 43): a build-only board takes the objects it shares with the emulated board that
# stands for it from that board's build (BOARD_TWIN_O above), so it starts once that build is
# done; the emulated board's board-check then finds its build done. BOARD_TWINS=BUILD:CHECK ...
BOARD_TWINS ?= arndale-octa:qemu-virt-armhf android-arm64:qemu-virt-arm64
# the board checked in BOARD_CHECK_BOARDS that stands for build-only board $(1), if any
board_twin = $(filter $(BOARD_CHECK_BOARDS),$(firstword $(foreach t,$(BOARD_TWINS),$(if $(filter $(1):%,$(t)),$(lastword $(subst :, ,$(t)))))))
$(addprefix board-build-,$(BOARD_CHECK_BOARDS)): board-build-%: board-check-prep
	$(Q)$(MAKE) --no-print-directory BOARD=$* $(call BOARD_CHECK_OVERRIDES,$*) WERROR=1 all
$(addprefix board-check-one-,$(BOARD_BUILD_BOARDS)): board-check-one-%: board-check-prep
	$(Q)$(MAKE) --no-print-directory BOARD=$* $(call BOARD_CHECK_OVERRIDES,$*) WERROR=1 \
		$(if $(call board_twin,$*),BOARD_TWIN_O=build/$(call board_twin,$*)) all board-size
$(foreach b,$(BOARD_BUILD_BOARDS),$(if $(call board_twin,$(b)),$(eval board-check-one-$(b): board-build-$(call board_twin,$(b)))))
$(addprefix board-check-one-,$(BOARD_CHECK_BOARDS)): board-check-one-%: board-build-%
	$(Q)$(MAKE) --no-print-directory BOARD=$* $(call BOARD_CHECK_OVERRIDES,$*) board-check
.PHONY: board-check-prep $(addprefix board-check-one-,$(BOARD_ALL_BOARDS)) $(addprefix board-build-,$(BOARD_CHECK_BOARDS))

# `make check` (host): all boards, after the host build (EXTRA_CHECK entries are single words).
ifeq ($(BOARD),host)
ifneq ($(BOARD_CHECK),0)
EXTRA_CHECK += scripts/board-check.sh
endif
endif
