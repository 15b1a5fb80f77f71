# Full instruction traces with a QEMU TCG plugin (issue #7, tools/qemu-plugin/):
#   $(O)/qemu-plugin/edag_tracer.so   the plugin (host build only: it runs inside qemu-user)
#   $(O)/xkernels/<arch>/<kernel>      sample kernels, static, for each cross compiler found
#   make trace-demo                    trace every kernel under qemu-user, print `collector edag` results,
#                                      and stream one through `agent trace-import` to a collector
# The plugin links the decoder (agent/trace/decode*.c, Capstone: linked, not loaded at run
# time as in the dynamic agent, agent/trace/cs_api.h) and the native trace
# encoder (common/trace/) compiled position-independent, never with sanitizers
# (it is loaded into a plain qemu-user).

QP_SO := $(O)/qemu-plugin/edag_tracer.so
QP_SRC := tools/qemu-plugin/edag_tracer.c agent/trace/decode.c agent/trace/decode_riscv.c agent/trace/cs_api.c \
	common/isa_regs.c common/trace/insn.c common/trace/native.c
QP_OBJ := $(patsubst %.c,$(O)/obj-qp/%.o,$(QP_SRC))
QP_CFLAGS = $(filter-out $(SAN_FLAGS) -fno-sanitize-recover=undefined,$(CFLAGS_BASE)) -fPIC -fvisibility=hidden

XK_NAMES := gemm lu chase triad mix hash stencil qsort chase_lines
XK_CFLAGS := -std=c11 -O2 -g -static -fno-tree-vectorize -fno-unroll-loops -fno-tree-loop-distribute-patterns -Wall -Wextra
XK_CC_aarch64 := aarch64-linux-gnu-gcc
XK_CC_riscv64 := riscv64-linux-gnu-gcc
XK_CC_arm := arm-linux-gnueabihf-gcc
# x86_64: the host's own compiler on an x86_64 build machine; the same static binary runs
# natively (agent trace's replay windows) and under qemu-x86_64 (the full trace), issue 26
XK_CC_x86_64 := x86_64-linux-gnu-gcc
XK_ARCHES := $(foreach a,aarch64 riscv64 arm x86_64,$(if $(shell command -v $(XK_CC_$(a)) 2>/dev/null),$(a)))
XK_BINS := $(foreach a,$(XK_ARCHES),$(addprefix $(O)/xkernels/$(a)/,$(XK_NAMES)))

# `agent trace-import` (agent/cmd_trace_import.c) reads the native format with
# the shared codec common/trace/ (in libcommon, mk/trace.mk); the agent links
# no collector code.

# Only where the agent's tracer (Capstone) is configured and the build is native.
ifeq ($(CONFIG_AGENT_TRACER)$(CROSS_COMPILE),y)
EXTRA_TARGETS += $(QP_SO) $(XK_BINS)
endif

$(O)/obj-qp/%.o: %.c $(CONFIG_H) $(PROTO_H)
	@mkdir -p $(dir $@)
	@echo "  CC [pic] $<"
	$(Q)$(CC) $(ALL_CPPFLAGS) -Itools/qemu-plugin -DCONFIG_AGENT_TRACER=1 -DCS_API_LINKED $(QP_CFLAGS) -c $< -o $@

-include $(shell find $(O)/obj-qp -name "*.d" 2>/dev/null)

$(QP_SO): $(QP_OBJ)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) -shared -o $@ $^ -lcapstone -lm -lpthread

define XK_RULE
$(O)/xkernels/$(1)/%: tools/qemu-plugin/kernels/%.c tools/qemu-plugin/kernels/kernel.h tools/qemu-plugin/kernels/sattolo.h
	@mkdir -p $$(dir $$@)
	@echo "  XCC     $$@"
	$$(Q)$(XK_CC_$(1)) $(XK_CFLAGS) -o $$@ $$<
endef
$(foreach a,$(XK_ARCHES),$(eval $(call XK_RULE,$(a))))

.PHONY: trace-demo qemu-plugin
qemu-plugin: $(QP_SO) $(XK_BINS)

trace-demo: $(QP_SO) $(XK_BINS) $(COLLECTOR_BIN)
	$(Q)scripts/trace-demo.sh $(O)
