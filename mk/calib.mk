# Calibration (issue #5): the shared pure library common/calib/*.c (statistics,
# detectors, machine model) goes into libcommon so that the agent (which
# measures) and the collector (which re-detects, writes the model and the
# GPGPU-sim config) use the same code. The top-level glob only sees common/*.c.
CALIB_COMMON_SRC := $(wildcard common/calib/*.c)
COMMON_OBJ += $(call obj,$(CALIB_COMMON_SRC))
# a * b + c as one fused multiply-add in the CPU peak kernels (ISO C's default is off)
$(O)/obj/agent/calib/cpu_peak.o: CFLAGS += -ffp-contract=fast
# the agent's calibration code (detectors, statistics, benchmarks) uses libm
AGENT_LIBS += -lm
