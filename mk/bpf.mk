# BPF programs of the sampler (bpf/*.bpf.c), only with CONFIG_AGENT_BPF=y.
#
#   $(O)/gen/vmlinux.h     kernel types for CO-RE, from BTF:
#                          host build:  /sys/kernel/btf/vmlinux of the build machine (default);
#                          cross build: the TARGET kernel's BTF, e.g.
#                            make BOARD=android-arm64 BPF_VMLINUX_BTF=/path/to/target/vmlinux
#                          (an ELF vmlinux with .BTF, or a raw BTF file pulled from the device's
#                           /sys/kernel/btf/vmlinux);
#                          no BTF at hand: BPF_VMLINUX_BTF=none uses bpf/vmlinux_min.h, the few
#                          types the programs need, declared by hand with preserve_access_index
#                          (CO-RE still relocates them on the running kernel, which must have BTF).
#   $(O)/gen/%.bpf.o       clang -target bpf -g -O2 -D__TARGET_ARCH_<arch>
#   $(O)/gen/%.skel.h      bpftool gen skeleton (embedded in the agent; nothing to install)
# Agent objects that include a skeleton depend on it (listed below).
ifeq ($(CONFIG_AGENT_BPF),y)

BPF_CLANG ?= clang
BPFTOOL ?= bpftool
BPF_VMLINUX_BTF ?= /sys/kernel/btf/vmlinux
BPF_SRC := $(wildcard bpf/*.bpf.c)
BPF_OBJ := $(patsubst bpf/%.bpf.c,$(GEN)/%.bpf.o,$(BPF_SRC))
BPF_SKEL := $(patsubst bpf/%.bpf.c,$(GEN)/%.skel.h,$(BPF_SRC))

# __TARGET_ARCH_ for bpf_tracing.h, from the board's compiler prefix.
BPF_ARCH := $(if $(findstring aarch64,$(CROSS_COMPILE)),arm64,$(if $(findstring arm-,$(CROSS_COMPILE)),arm,$(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/' -e 's/armv7.*/arm/')))
BPF_CFLAGS := -target bpf -g -O2 -Wall -Werror -D__TARGET_ARCH_$(BPF_ARCH) -I$(GEN) -Ibpf

$(GEN)/vmlinux.h:
	@mkdir -p $(GEN)
	@echo "  GEN     $@ (BTF: $(BPF_VMLINUX_BTF))"
	$(Q)if [ "$(BPF_VMLINUX_BTF)" = none ]; then cp bpf/vmlinux_min.h $@; \
	 elif [ -r "$(BPF_VMLINUX_BTF)" ]; then $(BPFTOOL) btf dump file $(BPF_VMLINUX_BTF) format c >$@.tmp && mv $@.tmp $@; \
	 else echo "bpf: no BTF at $(BPF_VMLINUX_BTF): using the hand-declared bpf/vmlinux_min.h"; cp bpf/vmlinux_min.h $@; fi

$(GEN)/%.bpf.o: bpf/%.bpf.c bpf/sample_shared.h $(GEN)/vmlinux.h
	@echo "  BPF     $<"
	$(Q)$(BPF_CLANG) $(BPF_CFLAGS) -c $< -o $@

$(GEN)/%.skel.h: $(GEN)/%.bpf.o
	@echo "  SKEL    $@"
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst .,_,$*)_bpf >$@.tmp && mv $@.tmp $@

# Objects that include a skeleton.
$(O)/obj/agent/sampler_bpf.o: $(BPF_SKEL)

endif
