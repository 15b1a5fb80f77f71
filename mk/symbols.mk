# Host-side symbolization (collector/symbols.c, sym_*.c) reads ELF symbol tables with
# libelf (Debian: libelf-dev), demangles with libiberty (libiberty-dev) and asks a
# debuginfod server through libdebuginfod (libdebuginfod-dev) where DEBUGINFOD_URLS is set.
COLLECTOR_LIBS += -lelf -liberty -ldebuginfod
TEST_LIBS += -lelf -liberty -ldebuginfod
