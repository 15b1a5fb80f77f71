# The boards' PMU event tables (board/*/pmu-events) embedded in the agent, so
# `agent stat -e L1D_CACHE_REFILL` works on a board without the source tree.
PMU_TABLES := $(sort $(wildcard board/*/pmu-events))
PMU_EMBED_C := $(GEN)/pmu_events_embedded.c
AGENT_OBJ += $(O)/obj/gen/pmu_events_embedded.o

$(PMU_EMBED_C): $(PMU_TABLES) scripts/pmu-embed.sh
	@mkdir -p $(dir $@)
	@echo "  EMBED   $(PMU_TABLES)"
	$(Q)scripts/pmu-embed.sh $(PMU_TABLES) >$@.tmp && mv $@.tmp $@

$(O)/obj/gen/pmu_events_embedded.o: $(PMU_EMBED_C)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -c $< -o $@
