// SPDX-License-Identifier: GPL-2.0
#include "diagnose_rules.h"
#include "parse.h"

/*
 * How wpstat diagnose's rules (diagnose.c) make a finding: the settings
 * they read (sysfs, mountinfo), a row's numbers and texts as evidence,
 * remedies, where a cause's waits were, who synced the file, and what
 * each write-protect trigger means with its remedy.
 */

const char *dx_severity_name(enum dx_severity s)
{
	static const char *const names[] = {
		[DX_INFO] = "info", [DX_LOW] = "low", [DX_MEDIUM] = "medium",
		[DX_HIGH] = "high",
	};

	return names[s];
}

enum dx_severity dx_severity_of(double share)
{
	return share >= 0.5 ? DX_HIGH : share >= 0.2 ? DX_MEDIUM : DX_LOW;
}

/* ---- the system's settings ---------------------------------------------- */

/* A sysfs or procfs file's first line, trimmed, into @buf; false if none. */
bool dx_read_setting(const char *path, char *buf, size_t len)
{
	char *line = read_first_line(path);

	if (!line)
		return false;
	snprintf(buf, len, "%s", line);
	free(line);
	return true;
}

/*
 * The queue attribute @attr of the block device MAJ:MIN, or of its disk
 * for a partition; false for a device with no queue (btrfs's anonymous
 * devices, tmpfs, NFS).
 */
bool dx_queue_attr(unsigned int major, unsigned int minor,
		   const char *attr, char *buf, size_t len, char *path,
		   size_t plen)
{
	snprintf(path, plen, "/sys/dev/block/%u:%u/queue/%s", major, minor,
		 attr);
	if (dx_read_setting(path, buf, len))
		return true;
	snprintf(path, plen, "/sys/dev/block/%u:%u/../queue/%s", major, minor,
		 attr);
	return dx_read_setting(path, buf, len);
}

/* /proc/self/mountinfo's first mount of device MAJ:MIN. */
bool dx_mount_of(unsigned int major, unsigned int minor,
		 struct dx_mount *m)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL, want[32], *save, *tok, *sep;
	size_t n = 0;
	bool found = false;
	int field;

	if (!f)
		return false;
	snprintf(want, sizeof(want), "%u:%u", major, minor);
	while (!found && getline(&line, &n, f) > 0) {
		sep = strstr(line, " - ");
		if (!sep)
			continue;
		*sep = '\0';
		for (field = 0, tok = strtok_r(line, " ", &save); tok;
		     tok = strtok_r(NULL, " ", &save), field++) {
			if (field == 2 && strcmp(tok, want))
				break;
			if (field == 4)
				wpstat_unescape_octal(m->point, sizeof(m->point), tok);
			if (field == 5) {
				snprintf(m->options, sizeof(m->options), "%s", tok);
				found = true;
			}
		}
		if (!found)
			continue;
		/* After " - ": fstype, source, superblock options. */
		tok = strtok_r(sep + 3, " \n", &save);
		snprintf(m->fstype, sizeof(m->fstype), "%s", tok ? tok : "?");
		tok = strtok_r(NULL, " \n", &save);
		if (tok)
			wpstat_unescape_octal(m->source, sizeof(m->source), tok);
		tok = strtok_r(NULL, " \n", &save);
		if (tok && strlen(m->options) + strlen(tok) + 2 < sizeof(m->options)) {
			strcat(m->options, ",");
			strcat(m->options, tok);
		}
	}
	free(line);
	fclose(f);
	return found;
}

bool dx_has_option(const char *options, const char *name)
{
	size_t len = strlen(name);
	const char *p = options;

	while ((p = strstr(p, name))) {
		if ((p == options || p[-1] == ',') &&
		    (p[len] == ',' || p[len] == '\0'))
			return true;
		p += len;
	}
	return false;
}

/* ---- building findings -------------------------------------------------- */

