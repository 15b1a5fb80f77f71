# Host-side symbolization (collector/symbols.c) reads ELF symbol tables with
# libelf (Debian: libelf-dev). The collector and the tests link it.
COLLECTOR_LIBS += -lelf
TEST_LIBS += -lelf
