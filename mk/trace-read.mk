# Compressed instruction traces (issue 17): `collector edag --trace` streams
# .gz (zlib) and .zst (libzstd) files (collector/trace_in.c).
ifeq ($(CONFIG_COLLECTOR),y)
COLLECTOR_LIBS += -lz -lzstd
TEST_LIBS += -lz -lzstd
endif