void dx_ev_num(struct dx_finding *f, const char *name, uint64_t v,
	       const char *unit, const char *source)
{
	struct dx_evidence *e;

	if (f->nev == DX_MAX_EVIDENCE)
		return;
	e = &f->ev[f->nev++];
	snprintf(e->name, sizeof(e->name), "%s", name);
	e->numeric = true;
	e->value = v;
	e->unit = unit;
	e->source = source;
}

void __attribute__((format(printf, 4, 5)))
dx_ev_text(struct dx_finding *f, const char *name, const char *source,
	   const char *fmt, ...)
{
	struct dx_evidence *e;
	va_list ap;

	if (f->nev == DX_MAX_EVIDENCE)
		return;
	e = &f->ev[f->nev++];
	snprintf(e->name, sizeof(e->name), "%s", name);
	e->numeric = false;
	e->source = source;
	va_start(ap, fmt);
	vsnprintf(e->text, sizeof(e->text), fmt, ap);
	va_end(ap);
}

void __attribute__((format(printf, 4, 5)))
dx_remedy(struct dx_finding *f, const char *effect, const char *cost,
       const char *fmt, ...)
{
	struct dx_remedy *r;
	va_list ap;

	if (f->nrem == DX_MAX_REMEDIES)
		return;
	r = &f->rem[f->nrem++];
	r->effect = effect;
	r->cost = cost;
	va_start(ap, fmt);
	vsnprintf(r->change, sizeof(r->change), fmt, ap);
	va_end(ap);
}

struct dx_finding *dx_finding_new(struct dx_report *r, const char *rule,
				  const char *title, uint64_t ns)
{
	struct dx_finding *f;

	if (r->n == DX_MAX_FINDINGS)
		return NULL;
	f = &r->f[r->n++];
	memset(f, 0, sizeof(*f));
	f->rule = rule;
	snprintf(f->title, sizeof(f->title), "%s", title ? title : "");
	f->ns = ns;
	f->share = r->stall_ns ? (double)ns / r->stall_ns : -1;
	f->severity = r->stall_ns ? dx_severity_of(f->share) : DX_INFO;
	return f;
}

void dx_finding_of_item(struct dx_finding *f, const struct stall_item *it)
{
	f->pid = it->row->tgid;
	snprintf(f->comm, sizeof(f->comm), "%s", it->row->comm);
	if (it->path)
		snprintf(f->file, sizeof(f->file), "%s", it->path);
	else
		snprintf(f->file, sizeof(f->file), "%u:%u:%" PRIu64,
			 it->row->file.major, it->row->file.minor,
			 it->row->file.ino);
}

/* A stall column of @it, 0 if absent or "-". */
uint64_t dx_item_val(const struct stall_list *l,
		     const struct stall_item *it, enum stall_field f)
{
	int c = l->cols.col[f];

	return c >= 0 && it->avail[c] ? it->val[c] : 0;
}

/* An inode counter of the file of @it, 0 if absent or "-". */
uint64_t dx_file_val(const struct file_list *fl,
		     const struct stall_item *it, const char *name)
{
	int c = wpstat_counter_index(fl->snap, name);
	size_t i;

	if (c < 0)
		return 0;
	for (i = 0; i < fl->n; i++) {
		const struct wpstat_row *r = fl->rows[i].row;

		if (!wpstat_row_key_cmp(r, &it->row->file))
			return fl->rows[i].avail[c] ? fl->rows[i].val[c] : 0;
	}
	return 0;
}

