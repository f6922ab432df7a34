# precord: a sampling profiler for Linux. Plain make, pkg-config for the libraries.
# Targets: all check demo bench install uninstall clean deps. See README.

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
SBINDIR ?= $(PREFIX)/sbin
MANDIR ?= $(PREFIX)/share/man
SYSCONFDIR ?= /etc
SYSTEMDUNITDIR ?= $(shell pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null || echo /lib/systemd/system)
DESTDIR ?=

CC ?= cc
CFLAGS ?= -O2 -g
PKGS := libunwind-generic libelf libdw libzstd libprotobuf-c zlib libcurl
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null)

override CFLAGS += -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Wno-sign-compare \
	-D_GNU_SOURCE -fno-strict-aliasing -pthread -I. -Isrc -I$(B)/gen $(PKG_CFLAGS) -MMD -MP
LDLIBS := $(PKG_LIBS) -lpfm -lstdc++ -lpthread -lm

# The version, shown by --version and written into every perf.data (VERSION feature): the VERSION
# file, with the commit when built from a git checkout (0.1-12-gabc1234 past the tag v0.1).
VERSION := $(shell cat VERSION 2>/dev/null || echo unknown)
GIT_VERSION := $(shell git describe --tags --match 'v*' --dirty 2>/dev/null | sed 's/^v//')
PRECORD_VERSION := $(or $(GIT_VERSION),$(VERSION)$(shell git rev-parse --short HEAD 2>/dev/null | sed 's/^/+g/'))
override CFLAGS += -DPRECORD_VERSION='"$(PRECORD_VERSION)"'

# Debian packages the build, the tests and the demo need (installed by 'make deps' when missing).
DEB_PKGS := build-essential pkg-config libpfm4-dev libunwind-dev libelf-dev libdw-dev libzstd-dev \
	check linux-perf systemd procps libprotobuf-c-dev protobuf-c-compiler zlib1g-dev golang-go \
	stress-ng hotspot clang libclang-rt-14-dev libc6-dbg libcurl4-openssl-dev curl man-db libxml2-utils

