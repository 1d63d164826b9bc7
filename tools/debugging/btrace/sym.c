// SPDX-License-Identifier: GPL-2.0
/*
 * Symbolization with elfutils' libdwfl, from the mapsets of the trace
 * alone (never from a live process), so that a saved trace symbolizes as
 * the live run did.  Every address is looked up once per mapset: a
 * trace visits the same few thousand addresses over and over.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <elfutils/libdwfl.h>

#include "btrace.h"

struct bt_sym_slot {
	u64 addr;
	u32 mapset;
	bool used;
	struct bt_sym sym;
};

/*
 * The libdwfl sessions of the mapsets used last.  Each holds a file
 * descriptor or more per module: they are closed once BT_SYM_DWFLS newer
 * mapsets were used, so that a trace of many processes does not run out.
 */
#define BT_SYM_DWFLS	8

struct bt_sym_dwfl {
	Dwfl *dwfl;
	u32 mapset;
	u64 used;		/* the lookup count when last used */
	u64 vdso_start;	/* the vDSO of the mapset, kept from libdwfl */
	u64 vdso_end;
};

static struct {
	struct bt_sym_dwfl dwfls[BT_SYM_DWFLS];
	u64 clock;
	struct bt_sym_slot *slots;
	size_t nslots;		/* a power of 2 */
	size_t used;
	char **strs;		/* interned strings: they outlive the Dwfl */
	size_t nstrs;		/* a power of 2 */
	size_t nstrs_used;
	char **checked;		/* "HEX PATH" lines whose file was checked */
	size_t nchecked;
} bt_sym;

static const Dwfl_Callbacks bt_dwfl_cb = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
};

static size_t bt_str_hash(const char *s)
{
	size_t h = 5381;

	while (*s)
		h = h * 33 + (unsigned char)*s++;
	return h;
}

/* A copy of @s that lives until bt_sym_exit(); NULL stays NULL. */
static const char *bt_intern(const char *s)
{
	size_t j, mask;

	if (!s)
		return NULL;
	if (2 * (bt_sym.nstrs_used + 1) > bt_sym.nstrs) {
		char **old = bt_sym.strs;
		size_t n = bt_sym.nstrs, i;

		bt_sym.nstrs = n ? 2 * n : 1024;
		bt_sym.strs = bt_alloc(bt_sym.nstrs * sizeof(*old));
		for (i = 0; i < n; i++) {
			if (!old[i])
				continue;
			j = bt_str_hash(old[i]);
			while (bt_sym.strs[j & (bt_sym.nstrs - 1)])
				j++;
			bt_sym.strs[j & (bt_sym.nstrs - 1)] = old[i];
		}
		free(old);
	}
	mask = bt_sym.nstrs - 1;
	for (j = bt_str_hash(s); bt_sym.strs[j & mask]; j++)
		if (!strcmp(bt_sym.strs[j & mask], s))
			return bt_sym.strs[j & mask];
	bt_sym.strs[j & mask] = bt_strdup(s);
	bt_sym.nstrs_used++;
	return bt_sym.strs[j & mask];
}

/* Say once per "HEX PATH" line if the file is not the one traced. */
static void bt_check_line(const char *line, size_t len)
{
	const char *sp = memchr(line, ' ', len);
	char *hex, *entry;
	size_t i;

	if (!sp)
		return;
	for (i = 0; i < bt_sym.nchecked; i++)
		if (strlen(bt_sym.checked[i]) == len &&
		    !memcmp(bt_sym.checked[i], line, len))
			return;
	entry = strndup(line, len);
	if (!entry)
		return;
	bt_sym.checked = bt_grow(bt_sym.checked, (bt_sym.nchecked + 1) *
				 sizeof(*bt_sym.checked));
	bt_sym.checked[bt_sym.nchecked++] = entry;
	hex = bt_maps_buildid(entry + (sp - line) + 1);
	if (!hex || strlen(hex) != (size_t)(sp - line) ||
	    memcmp(hex, line, sp - line))
		bt_err("%s is not the file that was traced (its build-id differs); its symbols may be wrong",
		       entry + (sp - line) + 1);
	free(hex);
}

