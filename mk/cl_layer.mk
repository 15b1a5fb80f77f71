# OpenCL capture library (issue #4): agent/cl_layer/layer/*.c plus the
# message codec and state slots shared with the agent (agent/cl_layer/cl_msg.c,
# cl_state.c), built twice:
#   $(O)/lib/libprofcl_layer.so    ICD loader layer (OPENCL_LAYERS=...)
#   $(O)/lib/libprofcl_preload.so  LD_PRELOAD shim (app linked to the vendor library),
#                                  with the dlopen interposition (dlopen.c)
#   $(O)/lib/libprofcl_bridge.so   what the shim returns for the program's dlopen("libOpenCL.so*"):
#                                  no code, NEEDED libprofcl_preload.so then libOpenCL.so.1
# The layer directory is one level below agent/*/*.c, so the agent's glob
# does not pick it up. The libraries run inside the profiled app, which is
# not built with sanitizers: they are always compiled without SAN flags
# (a sanitizer runtime cannot be loaded into an uninstrumented process).
ifeq ($(CONFIG_AGENT_OPENCL),y)

CL_LAYER_DIR := agent/cl_layer/layer
CL_LAYER_COMMON := $(addprefix $(CL_LAYER_DIR)/,base.c state.c runtime.c tables.c kernels.c track.c send.c ring.c \
	intercept_objects.c intercept_enqueue.c intercept_info.c \
	intercept_images.c intercept_rect.c intercept_marks.c intercept_svm.c) agent/cl_layer/cl_msg.c agent/cl_layer/cl_state.c
CL_LAYER_SO := $(O)/lib/libprofcl_layer.so
CL_PRELOAD_SO := $(O)/lib/libprofcl_preload.so
CL_BRIDGE_SO := $(O)/lib/libprofcl_bridge.so
CL_PIC_CFLAGS := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wno-unused-parameter -g -O2 -fPIC \
	-fvisibility=hidden -fno-omit-frame-pointer $(if $(WERROR),-Werror) $(BOARD_CFLAGS)
cl_pic_obj = $(patsubst %.c,$(O)/obj-pic/%.o,$(1))
CL_LINK_LIBS := -lpthread -ldl
CL_HELPER_LIBM := -lm
CL_CHECK = @:

# glibc boards (board.mk: BOARD_GLIBC_MAX, e.g. 2.17 for the Arndale's Linux 3.4-era userland):
# every object binds only symbol versions that glibc has (a generated header of .symver
# directives from the cross libc.so.6, forced in with -include; scripts/glibc-symver.sh), the
# libraries name libpthread.so.0 and libdl.so.2 (where those calls lived before glibc 2.34),
# and each link is checked: a library needing a newer version fails the build
# (scripts/glibc-check.sh). The shim's own dlopen is left out (it defines it).
ifneq ($(BOARD_GLIBC_MAX),)
CL_GLIBC_SYMVER_H := $(O)/glibc-symver.h
CL_GLIBC_LIBC := $(shell $(CC) -print-file-name=libc.so.6)
# the helper's calibration benchmarks use libm (exp, log, pow have GLIBC_2.29 defaults)
CL_GLIBC_LIBM := $(shell $(CC) -print-file-name=libm.so.6)
$(CL_GLIBC_SYMVER_H): scripts/glibc-symver.sh board/$(BOARD)/board.mk
	@mkdir -p $(dir $@)
	@echo "  GEN     $@ (GLIBC_$(BOARD_GLIBC_MAX) or older)"
	$(Q)scripts/glibc-symver.sh $(CROSS_COMPILE)objdump $(CL_GLIBC_LIBC) $(BOARD_GLIBC_MAX) $(CL_GLIBC_LIBM) \
		>$@.tmp && mv $@.tmp $@
CL_PIC_CFLAGS += -include $(CL_GLIBC_SYMVER_H)
# the shim defines dlopen itself: its file keeps the unversioned name
$(O)/obj-pic/agent/cl_layer/layer/dlopen.o: CL_PIC_CFLAGS += -DPROF_SYMVER_KEEP_dlopen
# the helper's own entry (glibc's crt1.o calls __libc_start_main@GLIBC_2.34)
CL_HELPER_START := agent/cl_layer/helper/start.c
CL_HELPER_LDFLAGS := -nostartfiles -no-pie
CL_LINK_LIBS := -Wl,--push-state,--no-as-needed -l:libpthread.so.0 -l:libdl.so.2 -Wl,--pop-state
CL_HELPER_LIBM := -l:libm.so.6
CL_CHECK = $(Q)scripts/glibc-check.sh $(CROSS_COMPILE)readelf $(BOARD_GLIBC_MAX) $@ || { rm -f $@; exit 1; }
endif

