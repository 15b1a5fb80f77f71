# BPF programs of the sampler (bpf/*.bpf.c), only with CONFIG_AGENT_BPF=y.
#
# Kernel types for CO-RE (BPF_VMLINUX):
#   min (default, every board)  bpf/vmlinux_min.h: the few types the programs use, declared by
#                               hand with preserve_access_index; the linked objects are ~5 KB
#                               (against the full vmlinux.h, sched.bpf.o was 644 KB: DWARF and
#                               BTF of all that struct task_struct reaches). CO-RE relocates the
#                               fields on the running kernel, which must have BTF.
#   btf                         $(GEN)/vmlinux.h generated with `bpftool btf dump` from
#                               BPF_VMLINUX_BTF (default: the build machine's /sys/kernel/btf/vmlinux;
#                               cross builds: the target kernel's, an ELF vmlinux with .BTF or a raw
#                               BTF file pulled from its /sys/kernel/btf/vmlinux), e.g.
#                                 make BPF_VMLINUX=btf BPF_VMLINUX_BTF=/path/to/phone.btf
#                               Use it when a program needs a kernel type not in vmlinux_min.h (or
#                               add the type there).
# Outputs:
#   $(GEN)/%.bpf.o     clang -target bpf -g -O2 -D__TARGET_ARCH_<arch>
#   $(GEN)/%.bpfl.o    `bpftool gen object`: the same, linked; DWARF dropped, BTF kept
#   $(GEN)/%.lskel.h   light skeleton (bpftool gen skeleton -L, prefix %_lbpf): a loader program
#                      that the kernel runs; CO-RE relocated in the kernel (Linux >= 5.17), so the
#                      agent never reads the kernel's BTF (agent/sampler_bpf_load.c)
#   $(GEN)/%.skel.h    libbpf skeleton (prefix %_bpf): the fallback for older kernels; libbpf
#                      parses /sys/kernel/btf/vmlinux for CO-RE (several MB of memory while loading);
#                      only with CONFIG_AGENT_BPF_LIBBPF=y (without it libbpf is not linked: the
#                      light skeletons need only libbpf's headers, the map reads are raw bpf(2))
# Both skeletons embed their object; nothing to install. Agent objects that include a skeleton
# depend on it (listed below).
ifeq ($(CONFIG_AGENT_BPF),y)

BPF_CLANG ?= clang
BPFTOOL ?= bpftool
BPF_VMLINUX ?= min
BPF_VMLINUX_BTF ?= /sys/kernel/btf/vmlinux
BPF_SRC := $(wildcard bpf/*.bpf.c)
BPF_NAMES := $(patsubst bpf/%.bpf.c,%,$(BPF_SRC))
BPF_SKEL := $(patsubst %,$(GEN)/%.lskel.h,$(BPF_NAMES))
ifeq ($(CONFIG_AGENT_BPF_LIBBPF),y)
BPF_SKEL += $(patsubst %,$(GEN)/%.skel.h,$(BPF_NAMES))
endif

# __TARGET_ARCH_ for bpf_tracing.h, from the board's compiler prefix.
BPF_ARCH := $(if $(findstring aarch64,$(CROSS_COMPILE)),arm64,$(if $(findstring arm-,$(CROSS_COMPILE)),arm,$(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/' -e 's/armv7.*/arm/')))

ifeq ($(BPF_VMLINUX),min)
BPF_VMLINUX_DIR := $(GEN)/bpf-min
$(BPF_VMLINUX_DIR)/vmlinux.h: bpf/vmlinux_min.h
	@mkdir -p $(dir $@)
	$(Q)cp $< $@
else ifeq ($(BPF_VMLINUX),btf)
BPF_VMLINUX_DIR := $(GEN)
$(GEN)/vmlinux.h:
	@mkdir -p $(GEN)
	@echo "  GEN     $@ (BTF: $(BPF_VMLINUX_BTF))"
	$(Q)test -r "$(BPF_VMLINUX_BTF)" || { echo "bpf: no BTF at $(BPF_VMLINUX_BTF) (BPF_VMLINUX_BTF=...; or BPF_VMLINUX=min)"; exit 1; }
	$(Q)$(BPFTOOL) btf dump file $(BPF_VMLINUX_BTF) format c >$@.tmp && mv $@.tmp $@
else
$(error BPF_VMLINUX must be min or btf, not '$(BPF_VMLINUX)')
endif

BPF_CFLAGS := -target bpf -g -O2 -Wall -Werror -D__TARGET_ARCH_$(BPF_ARCH) -I$(BPF_VMLINUX_DIR) -Ibpf

$(GEN)/%.bpf.o: bpf/%.bpf.c bpf/sample_shared.h $(BPF_VMLINUX_DIR)/vmlinux.h
	@mkdir -p $(GEN)
	@echo "  BPF     $<"
	$(Q)$(BPF_CLANG) $(BPF_CFLAGS) -c $< -o $@

$(GEN)/%.bpfl.o: $(GEN)/%.bpf.o
	$(Q)$(BPFTOOL) gen object $@ $<

$(GEN)/%.skel.h: $(GEN)/%.bpfl.o
	@echo "  SKEL    $@"
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst .,_,$*)_bpf >$@.tmp && mv $@.tmp $@

$(GEN)/%.lskel.h: $(GEN)/%.bpfl.o
	@echo "  LSKEL   $@"
	$(Q)$(BPFTOOL) gen skeleton -L $< name $(subst .,_,$*)_lbpf >$@.tmp && mv $@.tmp $@

.SECONDARY: $(patsubst %,$(GEN)/%.bpf.o,$(BPF_NAMES)) $(patsubst %,$(GEN)/%.bpfl.o,$(BPF_NAMES))

# Objects that include a skeleton.
$(O)/obj/agent/sampler_bpf_load.o: $(BPF_SKEL)

endif
