# Stored OpenCL command blocks (#41): collector/store/cl_block.proto is compiled
# with protoc-c like proto/, into the collector only (a store format, never on
# the wire: the agent does not carry it).
CL_BLOCK_PROTO := collector/store/cl_block.proto
CL_BLOCK_PB_C := $(GEN)/store/cl_block.pb-c.c
CL_BLOCK_PB_H := $(GEN)/store/cl_block.pb-c.h
COLLECTOR_OBJ += $(O)/obj/gen/store/cl_block.pb-c.o

$(CL_BLOCK_PB_C) $(CL_BLOCK_PB_H) &: $(CL_BLOCK_PROTO)
	@mkdir -p $(GEN)/store
	@echo "  PROTOC  $<"
	$(Q)$(PROTOC_C) --proto_path=collector/store --c_out=$(GEN)/store $<

$(O)/obj/gen/store/cl_block.pb-c.o: $(CL_BLOCK_PB_H)
$(O)/obj/collector/store/store_cl_block.o: $(CL_BLOCK_PB_H)