static void bt_check_buildids(const struct bt_mapset *m)
{
	const char *p = m->buildids;

	while (p && *p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);

		bt_check_line(p, len);
		p += len + !!nl;
	}
}

/* The maps lines that libdwfl is given (not the vDSO); notes the vDSO. */
static char *bt_dwfl_maps(const char *maps, struct bt_sym_dwfl *d)
{
	char *out = bt_alloc(strlen(maps) + 1), *o = out;
	const char *p = maps;

	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) + 1 : strlen(p);
		unsigned long long start, end;

		if (!bt_maps_is_vdso(p, len)) {
			memcpy(o, p, len);
			o += len;
		} else if (sscanf(p, "%llx-%llx", &start, &end) == 2) {
			d->vdso_start = start;
			d->vdso_end = end;
		}
		p += len;
	}
	*o = '\0';
	return out;
}

/* The least recently used slot, its session ended. */
static struct bt_sym_dwfl *bt_dwfl_slot(void)
{
	struct bt_sym_dwfl *d = &bt_sym.dwfls[0];
	int i;

	for (i = 1; i < BT_SYM_DWFLS; i++)
		if (bt_sym.dwfls[i].used < d->used)
			d = &bt_sym.dwfls[i];
	if (d->dwfl)
		dwfl_end(d->dwfl);
	memset(d, 0, sizeof(*d));
	return d;
}

static struct bt_sym_dwfl *bt_dwfl(const struct bt_trace *t, u32 mapset)
{
	const struct bt_mapset *m = &t->mapsets[mapset];
	struct bt_sym_dwfl *d;
	char *maps;
	FILE *f;
	int i;

	bt_sym.clock++;
	for (i = 0; i < BT_SYM_DWFLS; i++) {
		d = &bt_sym.dwfls[i];
		if (d->used && d->mapset == mapset) {
			d->used = bt_sym.clock;
			return d;
		}
	}
	bt_check_buildids(m);
	d = bt_dwfl_slot();
	d->mapset = mapset;
	d->used = bt_sym.clock;
	d->dwfl = dwfl_begin(&bt_dwfl_cb);
	if (!d->dwfl)
		return d;
	maps = bt_dwfl_maps(m->maps, d);
	/* Without the NUL, which would read as a last line and fail. */
	f = *maps ? fmemopen(maps, strlen(maps), "r") : NULL;
	dwfl_report_begin(d->dwfl);
	if (f)
		dwfl_linux_proc_maps_report(d->dwfl, f);
	dwfl_report_end(d->dwfl, NULL, NULL);
	if (f)
		fclose(f);
	free(maps);
	return d;
}

/* The kind of the x86 instruction at @b, enough to follow calls. */
static u8 bt_insn_kind(const unsigned char *b, size_t len)
{
	size_t i = 0;

	while (i < len && strchr("\x66\x67\xf2\xf3\x2e\x3e\x26\x36\x64\x65\xf0",
				 b[i]) && b[i])
		i++;
	if (i < len && (b[i] & 0xf0) == 0x40)
		i++;		/* REX */
	if (i >= len)
		return BT_INSN_UNKNOWN;
	switch (b[i]) {
	case 0xe8:
		return BT_INSN_CALL;
	case 0xc2: case 0xc3: case 0xca: case 0xcb: case 0xcf:
		return BT_INSN_RET;
	case 0xff:
		if (i + 1 >= len)
			return BT_INSN_UNKNOWN;
		switch ((b[i + 1] >> 3) & 7) {
		case 2: case 3:
			return BT_INSN_CALL;
		case 4: case 5:
			return BT_INSN_JUMP;
		}
		return BT_INSN_UNKNOWN;
	}
	return BT_INSN_JUMP;
}

static u8 bt_insn_at(Dwfl_Module *mod, u64 addr)
{
	GElf_Addr a = addr, bias;
	Elf_Scn *scn;
	Elf_Data *d;

	scn = dwfl_module_address_section(mod, &a, &bias);
	if (!scn)
		return BT_INSN_UNKNOWN;
	d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf || a >= d->d_size)
		return BT_INSN_UNKNOWN;
	return bt_insn_kind((unsigned char *)d->d_buf + a,
			    d->d_size - a < 15 ? d->d_size - a : 15);
}

