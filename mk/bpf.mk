# The bpf monitor (lib/monitor/bpf/, bpf/mrc_monitor.bpf.c).
# Needs clang (BPF target), bpftool, libbpf (pkg-config) and the build
# machine's kernel BTF for vmlinux.h (CO-RE relocates it on other kernels).
# Without them the library builds and the monitor reports -ENOTSUP.
# libmrcache does not link libbpf: the monitor loads libbpf.so.1 when a
# cache first starts it (lib/common/dl.h, lib/monitor/bpf/dl_bpf.h).
BPF_CLANG   ?= clang
BPFTOOL     ?= bpftool
BPF_VMLINUX ?= /sys/kernel/btf/vmlinux
BPF_OK := $(shell pkg-config --exists libbpf 2>/dev/null && \
	command -v $(BPF_CLANG) >/dev/null 2>&1 && \
	command -v $(BPFTOOL) >/dev/null 2>&1 && \
	test -r $(BPF_VMLINUX) && echo yes)

ifeq ($(BPF_OK),yes)
BPF_OUT     := $(BUILD)/bpf
LIB_CFLAGS  += -DMRC_HAVE_BPF -I$(BPF_OUT) $(shell pkg-config --cflags libbpf)
BPF_SKEL    := $(BPF_OUT)/mrc_monitor.skel.h

$(BPF_OUT)/vmlinux.h:
	@mkdir -p $(dir $@)
	$(BPFTOOL) btf dump file $(BPF_VMLINUX) format c > $@.tmp && mv $@.tmp $@

$(BPF_OUT)/%.bpf.o: bpf/%.bpf.c lib/monitor/bpf/abi.h $(BPF_OUT)/vmlinux.h
	$(BPF_CLANG) -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_x86 -Wall \
	  -I$(BPF_OUT) -Ilib -c $< -o $@

$(BPF_OUT)/%.skel.h: $(BPF_OUT)/%.bpf.o
	$(BPFTOOL) gen skeleton $< name mrc_bpf_skel > $@.tmp && mv $@.tmp $@

$(patsubst %.c,$(BUILD)/%.o,$(wildcard lib/monitor/bpf/*.c)): $(BPF_SKEL)
endif

# test-bpf-dlclose loads and unloads this library (whatever BPF_OK says).
$(BUILD)/tests/libmrc-bpf-dlclose.so: tests/bpf-dlclose-lib.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -fPIC -shared -o $@ $<

$(BUILD)/tests/test-bpf-dlclose: $(BUILD)/tests/libmrc-bpf-dlclose.so
