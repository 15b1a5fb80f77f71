# Fleet scale and hardening (issue #10): token authentication (libnettle),
# the PostgreSQL store back end (libpq), fault tests, load benchmark, fuzzing.
#
#   make faults            tests/integration/test_faults with the long variants
#                          (30 s network partition); `make check` runs the short ones
#   make bench-load        1000 simulated agents x 100 records/s x 60 s (scripts/bench-load.sh)
#   make fuzz              the fuzzers (frame decoder, record validators, HTTP parser)
#                          for FUZZ_SECONDS each (default 600 s)
#   make fuzz-short        the same for 60 s each (CI)

ifeq ($(CONFIG_AUTH),y)
AGENT_LIBS += -lnettle
COLLECTOR_LIBS += -lnettle
TEST_LIBS += -lnettle
endif
ifeq ($(CONFIG_STORE_POSTGRESQL),y)
CPPFLAGS_BASE += -I/usr/include/postgresql
COLLECTOR_LIBS += -lpq
TEST_LIBS += -lpq
endif

FAULTS_PARTITION_S ?= 30
BENCH_LOAD_AGENTS ?= 1000
BENCH_LOAD_RATE ?= 100
BENCH_LOAD_SECONDS ?= 60

.PHONY: faults bench-load fuzz-short

# The sanitizer build's test_faults, with the long partition.
FAULTS_O := $(if $(filter command line,$(origin O)),$(O),build/$(BOARD)-san)
faults: deps
	$(Q)$(MAKE) --no-print-directory O=$(FAULTS_O) SAN=1 WERROR=1 tests
	$(Q)PROF_BIN_DIR=$(abspath $(FAULTS_O)) FAULTS_PARTITION_S=$(FAULTS_PARTITION_S) $(FAULTS_O)/tests/test_faults

bench-load: deps
	$(Q)$(MAKE) --no-print-directory all $(O)/bench/load
	$(Q)scripts/bench-load.sh $(O) $(BENCH_LOAD_AGENTS) $(BENCH_LOAD_RATE) $(BENCH_LOAD_SECONDS)

fuzz-short: deps
	$(Q)scripts/fuzz.sh $(O)-fuzz 60
