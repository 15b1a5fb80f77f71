# Host-side symbolization (collector/symbols.c, sym_*.c) reads ELF symbol tables with
# libelf (Debian: libelf-dev), demangles with libiberty (libiberty-dev) and asks a
# debuginfod server through libdebuginfod (libdebuginfod-dev) where DEBUGINFOD_URLS is set;
# source file:line from DWARF with libdw (libdw-dev, sym_line.c).
COLLECTOR_LIBS += -lelf -liberty -ldebuginfod -ldw
TEST_LIBS += -lelf -liberty -ldebuginfod -ldw
