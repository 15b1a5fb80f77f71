# The fake Mali kbase device as an LD_PRELOAD library (tests/fake_kbase/,
# tests/lib/fake_kbase.c): the integration tests run the agent on it. Built
# without sanitizers (it is preloaded in front of them). Not for static
# agents (the board builds): LD_PRELOAD does not reach a static binary.
ifeq ($(CONFIG_AGENT_MALI)$(CONFIG_STATIC),y)
FAKE_KBASE_SO := $(O)/lib/libfake_kbase.so
FAKE_KBASE_CFLAGS := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wno-unused-parameter -g -O2 -fPIC \
	-fvisibility=hidden $(if $(WERROR),-Werror) $(BOARD_CFLAGS) -Iagent -Itests/lib -I$(O)/include
# the core and one file per driver generation (tests/lib/fake_kbase_int.h)
FAKE_KBASE_SRC := $(wildcard tests/lib/fake_kbase*.c)
$(FAKE_KBASE_SO): tests/fake_kbase/preload.c $(FAKE_KBASE_SRC) tests/lib/fake_kbase.h tests/lib/fake_kbase_int.h agent/gpu/kbase_abi.h agent/gpu/kbase_dev.h
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) -shared $(FAKE_KBASE_CFLAGS) -o $@ tests/fake_kbase/preload.c $(FAKE_KBASE_SRC) -ldl -lm
EXTRA_TARGETS += $(FAKE_KBASE_SO)
endif