$(O)/obj-pic/%.o: %.c $(CL_GLIBC_SYMVER_H)
	@mkdir -p $(dir $@)
	@echo "  CC [pic] $<"
	$(Q)$(CC) -MMD -MP $(CL_PIC_CFLAGS) -c $< -o $@

$(CL_LAYER_SO): $(call cl_pic_obj,$(CL_LAYER_COMMON) $(CL_LAYER_DIR)/entry_layer.c)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) -shared -Wl,--no-undefined -Wl,-soname,$(notdir $@) -o $@ $^ $(CL_LINK_LIBS)
	$(CL_CHECK)

$(CL_PRELOAD_SO): $(call cl_pic_obj,$(CL_LAYER_COMMON) $(CL_LAYER_DIR)/entry_preload.c $(CL_LAYER_DIR)/dlopen.c)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) -shared -Wl,--no-undefined -Wl,-soname,$(notdir $@) -o $@ $^ $(CL_LINK_LIBS)
	$(CL_CHECK)

# Its dependencies' order is the point: the shim first, libOpenCL.so.1 after.
$(CL_BRIDGE_SO): $(call cl_pic_obj,$(CL_LAYER_DIR)/bridge.c) $(CL_PRELOAD_SO)
	@echo "  LD      $@"
	$(Q)$(CC) -shared -Wl,-soname,$(notdir $@) -Wl,--no-as-needed -o $@ $< $(CL_PRELOAD_SO) -l:libOpenCL.so.1
	$(CL_CHECK)

