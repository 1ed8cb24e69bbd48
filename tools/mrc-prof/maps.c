/* SPDX-License-Identifier: MIT */
/* maps.c - /proc/PID/maps snapshots and ELF load-segment translation. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "maps.h"
#include "spaces.h"

struct mp_mapping {
	uint64_t start, end, off;
	uint32_t obj;		/* string id of the path or [name] */
	int exec;
	int elf;		/* index into m->elves, -1: not an ELF file */
};

struct mp_space {
	uint32_t tgid;		/* first: spaces.h */
	struct mp_mapping *v;
	size_t n;
	int loaded;
};

#define MP_MAX_LOADS 16
struct mp_elf {			/* PT_LOAD segments of one file */
	uint32_t obj;
	int nloads;
	uint64_t p_offset[MP_MAX_LOADS], p_vaddr[MP_MAX_LOADS], p_filesz[MP_MAX_LOADS];
};

struct mp_maps {
	struct mp_trace *t;
	struct mp_space *spaces;
	size_t nspaces;
	struct mp_elf *elves;
	size_t nelves;
};

int mp_maps_create(struct mp_trace *t, struct mp_maps **out)
{
	struct mp_maps *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	m->t = t;
	*out = m;
	return 0;
}

void mp_maps_destroy(struct mp_maps *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nspaces; i++)
		free(m->spaces[i].v);
	free(m->spaces);
	free(m->elves);
	free(m);
}

static struct mp_space *space_get(struct mp_maps *m, pid_t tgid)
{
	return mp_space_get((void **)&m->spaces, &m->nspaces, sizeof(struct mp_space),
			    (uint32_t)tgid, NULL);
}

void mp_maps_forget(struct mp_maps *m, pid_t tgid)
{
	for (size_t i = 0; i < m->nspaces; i++) {
		if (m->spaces[i].tgid != (uint32_t)tgid)
			continue;
		free(m->spaces[i].v);
		mp_space_remove(m->spaces, &m->nspaces, sizeof(m->spaces[0]), i);
		return;
	}
}

static void elf_read_loads(struct mp_elf *e, const char *path)
{
	Elf64_Ehdr eh;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	e->nloads = 0;
	if (fd < 0)
		return;
	if (pread(fd, &eh, sizeof(eh), 0) == sizeof(eh) &&
	    !memcmp(eh.e_ident, ELFMAG, SELFMAG) && eh.e_ident[EI_CLASS] == ELFCLASS64 &&
	    eh.e_phentsize == sizeof(Elf64_Phdr)) {
		for (int i = 0; i < eh.e_phnum && e->nloads < MP_MAX_LOADS; i++) {
			Elf64_Phdr ph;

			if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) !=
			    sizeof(ph))
				break;
			if (ph.p_type != PT_LOAD)
				continue;
			e->p_offset[e->nloads] = ph.p_offset;
			e->p_vaddr[e->nloads] = ph.p_vaddr;
			e->p_filesz[e->nloads] = ph.p_filesz;
			e->nloads++;
		}
	}
	close(fd);
}

static int elf_get(struct mp_maps *m, uint32_t obj)
{
	struct mp_elf *e;

	for (size_t i = 0; i < m->nelves; i++)
		if (m->elves[i].obj == obj)
			return m->elves[i].nloads ? (int)i : -1;
	e = realloc(m->elves, (m->nelves + 1) * sizeof(*e));
	if (!e)
		return -1;
	m->elves = e;
	e = &m->elves[m->nelves];
	e->obj = obj;
	elf_read_loads(e, mp_trace_str(m->t, obj));
	m->nelves++;
	return e->nloads ? (int)(m->nelves - 1) : -1;
}

static int space_load(struct mp_maps *m, struct mp_space *s)
{
	char path[64], line[4352];
	FILE *f;
	size_t cap = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)s->tgid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	s->n = 0;
	while (fgets(line, sizeof(line), f)) {
		uint64_t start, end, off;
		char perms[8], name[4097] = "";
		struct mp_mapping *mp;
		long obj;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %4096[^\n]",
			   &start, &end, perms, &off, name) < 4)
			continue;
		if (s->n == cap) {
			cap = cap ? cap * 2 : 64;
			mp = realloc(s->v, cap * sizeof(*mp));
			if (!mp) {
				fclose(f);
				return -ENOMEM;
			}
			s->v = mp;
		}
		obj = mp_trace_intern(m->t, name[0] ? name : "[anon]");
		if (obj < 0) {
			fclose(f);
			return -ENOMEM;
		}
		mp = &s->v[s->n++];
		mp->start = start;
		mp->end = end;
		mp->off = off;
		mp->obj = (uint32_t)obj;
		mp->exec = perms[2] == 'x';
		mp->elf = name[0] == '/' && mp->exec ? elf_get(m, mp->obj) : -1;
	}
	fclose(f);
	s->loaded = 1;
	return 0;
}

static struct mp_mapping *space_find(struct mp_space *s, uint64_t addr)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {	/* /proc/PID/maps is sorted by address */
		size_t mid = (lo + hi) / 2;

		if (addr < s->v[mid].start)
			hi = mid;
		else if (addr >= s->v[mid].end)
			lo = mid + 1;
		else
			return &s->v[mid];
	}
	return NULL;
}

static uint64_t elf_vaddr(const struct mp_maps *m, const struct mp_mapping *mp, uint64_t addr)
{
	uint64_t file_off = addr - mp->start + mp->off;
	const struct mp_elf *e;

	if (mp->elf < 0)
		return mp->obj && mp_trace_str(m->t, mp->obj)[0] == '/' ? file_off
									  : addr - mp->start;
	e = &m->elves[mp->elf];
	for (int i = 0; i < e->nloads; i++)
		if (file_off >= e->p_offset[i] && file_off < e->p_offset[i] + e->p_filesz[i])
			return file_off - e->p_offset[i] + e->p_vaddr[i];
	return file_off;
}

int mp_maps_lookup(struct mp_maps *m, pid_t tgid, uint64_t addr,
		   uint32_t *obj, uint64_t *vaddr)
{
	struct mp_space *s = space_get(m, tgid);
	struct mp_mapping *mp = NULL;

	if (!s)
		return -1;
	if (s->loaded)
		mp = space_find(s, addr);
	if (!mp && space_load(m, s) == 0)
		mp = space_find(s, addr);
	if (!mp)
		return -1;
	*obj = mp->obj;
	*vaddr = elf_vaddr(m, mp, addr);
	return mp->exec;
}

int mp_maps_is_code(struct mp_maps *m, pid_t tgid, uint64_t addr)
{
	struct mp_space *s = space_get(m, tgid);
	struct mp_mapping *mp;

	if (!s || !s->loaded)
		return 0;
	mp = space_find(s, addr);
	return mp && mp->exec;
}

uint64_t mp_maps_mapping_len(pid_t tgid, uint64_t addr)
{
	char path[64], line[512];
	uint64_t len = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)tgid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		uint64_t start, end;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64, &start, &end) == 2 && start == addr) {
			len = end - start;
			break;
		}
	}
	fclose(f);
	return len;
}
