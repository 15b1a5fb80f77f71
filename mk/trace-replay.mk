# The collector's replay of board trace windows from their snapshots (issue 36,
# collector/trace_replay/): Unicorn 2 (ARM, AArch64) and Capstone (registers per
# instruction), both linked (Debian 12: libunicorn-dev, libcapstone-dev).
ifeq ($(CONFIG_COLLECTOR),y)
COLLECTOR_LIBS += -lunicorn -lcapstone
TEST_LIBS += -lunicorn -lcapstone
endif
