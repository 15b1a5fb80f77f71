# Profile views and exports (collector/views/, issue 27). pprof's profile.proto
# (collector/views/profile.proto, from google/pprof's documented format) is
# compiled with protoc-c like proto/, into the collector only (the agent never
# writes pprof); the file is gzip-compressed with zlib.
VIEWS_PROTO := collector/views/profile.proto
VIEWS_PB_C := $(GEN)/views/profile.pb-c.c
VIEWS_PB_H := $(GEN)/views/profile.pb-c.h
COLLECTOR_OBJ += $(O)/obj/gen/views/profile.pb-c.o
COLLECTOR_LIBS += -lz
TEST_LIBS += -lz

$(VIEWS_PB_C) $(VIEWS_PB_H) &: $(VIEWS_PROTO)
	@mkdir -p $(GEN)/views
	@echo "  PROTOC  $<"
	$(Q)$(PROTOC_C) --proto_path=collector/views --c_out=$(GEN)/views $<

$(O)/obj/gen/views/profile.pb-c.o: $(VIEWS_PB_H)
$(O)/obj/collector/views/pprof.o: $(VIEWS_PB_H)
