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

$(O)/obj-pic/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC [pic] $<"
	$(Q)$(CC) -MMD -MP $(CL_PIC_CFLAGS) -c $< -o $@

$(CL_LAYER_SO): $(call cl_pic_obj,$(CL_LAYER_COMMON) $(CL_LAYER_DIR)/entry_layer.c)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) -shared -Wl,--no-undefined -Wl,-soname,$(notdir $@) -o $@ $^ -lpthread -ldl

$(CL_PRELOAD_SO): $(call cl_pic_obj,$(CL_LAYER_COMMON) $(CL_LAYER_DIR)/entry_preload.c $(CL_LAYER_DIR)/dlopen.c)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) -shared -Wl,--no-undefined -Wl,-soname,$(notdir $@) -o $@ $^ -lpthread -ldl

# Its dependencies' order is the point: the shim first, libOpenCL.so.1 after.
$(CL_BRIDGE_SO): $(call cl_pic_obj,$(CL_LAYER_DIR)/bridge.c) $(CL_PRELOAD_SO)
	@echo "  LD      $@"
	$(Q)$(CC) -shared -Wl,-soname,$(notdir $@) -Wl,--no-as-needed -o $@ $< $(CL_PRELOAD_SO) -l:libOpenCL.so.1

EXTRA_TARGETS += $(CL_LAYER_SO) $(CL_PRELOAD_SO) $(CL_BRIDGE_SO)

-include $(shell find $(O)/obj-pic -name '*.d' 2>/dev/null)

endif

# The unit test of the layer's argument tracking (tests/unit/test_cl_layer_args.c) links
# the layer's own files, built as the test is (sanitized in the test build), and drives
# them through clInitLayer with a fake runtime.
CL_LAYER_DIR ?= agent/cl_layer/layer
$(O)/tests/test_cl_layer_args: $(call obj,$(addprefix $(CL_LAYER_DIR)/,base.c state.c runtime.c tables.c kernels.c \
	track.c send.c ring.c intercept_objects.c intercept_enqueue.c intercept_info.c intercept_images.c \
	intercept_rect.c intercept_marks.c intercept_svm.c entry_layer.c) agent/cl_layer/cl_msg.c agent/cl_layer/cl_state.c)

# The OpenCL workloads once more without sanitizers, as real apps are built:
# the LD_PRELOAD shim cannot go in front of an ASan runtime. Tests and the
# benchmark run these ($(O)/cl-workloads/cl_*).
CL_WORKLOAD_BINS := $(patsubst tests/workloads/%.c,$(O)/cl-workloads/%,$(wildcard tests/workloads/cl_*.c))
$(O)/cl-workloads/%: tests/workloads/%.c tests/workloads/cl_common.h
	@mkdir -p $(dir $@)
	@echo "  CC [app] $<"
	$(Q)$(CC) $(filter-out -fvisibility=hidden -fPIC,$(CL_PIC_CFLAGS)) -Itests/workloads -o $@ $< -lOpenCL -lm -lpthread
ifeq ($(CONFIG_AGENT_OPENCL),y)
EXTRA_TARGETS += $(CL_WORKLOAD_BINS)
endif
