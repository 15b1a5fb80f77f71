# Issue 36: the board guests' trace windows against full traces (scripts/board-accuracy.sh).
# Host side: tests/board/trace_truth (reads a qemu-arm/-aarch64 full trace, compares the guest's
# stored windows with it; the steady state's tiles from tests/lib/trace_tiles.c, as
# test_trace_accuracy). Guest side (mk/board.mk): the sample kernels chase and hash, static,
# built exactly as $(O)/xkernels/<arch>/ (mk/qemu-plugin.mk XK_CFLAGS), in the initramfs.
TRACE_TRUTH := $(O)/board-accuracy/trace_truth
$(TRACE_TRUTH): $(O)/obj/tests/board/trace_truth.o $(O)/obj/tests/lib/trace_tiles.o $(LIBCOLLECTOR) $(LIBCOMMON)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS_BASE) $(LDFLAGS) -o $@ $^ $(COLLECTOR_LIBS)
# built with the plugin it pairs with (mk/qemu-plugin.mk: the tracer configured, a native build)
ifeq ($(CONFIG_AGENT_TRACER)$(CROSS_COMPILE),y)
EXTRA_TARGETS += $(TRACE_TRUTH)
endif
