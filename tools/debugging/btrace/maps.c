// SPDX-License-Identifier: GPL-2.0
/*
 * Snapshots of a process's file mappings, as /proc/PID/maps lines, and
 * the build-ids of the files, so that a saved trace can be symbolized
 * later and elsewhere (and a changed file noticed).
 */
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "btrace.h"

struct bt_line {
	u64 start;
	u64 end;
	const char *text;
	size_t len;
};

/*
 * Only mappings of a file can be symbolized, and the vDSO is named: its
 * code could only be read from the live process (sym.c keeps it from
 * libdwfl, whose attempt to read it confuses the module after it).
 */
static bool bt_maps_wanted(const char *line, size_t len)
{
	return memchr(line, '/', len) || bt_maps_is_vdso(line, len);
}

/**
 * bt_maps_is_vdso() - whether a maps line is that of the vDSO
 * @line: the line
 * @len: its length, with or without its newline
 *
 * Return: true if it names "[vdso]".
 */
bool bt_maps_is_vdso(const char *line, size_t len)
{
	while (len && (line[len - 1] == '\n' || line[len - 1] == ' '))
		len--;
	return len >= 6 && !memcmp(line + len - 6, "[vdso]", 6);
}

static size_t bt_maps_split(const char *maps, struct bt_line **out,
			    size_t n)
{
	const char *p = maps;

	while (p && *p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) + 1 : strlen(p);
		struct bt_line l = { .text = p, .len = len };

		if (sscanf(p, "%llx-%llx", &l.start, &l.end) == 2 &&
		    bt_maps_wanted(p, len)) {
			*out = bt_grow(*out, (n + 1) * sizeof(l));
			(*out)[n++] = l;
		}
		p += len;
	}
	return n;
}

static int bt_line_cmp(const void *a, const void *b)
{
	const struct bt_line *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static char *bt_maps_join(struct bt_line *l, size_t n)
{
	size_t i, len = 1;
	char *s, *p;

	for (i = 0; i < n; i++)
		len += l[i].len + 1;
	s = bt_alloc(len);
	for (p = s, i = 0; i < n; i++) {
		memcpy(p, l[i].text, l[i].len);
		p += l[i].len;
		if (p[-1] != '\n')
			*p++ = '\n';
	}
	*p = '\0';
	return s;
}

/**
 * bt_maps_read() - the file mappings of a process now
 * @tgid: the process, or any live thread of it
 *
 * Return: its maps lines that name a file, sorted; NULL if it is gone.
 */
char *bt_maps_read(pid_t tgid)
{
	struct bt_line *l = NULL;
	size_t len = 0, n;
	char path[64];
	char *buf = NULL, *s;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)tgid);
	f = fopen(path, "r");
	if (!f)
		return NULL;
	while (!feof(f)) {
		buf = bt_grow(buf, len + 65536 + 1);
		len += fread(buf + len, 1, 65536, f);
		if (ferror(f))
			break;
	}
	fclose(f);
	if (!buf)
		return NULL;
	buf[len] = '\0';
	n = bt_maps_split(buf, &l, 0);
	qsort(l, n, sizeof(*l), bt_line_cmp);
	s = bt_maps_join(l, n);
	free(l);
	free(buf);
	return s;
}

/**
 * bt_maps_merge() - what a program has mapped so far
 * @old: the previous snapshot of the program, or NULL
 * @cur: the new one
 *
 * A mapping of @cur replaces the mappings of @old it overlaps; the others
 * stay, so that a library unmapped after its code ran is still known.
 *
 * Return: the merged lines, or NULL if they are those of @old.
 */
char *bt_maps_merge(const char *old, const char *cur)
{
	struct bt_line *l = NULL;
	size_t n, nold, i, j;
	bool changed = false;
	char *s;

	nold = bt_maps_split(old, &l, 0);
	n = bt_maps_split(cur, &l, nold);
	for (i = nold; i < n; i++) {
		bool same = false;

		for (j = 0; j < nold; j++) {
			if (!l[j].text || l[j].end <= l[i].start ||
			    l[j].start >= l[i].end)
				continue;
			if (l[j].len == l[i].len &&
			    !memcmp(l[j].text, l[i].text, l[i].len))
				same = true;
			else
				l[j].text = NULL;
		}
		if (same)
			l[i].text = NULL;
		else
			changed = true;
	}
	if (!changed && old) {
		free(l);
		return NULL;
	}
	for (i = j = 0; i < n; i++)
		if (l[i].text)
			l[j++] = l[i];
	qsort(l, j, sizeof(*l), bt_line_cmp);
	s = bt_maps_join(l, j);
	free(l);
	return s;
}

/**
 * bt_maps_buildid() - the GNU build-id of a file
 * @path: the file
 *
 * Only a regular file is read (a FIFO or a device mapped under a path
 * is not opened for long: O_NONBLOCK).
 *
 * Return: the build-id in hex (to be freed), or NULL if it has none.
 */
char *bt_maps_buildid(const char *path)
{
	char *hex = NULL;
	size_t i, nph;
	struct stat st;
	Elf *elf;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return NULL;
	}
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_getphdrnum(elf, &nph))
		nph = 0;
	for (i = 0; i < nph && !hex; i++) {
		size_t off = 0, name, desc;
		GElf_Phdr ph;
		GElf_Nhdr nh;
		Elf_Data *d;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_NOTE)
			continue;
		d = elf_getdata_rawchunk(elf, ph.p_offset, ph.p_filesz,
					 ELF_T_NHDR);
		while (d && !hex &&
		       (off = gelf_getnote(d, off, &nh, &name, &desc)) > 0) {
			const unsigned char *b = (unsigned char *)d->d_buf + desc;
			u32 k;

			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
			    memcmp((char *)d->d_buf + name, "GNU", 4))
				continue;
			hex = bt_alloc(2 * nh.n_descsz + 1);
			for (k = 0; k < nh.n_descsz; k++)
				sprintf(hex + 2 * k, "%02x", b[k]);
		}
	}
	elf_end(elf);
	close(fd);
	return hex;
}

/**
 * bt_maps_buildids() - the build-ids of the files of a snapshot
 * @maps: the snapshot
 *
 * Return: "HEX PATH\n" lines, one per file that has a build-id.
 */
char *bt_maps_buildids(const char *maps)
{
	size_t len = 0, cap = 1;
	const char *p = maps;
	char *out = bt_alloc(1);
	char *last = NULL;

	elf_version(EV_CURRENT);
	while (p && *p) {
		const char *nl = strchr(p, '\n');
		const char *path = memchr(p, '/', nl ? (size_t)(nl - p) : strlen(p));
		size_t plen = nl ? (size_t)(nl - path) : strlen(path ? path : "");
		char *file, *hex;

		p = nl ? nl + 1 : NULL;
		if (!path)
			continue;
		file = strndup(path, plen);
		if (!file || (last && !strcmp(last, file))) {
			free(file);
			continue;
		}
		free(last);
		last = file;
		hex = bt_maps_buildid(file);
		if (!hex)
			continue;
		cap = len + strlen(hex) + plen + 3;
		out = bt_grow(out, cap);
		len += sprintf(out + len, "%s %s\n", hex, file);
		free(hex);
	}
	free(last);
	return out;
}