# SANITIZE=1 builds everything (library, programs, unit runner, tools, fuzz targets) with
# ASan+UBSan into build-san/, beside the plain build/; `make check SANITIZE=1` runs the whole
# suite against it (see tests/run.sh), and any sanitizer report fails the run.
PLAIN_CC := $(CC)
ifneq ($(SANITIZE),)
B := build-san
# clang: gcc's UBSan ignores log_path, and tests/run.sh collects every report from there.
CC := clang
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
override CFLAGS += $(SAN_FLAGS)
BIN := $(B)/
else
B := build
BIN :=
endif
# src/ by layer (lib <- perf <- ringbuf, unwind <- record, report <- daemon <- cmd); headers are
# included by their path from the top or from src/: "perf/reader.h", "unwind/machine.h".
PROGS := precord preport precordd
MAINS := $(addprefix src/cmd/,$(addsuffix .c,$(PROGS)))
LIB_SRCS := $(filter-out $(MAINS),$(sort $(wildcard src/*/*.c src/*/*/*.c ringbuf/*.c unwind/*.c)))
# pprof's profile.proto, compiled by protoc-c at build time (src/report/pprof.c uses it).
PROTO_C := $(B)/gen/report/profile.pb-c.c
LIB_OBJS := $(LIB_SRCS:%.c=$(B)/%.o) $(B)/gen/report/profile.pb-c.o
TEST_SRCS := $(sort $(wildcard tests/check_*.c))
TEST_OBJS := $(TEST_SRCS:%.c=$(B)/%.o)
WORKLOAD_SRCS := $(sort $(wildcard tests/workloads/*.c))
WORKLOADS := $(WORKLOAD_SRCS:tests/workloads/%.c=$(B)/workloads/%)

PROG_BINS := $(addprefix $(BIN),$(PROGS))

all: $(PROG_BINS)

$(B)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(PROTO_C) $(PROTO_C:.c=.h): src/report/profile.proto
	@mkdir -p $(B)/gen/report
	protoc-c --proto_path=src/report --c_out=$(B)/gen/report $<

$(B)/gen/report/profile.pb-c.o: $(PROTO_C)
	$(CC) $(CFLAGS) -c -o $@ $<

$(B)/src/report/pprof.o: $(PROTO_C:.c=.h)

# The objects that show the version are rebuilt when it changes (a commit, an edit of VERSION).
$(B)/version: FORCE
	@mkdir -p $(B)
	@echo '$(PRECORD_VERSION)' | cmp -s - $@ || echo '$(PRECORD_VERSION)' > $@
$(B)/src/perf/writer.o $(MAINS:%.c=$(B)/%.o) $(B)/tests/check_perf_writer.o: $(B)/version
FORCE:

$(B)/libprecord.a: $(LIB_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(PROG_BINS): $(BIN)%: $(B)/src/cmd/%.o $(B)/libprecord.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(filter %.c %.o %.a,$^) $(LDLIBS)

# The unit-test runner adds every Suite *NAME_suite(void) found in tests/check_*.c.
$(B)/tests/runner.c: $(TEST_SRCS) tests/gen-runner.sh
	@mkdir -p $(dir $@)
	sh tests/gen-runner.sh $(TEST_SRCS) > $@

$(B)/tests/runner.o: $(B)/tests/runner.c
	$(CC) $(CFLAGS) $(CHECK_CFLAGS) -c -o $@ $<

$(B)/tests/check_%.o: tests/check_%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CHECK_CFLAGS) -c -o $@ $<

$(B)/check_runner: $(B)/tests/runner.o $(TEST_OBJS) $(B)/libprecord.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(CHECK_LIBS) $(LDLIBS)

# Workloads profiled by the tests, the demo and the benches; tests/workloads/Makefile.inc
# says how the ones with special needs (shared library, no frame pointer) are built.
-include tests/workloads/Makefile.inc
# The profiled programs are the same, plainly compiled, in both builds.
$(B)/workloads/%: CC := $(PLAIN_CC)

$(B)/workloads/%: tests/workloads/%.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -Wall -pthread -o $@ $< -lm

# Small helper programs of the integration tests, linked against the library.
TOOL_SRCS := $(sort $(wildcard tests/tools/*.c))
TOOLS := $(TOOL_SRCS:tests/tools/%.c=$(B)/tools/%)

$(B)/tools/%: tests/tools/%.c $(B)/libprecord.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(filter %.c %.o %.a,$^) $(LDLIBS)

# LD_PRELOAD helpers of the integration tests (failmalloc: fail the Nth allocation).
PRELOADS := $(patsubst tests/preload/%.c,$(B)/preload/%.so,$(sort $(wildcard tests/preload/*.c)))

$(B)/preload/%.so: tests/preload/%.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -Wall -shared -fPIC -o $@ $<

test-bins: all $(B)/check_runner $(WORKLOADS) $(EXTRA_WORKLOADS) $(TOOLS) $(PRELOADS)

# libFuzzer targets (clang, ASan+UBSan), one per parser of untrusted input: tests/fuzz/fuzz_NAME.c
# with its seed corpus in tests/fuzz/corpus/NAME/ (fuzz_reader: tests/corpus). They link against
# a clang-instrumented copy of the library. `make fuzz` builds them and runs each for FUZZ_TIME
# seconds (default 60), FUZZ_JOBS at a time (default 1); finds go to $(B)/fuzz/.
FUZZ_CC ?= clang
FUZZ_TIME ?= 60
FUZZ_JOBS ?= 1
FUZZ_FLAGS := -g -O1 -std=gnu11 -D_GNU_SOURCE -fno-strict-aliasing -pthread -I. -Isrc -I$(B)/gen \
	$(PKG_CFLAGS) -DPRECORD_VERSION='"$(PRECORD_VERSION)"' \
	-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_NAMES := $(sort $(patsubst tests/fuzz/%.c,%,$(wildcard tests/fuzz/fuzz_*.c)))
FUZZ_BINS := $(addprefix $(B)/fuzz/,$(FUZZ_NAMES))
FUZZ_LIB_OBJS := $(LIB_SRCS:%.c=$(B)/fuzz-obj/%.o) $(B)/fuzz-obj/gen/report/profile.pb-c.o

$(B)/fuzz-obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

$(B)/fuzz-obj/gen/report/profile.pb-c.o: $(PROTO_C)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

$(B)/fuzz-obj/src/report/pprof.o: $(PROTO_C:.c=.h)

$(B)/fuzz-obj/libprecord-fuzz.a: $(FUZZ_LIB_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(B)/fuzz/%: tests/fuzz/%.c $(B)/fuzz-obj/libprecord-fuzz.a
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $^ $(LDLIBS)

fuzz-bins: $(FUZZ_BINS)

fuzz: fuzz-bins
	@FUZZ_BIN=$(B)/fuzz FUZZ_TIME=$(FUZZ_TIME) FUZZ_JOBS=$(FUZZ_JOBS) sh tests/fuzz/run.sh $(FUZZ_NAMES)

deps:
	@missing=""; for p in $(DEB_PKGS); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "make deps: installing$$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	fi

# With SANITIZE=1 the suite runs in $(B)/top, a tree of links to this one whose programs,
# tools and build/ are the sanitized ones, so every test uses them unchanged.
ifneq ($(SANITIZE),)
check: deps
	@$(MAKE) --no-print-directory test-bins fuzz-bins
	@sh tests/sanitize-top.sh $(B)
	@PRECORD_TOP=$(CURDIR)/$(B)/top PRECORD_SANITIZE=1 sh tests/run.sh
else
check: deps
	@$(MAKE) --no-print-directory test-bins
	@sh tests/run.sh
endif

demo: deps
	@$(MAKE) --no-print-directory all $(WORKLOADS) $(EXTRA_WORKLOADS)
	@sh tests/demo.sh

bench: deps
	@$(MAKE) --no-print-directory all $(WORKLOADS) $(EXTRA_WORKLOADS) $(TOOLS)
	@sh bench/run.sh

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SBINDIR) $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man8
	install -m 755 precord preport $(DESTDIR)$(BINDIR)/
	install -m 755 precordd $(DESTDIR)$(SBINDIR)/
	for m in man/*.1; do [ -e "$$m" ] && install -m 644 $$m $(DESTDIR)$(MANDIR)/man1/ || true; done
	for m in man/*.5; do [ -e "$$m" ] && install -m 644 $$m $(DESTDIR)$(MANDIR)/man5/ || true; done
	for m in man/*.8; do [ -e "$$m" ] && install -m 644 $$m $(DESTDIR)$(MANDIR)/man8/ || true; done
	if [ -e systemd/precordd.service ]; then \
		install -d $(DESTDIR)$(SYSTEMDUNITDIR) $(DESTDIR)$(SYSCONFDIR)/precord; \
		sed 's|@SBINDIR@|$(SBINDIR)|g' systemd/precordd.service > $(DESTDIR)$(SYSTEMDUNITDIR)/precordd.service; \
		[ -e $(DESTDIR)$(SYSCONFDIR)/precord/precordd.conf ] || \
			install -m 644 systemd/precordd.conf $(DESTDIR)$(SYSCONFDIR)/precord/precordd.conf; \
	fi

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/precord $(DESTDIR)$(BINDIR)/preport $(DESTDIR)$(SBINDIR)/precordd
	rm -f $(DESTDIR)$(MANDIR)/man1/precord.1 $(DESTDIR)$(MANDIR)/man1/preport.1
	rm -f $(DESTDIR)$(MANDIR)/man5/precordd.conf.5 $(DESTDIR)$(MANDIR)/man8/precordd.8
	rm -f $(DESTDIR)$(SYSTEMDUNITDIR)/precordd.service

clean:
	rm -rf $(B) $(PROG_BINS)

.PHONY: all check demo bench install uninstall clean deps test-bins fuzz fuzz-bins
.DELETE_ON_ERROR:

-include $(shell find $(B) -name '*.d' 2>/dev/null)
