# Instruction-trace codecs both sides use (common/trace/: the native text and
# binary formats, instruction names) go into libcommon, so the agent
# (`agent trace-import`), the QEMU plugin and the collector's eDAG library share
# one implementation. The top-level glob only sees common/*.c.
TRACE_COMMON_SRC := $(wildcard common/trace/*.c)
COMMON_OBJ += $(call obj,$(TRACE_COMMON_SRC))