static void bt_resolve(const struct bt_sym_dwfl *d, u64 addr,
		       struct bt_sym *s)
{
	Dwfl_Module *mod = d->dwfl ? dwfl_addrmodule(d->dwfl, addr) : NULL;
	const char *name, *slash;
	Dwarf_Addr start;
	Dwfl_Line *line;
	GElf_Sym sym;
	GElf_Off off;

	if (!mod && addr >= d->vdso_start && addr < d->vdso_end) {
		s->module = "vdso";
		s->off = addr - d->vdso_start;
		return;
	}
	if (!mod)
		return;
	name = dwfl_module_info(mod, NULL, &start, NULL, NULL, NULL, NULL,
				NULL);
	slash = name ? strrchr(name, '/') : NULL;
	s->module = bt_intern(slash ? slash + 1 : name);
	s->off = addr - start;
	s->name = bt_intern(dwfl_module_addrinfo(mod, addr, &off, &sym, NULL,
						 NULL, NULL));
	if (s->name) {
		s->off = off;
		s->func = addr - off;
	}
	line = dwfl_module_getsrc(mod, addr);
	if (line)
		s->file = bt_intern(dwfl_lineinfo(line, NULL, &s->line, NULL,
						  NULL, NULL));
	s->kind = bt_insn_at(mod, addr);
}

static size_t bt_hash(u32 mapset, u64 addr)
{
	u64 h = (addr ^ ((u64)mapset << 48)) * 0x9e3779b97f4a7c15ULL;

	return h >> 20;
}

static void bt_sym_rehash(void)
{
	struct bt_sym_slot *old = bt_sym.slots;
	size_t n = bt_sym.nslots, i;

	bt_sym.nslots = n ? 2 * n : 4096;
	bt_sym.slots = bt_alloc(bt_sym.nslots * sizeof(*old));
	for (i = 0; i < n; i++) {
		size_t j = bt_hash(old[i].mapset, old[i].addr);

		if (!old[i].used)
			continue;
		while (bt_sym.slots[j & (bt_sym.nslots - 1)].used)
			j++;
		bt_sym.slots[j & (bt_sym.nslots - 1)] = old[i];
	}
	free(old);
}

/**
 * bt_sym_lookup() - what is at an address of a program of the trace
 * @t: the trace
 * @mapset: the mapset of the program
 * @addr: the address
 *
 * Return: its symbol, module, source line and instruction kind; fields
 * that are not known are NULL or 0.  Valid until the next lookup (the
 * strings until bt_sym_exit()); a vDSO address reads as module "vdso".
 */
const struct bt_sym *bt_sym_lookup(const struct bt_trace *t, u32 mapset,
				   u64 addr)
{
	struct bt_sym_slot *s;
	size_t j;

	if (2 * (bt_sym.used + 1) > bt_sym.nslots)
		bt_sym_rehash();
	for (j = bt_hash(mapset, addr);; j++) {
		s = &bt_sym.slots[j & (bt_sym.nslots - 1)];
		if (!s->used)
			break;
		if (s->addr == addr && s->mapset == mapset)
			return &s->sym;
	}
	s->used = true;
	s->addr = addr;
	s->mapset = mapset;
	bt_sym.used++;
	if (mapset < t->nmapsets)
		bt_resolve(bt_dwfl(t, mapset), addr, &s->sym);
	return &s->sym;
}

/**
 * bt_sym_exit() - free the symbol tables and the cache
 */
void bt_sym_exit(void)
{
	size_t i;

	for (i = 0; i < BT_SYM_DWFLS; i++)
		if (bt_sym.dwfls[i].dwfl)
			dwfl_end(bt_sym.dwfls[i].dwfl);
	for (i = 0; i < bt_sym.nstrs; i++)
		free(bt_sym.strs[i]);
	for (i = 0; i < bt_sym.nchecked; i++)
		free(bt_sym.checked[i]);
	free(bt_sym.strs);
	free(bt_sym.checked);
	free(bt_sym.slots);
	memset(&bt_sym, 0, sizeof(bt_sym));
}