# The OpenCL helper of static musl agents (agent/cl_layer/helper/main.c): the agent's own
# discovery code and its calibration benchmarks (agent/calib/, common/calib/: `prof-clhelper
# calibrate`), built like the libraries for the board's C library, dynamically linked.
CL_HELPER := $(O)/lib/prof-clhelper
# every board's helper, the host's included, calls only what bionic has (scripts/bionic-names-check.sh):
# its sources are also the Android helper's (bionic-libs below), which needs a bionic tree to build
CL_HELPER_BIONIC_API := board/android-arm64/bionic-api.txt
CL_HELPER_SRC := agent/cl_layer/helper/main.c agent/opencl_discover.c agent/opencl_helper.c \
	$(filter-out agent/calib/calib_record.c,$(wildcard agent/calib/*.c)) $(wildcard common/calib/*.c) \
	common/log.c common/net.c common/json.c
$(CL_HELPER): $(CL_HELPER_SRC) $(wildcard agent/calib/*.h common/calib/*.h) agent/opencl_probe.h $(CONFIG_H) \
		$(PROTO_H) $(CL_GLIBC_SYMVER_H) $(CL_HELPER_START) $(CL_HELPER_BIONIC_API) scripts/bionic-names-check.sh
	@mkdir -p $(dir $@)
	@echo "  LD      $@ (OpenCL helper)"
	$(Q)$(CC) $(filter-out -fvisibility=hidden -fPIC,$(CL_PIC_CFLAGS)) -ffp-contract=fast -ffunction-sections -Wl,--gc-sections \
		-I$(O)/include -I$(GEN) \
		-Iproto -Icommon -Iagent $(CL_HELPER_LDFLAGS) -o $@ $(CL_HELPER_START) $(CL_HELPER_SRC) $(CL_LINK_LIBS) \
		$(CL_HELPER_LIBM)
	$(CL_CHECK)
	$(Q)scripts/bionic-names-check.sh $(CROSS_COMPILE)readelf $(CL_HELPER_BIONIC_API) $@ || { rm -f $@; exit 1; }

EXTRA_TARGETS += $(CL_LAYER_SO) $(CL_PRELOAD_SO) $(CL_BRIDGE_SO) $(CL_HELPER)

# Android (board.mk: BOARD_BIONIC_API, _ARCH, _TARGET): the capture libraries for bionic apps,
# built with clang against bionic's headers and a stub sysroot of its public API
# (scripts/bionic-stubs.sh), no NDK (Debian packages none) and no glibc crt files
# (layer/bionic_crt.c gives atexit and __dso_handle), checked by scripts/bionic-check.sh. Needs
# an Android bionic tree: make BOARD=android-arm64 BIONIC_SRC=DIR bionic-libs
# (git clone -b android-14.0.0_r1 https://android.googlesource.com/platform/bionic DIR).
ifneq ($(BOARD_BIONIC_API),)
BIONIC_O := $(O)/bionic
BIONIC_LIB := $(O)/lib-bionic
BIONIC_CFLAGS = --target=$(BOARD_BIONIC_TARGET)$(BOARD_BIONIC_API) -fno-emulated-tls -nostdinc \
	-isystem $(shell clang -print-resource-dir)/include -isystem $(BIONIC_SRC)/libc/include \
	-isystem $(BIONIC_SRC)/libc/kernel/uapi -isystem $(BIONIC_SRC)/libc/kernel/uapi/asm-$(BOARD_BIONIC_ARCH) \
	-isystem $(BIONIC_SRC)/libc/kernel/android/uapi -isystem $(BIONIC_O)/cl -std=c11 -D_GNU_SOURCE -fPIC -O2 -g \
	-Wall -Wextra -Wno-unused-parameter -fvisibility=hidden $(if $(WERROR),-Werror)
BIONIC_LDFLAGS := -shared --no-undefined -z noexecstack --hash-style=both -z max-page-size=16384
bionic_obj = $(patsubst %.c,$(BIONIC_O)/obj/%.o,$(1))
BIONIC_COMMON := $(CL_LAYER_COMMON) $(CL_LAYER_DIR)/bionic_crt.c
$(BIONIC_O)/stubs/.stamp: scripts/bionic-stubs.sh scripts/bionic-symbols.sh board/$(BOARD)/board.mk mk/cl_layer.mk
	@test -f "$(BIONIC_SRC)/libc/libc.map.txt" || { echo "bionic-libs: set BIONIC_SRC to an Android bionic tree"; exit 1; }
	@echo "  STUBS   $(BIONIC_O)/stubs (bionic API $(BOARD_BIONIC_API), $(BOARD_BIONIC_ARCH))"
	$(Q)scripts/bionic-stubs.sh $(BOARD_BIONIC_TARGET)$(BOARD_BIONIC_API) $(BOARD_BIONIC_ARCH) $(BOARD_BIONIC_API) \
		$(BIONIC_SRC) $(BIONIC_O)/stubs $(CROSS_COMPILE)ld
	$(Q)[ "$(BOARD_BIONIC_API)$(BOARD_BIONIC_ARCH)" != 29arm64 ] || cmp -s $(BIONIC_O)/stubs/api.txt $(CL_HELPER_BIONIC_API) || \
		echo "bionic-libs: note: this tree's API list differs from $(CL_HELPER_BIONIC_API) (the helper's check in every build): diff them"
	$(Q)mkdir -p $(BIONIC_O)/cl && ln -sfn /usr/include/CL $(BIONIC_O)/cl/CL && \
		ln -sfn /usr/include/protobuf-c $(BIONIC_O)/cl/protobuf-c
	@touch $@
BIONIC_INC := -Iagent -Iagent/cl_layer -I$(O)/include
$(BIONIC_O)/obj/%.o: %.c $(BIONIC_O)/stubs/.stamp $(CONFIG_H)
	@mkdir -p $(dir $@)
	@echo "  CC [bionic] $<"
	$(Q)clang -MMD -MP $(BIONIC_CFLAGS) $(BIONIC_INC) -c $< -o $@
BIONIC_CHECK = $(Q)scripts/bionic-check.sh $(CROSS_COMPILE)readelf $(BOARD_BIONIC_API) $(BIONIC_O)/stubs/api.txt $@ || \
	{ rm -f $@; exit 1; }
$(BIONIC_LIB)/libprofcl_layer.so: $(call bionic_obj,$(BIONIC_COMMON) $(CL_LAYER_DIR)/entry_layer.c)
	@mkdir -p $(dir $@)
	@echo "  LD      $@ (bionic)"
	$(Q)$(CROSS_COMPILE)ld $(BIONIC_LDFLAGS) -soname $(notdir $@) -o $@ $^ $(BIONIC_O)/stubs/libc.so $(BIONIC_O)/stubs/libdl.so
	$(BIONIC_CHECK)
$(BIONIC_LIB)/libprofcl_preload.so: $(call bionic_obj,$(BIONIC_COMMON) $(CL_LAYER_DIR)/entry_preload.c $(CL_LAYER_DIR)/dlopen.c)
	@mkdir -p $(dir $@)
	@echo "  LD      $@ (bionic)"
	$(Q)$(CROSS_COMPILE)ld $(BIONIC_LDFLAGS) -soname $(notdir $@) -o $@ $^ $(BIONIC_O)/stubs/libc.so $(BIONIC_O)/stubs/libdl.so
	$(BIONIC_CHECK)
# The OpenCL helper for Android (the static agent executes it like on glibc boards): the same
# sources as $(CL_HELPER), a PIE with bionic's linker as interpreter, its own _start
# (helper/start_bionic.c: what bionic's crtbegin.c does), the same check.
BIONIC_HELPER_SRC := $(CL_HELPER_SRC) agent/cl_layer/helper/start_bionic.c
BIONIC_LINKER := /system/bin/linker$(if $(filter arm64 x86_64 riscv64,$(BOARD_BIONIC_ARCH)),64)
BIONIC_LAYOUT := agent/cl_layer/helper/layout.c
$(call bionic_obj,$(BIONIC_HELPER_SRC) $(BIONIC_LAYOUT)): BIONIC_INC := -I$(O)/include -I$(GEN) -Iproto -Icommon \
	-Iagent -ffp-contract=fast -ffunction-sections -fdata-sections
$(call bionic_obj,$(BIONIC_HELPER_SRC) $(BIONIC_LAYOUT)): $(PROTO_H)
# the raw structs of the pipe: the same bytes from the agent's compiler (its own flags, the
# Makefile's $(O)/obj rule) and from the helper's (helper/layout.c)
$(BIONIC_O)/layout.ok: $(O)/obj/$(BIONIC_LAYOUT:.c=.o) $(call bionic_obj,$(BIONIC_LAYOUT))
	$(Q)for o in $^; do $(CROSS_COMPILE)objcopy -O binary -j .rodata.helper_layout -j .rodata $$o $$o.bin; done
	$(Q)test -s $<.bin && cmp $(addsuffix .bin,$^) || { echo "bionic-libs: FAIL: the static agent and the bionic" \
		"helper lay out the pipe's structs differently (agent/cl_layer/helper/layout.c)"; exit 1; }
	@echo "  LAYOUT  agent and bionic helper agree ($$(stat -c %s $<.bin) bytes of sizes and offsets)"
	@touch $@
$(BIONIC_LIB)/prof-clhelper: $(call bionic_obj,$(BIONIC_HELPER_SRC))
	@mkdir -p $(dir $@)
	@echo "  LD      $@ (bionic, OpenCL helper)"
	$(Q)$(CROSS_COMPILE)ld -pie -dynamic-linker $(BIONIC_LINKER) --no-undefined --gc-sections -z now -z relro \
		-z noexecstack --hash-style=both -z max-page-size=16384 -o $@ $^ \
		$(addprefix $(BIONIC_O)/stubs/,libc.so libdl.so libm.so)
	$(BIONIC_CHECK)
.PHONY: bionic-libs
bionic-libs: $(BIONIC_LIB)/libprofcl_layer.so $(BIONIC_LIB)/libprofcl_preload.so $(BIONIC_LIB)/prof-clhelper \
	$(BIONIC_O)/layout.ok
# The bionic helper run by the static agent under qemu-aarch64, glibc's loader and a double of
# bionic's libc entry standing in for the phone's (scripts/bionic-emu.sh; by hand, like bionic-libs)
.PHONY: bionic-emu
bionic-emu: bionic-libs $(O)/agent.stripped
	$(Q)OUT=$(O) scripts/bionic-emu.sh
-include $(shell find $(BIONIC_O)/obj -name '*.d' 2>/dev/null)
endif

-include $(shell find $(O)/obj-pic -name '*.d' 2>/dev/null)

endif

# The unit tests of the layer's argument tracking (tests/unit/test_cl_layer_args.c) and of
# its reaper's state slot (test_cl_layer_reaper.c) link the layer's own files, built as the
# test is (sanitized in the test build), and drive them through clInitLayer with a fake runtime.
CL_LAYER_DIR ?= agent/cl_layer/layer
CL_LAYER_TEST_SRC := $(addprefix $(CL_LAYER_DIR)/,base.c state.c runtime.c tables.c kernels.c \
	track.c send.c ring.c intercept_objects.c intercept_enqueue.c intercept_info.c intercept_images.c \
	intercept_rect.c intercept_marks.c intercept_svm.c entry_layer.c) agent/cl_layer/cl_msg.c
$(O)/tests/test_cl_layer_args: $(call obj,$(CL_LAYER_TEST_SRC) agent/cl_layer/cl_state.c)
# the reaper's test reads the state file with the agent's code (cl_state_file.o from libagent.a,
# linked first), which brings cl_state.o from there too
$(O)/tests/test_cl_layer_reaper: $(call obj,$(CL_LAYER_TEST_SRC))

# The OpenCL workloads once more without sanitizers, as real apps are built:
# the LD_PRELOAD shim cannot go in front of an ASan runtime. Tests and the
# benchmark run these ($(O)/cl-workloads/cl_*).
CL_WORKLOAD_BINS := $(patsubst tests/workloads/%.c,$(O)/cl-workloads/%,$(wildcard tests/workloads/cl_*.c))
$(O)/cl-workloads/%: tests/workloads/%.c $(wildcard tests/workloads/cl_*.h)
	@mkdir -p $(dir $@)
	@echo "  CC [app] $<"
	$(Q)$(CC) $(filter-out -fvisibility=hidden -fPIC,$(CL_PIC_CFLAGS)) -Itests/workloads -o $@ $< -lOpenCL -lm -lpthread
ifeq ($(CONFIG_AGENT_OPENCL),y)
EXTRA_TARGETS += $(CL_WORKLOAD_BINS)
endif
