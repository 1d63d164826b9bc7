# SPDX-License-Identifier: GPL-2.0
# Harness for the x86 debug store / branch trace / breakpoint series.
#
#   make run          build the patched kernel, boot it, run the demo
#   make check        build, boot, run every test; ends "N passed, N failed, N skipped"
#   make check DEBUG=1  the same on kernel/configs/x86_debug.config + KASAN
#   make bench        boot the runs of scripts/guest/benches, print ratios
#   make stress       boot the runs of scripts/guest/stress: long random runs
#   make series       export the series with a cover letter to build/series/
#   make series-check build every prefix of the series
#
# Everything is built under build/; `make clean` removes it.

DEBUG ?= 0
BASE ?= 0
export DEBUG BASE

SCRIPTS := scripts

.NOTPARALLEL:
.PHONY: all run check bench stress deps tree kernel initramfs host-checks series series-check clean help

all: help

help:
	@sed -n 's/^#   /  /p' Makefile

deps:
	@$(SCRIPTS)/deps.sh

tree: deps
	@$(SCRIPTS)/prepare-tree.sh

kernel: tree
	@$(SCRIPTS)/build-kernel.sh

initramfs: kernel
	@$(SCRIPTS)/build-initramfs.sh

run: initramfs
	@$(SCRIPTS)/run-guest.sh run

host-checks: kernel
	@$(SCRIPTS)/host-checks.sh

check: initramfs
	@$(SCRIPTS)/check.sh

bench: initramfs
	@$(SCRIPTS)/bench.sh

stress: initramfs
	@$(SCRIPTS)/stress.sh

series: tree
	@$(SCRIPTS)/series.sh

series-check: series
	@$(SCRIPTS)/series-check.sh

clean:
	rm -rf build