/* Each cause's worst right after its time (dx_ev_cause()), from the list. */
#define WPSTAT_STALL(...)
#define WPSTAT_STALL_CAUSE(id, ...)					\
	_Static_assert(STALL_##id##_MAX == STALL_##id##_NS + 1,		\
		       "wpstat_stalls.def: " #id "'s max right after its ns");
#include "wpstat_stalls.def"
#undef WPSTAT_STALL_CAUSE
#undef WPSTAT_STALL

/*
 * A process that took no write fault waited in write(2) (or its kin:
 * pwrite, writev); one whose faults' named time (fault_ns less its
 * unnamed part: every wait made inside them) is less than the cause's
 * time waited outside them too.
 */
enum dx_where dx_where_of(const struct stall_list *l,
			  const struct stall_item *it, enum stall_cause k)
{
	const struct stall_sum *s = &it->sum;
	uint64_t faults = dx_item_val(l, it, STALL_FAULT_FIRST) +
			  dx_item_val(l, it, STALL_FAULT_WP);

	if (!faults)
		return DX_IN_WRITES;
	if (s->have_ns[CAUSE_FAULT] && s->have_unnamed &&
	    s->ns[k] + s->unnamed_ns > s->ns[CAUSE_FAULT])
		return DX_IN_BOTH;
	return DX_IN_FAULTS;
}

/* "write faults", "write(2)" or both, as a title's subject. */
const char *dx_where_subject(enum dx_where w)
{
	return w == DX_IN_WRITES ? "write(2) calls" :
	       w == DX_IN_BOTH ? "write faults and write(2) calls" :
	       "write faults";
}

/* A cause's events, time and worst (the field after its time), as evidence. */
void dx_ev_cause(struct dx_finding *f, const struct stall_list *l,
		 const struct stall_item *it, enum stall_field events,
		 enum stall_field ns)
{
	dx_ev_num(f, stall_fields[events].name, dx_item_val(l, it, events), "events",
	       "/proc/wpstat/stalls");
	dx_ev_num(f, stall_fields[ns].name, dx_item_val(l, it, ns), "ns",
	       "/proc/wpstat/stalls");
	dx_ev_num(f, stall_fields[ns + 1].name, dx_item_val(l, it, ns + 1), "ns",
	       "/proc/wpstat/stalls");
}

/*
 * Who synced the file of @it, from the wp_caused column of every
 * process's row for it (PTEs write-protected in its own msync, fsync or
 * sync_file_range), the most first, as evidence.  The pid of the process
 * that did most, or 0 if none did.
 */
uint32_t dx_synced_by(struct dx_finding *f, const struct dx_input *in,
		      const struct stall_item *it)
{
	const struct stall_list *all = in->everyone ? in->everyone : in->stalls;
	const struct stall_item *top[3] = { NULL, NULL, NULL };
	char list[DX_TEXT] = "";
	uint64_t sum = 0;
	size_t i, len;
	int k, j;

	for (i = 0; i < all->n; i++) {
		const struct stall_item *o = &all->items[i];

		if (!o->sum.have_wp_caused || !o->sum.wp_caused ||
		    wpstat_row_key_cmp(&o->row->file, &it->row->file))
			continue;
		sum += o->sum.wp_caused;
		for (k = 0; k < 3; k++) {
			if (top[k] && top[k]->sum.wp_caused >= o->sum.wp_caused)
				continue;
			for (j = 2; j > k; j--)
				top[j] = top[j - 1];
			top[k] = o;
			break;
		}
	}
	if (!top[0])
		return 0;
	for (k = 0; k < 3 && top[k]; k++) {
		len = strlen(list);
		snprintf(list + len, sizeof(list) - len,
			 "%spid %" PRIu32 " (%s%s) %" PRIu64, k ? ", " : "",
			 top[k]->row->tgid, top[k]->row->comm,
			 top[k]->row->tgid == it->row->tgid ? ", itself" : "",
			 top[k]->sum.wp_caused);
	}
	dx_ev_text(f, "synced_by", "/proc/wpstat/stalls wp_caused",
		"%s (of %" PRIu64 " PTEs write-protected by processes' own syncs)",
		list, sum);
	return top[0]->row->tgid;
}

/*
 * What write-protected the file's pages, as evidence, and the remedy for
 * the trigger that did most: the waits in a write-protect fault exist only
 * because writeback cleaned the page the process keeps storing to.
 */
void dx_triggers(struct dx_finding *f, const struct dx_input *in,
		 const struct stall_item *it, enum dx_where where)
{
	const char *to = where == DX_IN_WRITES ? "writing" :
			 where == DX_IN_BOTH ? "writing or storing" : "storing";
	const char *effect = where == DX_IN_WRITES ?
		"fewer commits and writebacks to meet" : "fewer write-protect faults";
	uint64_t n[NR_MKCLEAN_TRIGGERS], all = 0, best = 0;
	char list[DX_TEXT] = "", val[32], who[96];
	int i, top = -1;
	uint32_t syncer;
	size_t len;

	for (i = 0; i < NR_MKCLEAN_TRIGGERS; i++) {
		n[i] = dx_file_val(in->files, it, mkclean_triggers[i].column);
		all += n[i];
		if (n[i] > best) {
			best = n[i];
			top = i;
		}
	}
	if (top < 0)
		return;
	for (i = 0; i < NR_MKCLEAN_TRIGGERS; i++) {
		len = strlen(list);
		if (n[i] && len < sizeof(list) - 1)
			snprintf(list + len, sizeof(list) - len, "%s%s %" PRIu64,
				 len ? ", " : "", mkclean_triggers[i].name, n[i]);
	}
	dx_ev_text(f, "write_protected_by", "/proc/wpstat/inodes mkclean_<trigger>",
		"%s (of %" PRIu64 " folio_mkclean calls)", list, all);
	syncer = dx_synced_by(f, in, it);
	if (!syncer && where == DX_IN_WRITES)
		snprintf(who, sizeof(who), "whose syncs they are is not known: they write-protected no mapping");
	else if (!syncer)
		snprintf(who, sizeof(who), "no process's sync was seen (level counts, or a reset since)");
	else if (syncer == it->row->tgid)
		snprintf(who, sizeof(who), "the syncs are its own");
	else
		snprintf(who, sizeof(who), "the syncs are pid %" PRIu32 "'s, not its own", syncer);
	switch (top) {
	case TRIG_MSYNC:
		dx_remedy(f, effect, "data reaches the disk later",
		       "msync(MS_SYNC) less often, or over the cold part of the mapping only: each one cleans and write-protects every dirty page it covers (%s)", who);
		break;
	case TRIG_FSYNC:
	case TRIG_SYNC_FILE_RANGE:
		dx_remedy(f, effect, "data reaches the disk later, or the file is split in two",
		       "fsync the file less often, or stop %s to the pages being synced (double-buffer: sync the half not being written); %s", to, who);
		break;
	case TRIG_SYNC:
		dx_remedy(f, effect, "none for this file; the sync(2)/syncfs(2) caller loses its guarantee",
		       "find what calls sync(2) or syncfs(2) on this filesystem (e.g. a backup or container runtime)");
		break;
	case TRIG_FLUSHER_PERIODIC:
		dx_read_setting("/proc/sys/vm/dirty_expire_centisecs", val, sizeof(val));
		dx_remedy(f, "the flusher cleans pages older than this only", "more dirty data lost on a crash; larger writeback bursts",
		       "sysctl vm.dirty_expire_centisecs=<longer than the pages stay hot> (now %s)", val);
		break;
	case TRIG_FLUSHER_BACKGROUND:
		dx_read_setting("/proc/sys/vm/dirty_background_bytes", val, sizeof(val));
		dx_remedy(f, "background writeback starts later", "more dirty memory; longer fsync",
		       "sysctl vm.dirty_background_bytes=<larger> (now %s; 0: dirty_background_ratio applies)", val);
		break;
	case TRIG_RECLAIM:
		dx_remedy(f, "reclaim stops writing the file back", "memory",
		       "give the workload more memory (or raise its cgroup's memory.high): reclaim is writing dirty pages back to free them");
		break;
	}
}
