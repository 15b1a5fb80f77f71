# linux34: the Linux 3.4 personality for tests (tests/linux34/linux34.c, the rules in
# tests/lib/linux34.c): a seccomp user-notification interposer that answers the agent as
# the Arndale's 3.4 kernel did. x86_64 host builds only (not the static board agents).
ifeq ($(CROSS_COMPILE)$(CONFIG_STATIC),)
ifeq ($(shell uname -m),x86_64)
LINUX34_BIN := $(O)/tools/linux34
$(LINUX34_BIN): tests/linux34/linux34.c tests/lib/linux34.c tests/lib/linux34.h
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) -std=c11 -D_GNU_SOURCE -Wall -Wextra $(if $(WERROR),-Werror) -g -O2 -Itests/lib -o $@ \
		tests/linux34/linux34.c tests/lib/linux34.c
EXTRA_TARGETS += $(LINUX34_BIN)
endif
endif
