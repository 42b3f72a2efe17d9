// SPDX-License-Identifier: GPL-2.0
/*
 * wpstat - load, control and read the wpstat kernel module.
 *
 *   wpstat load [--module PATH] [PARAM=VALUE...]   insert it (libkmod)
 *   wpstat unload                                  remove it
 *   wpstat status [--json]                         module, probes, filters
 *   wpstat show [...]                              per-inode counters
 *   wpstat watch [...]                             per-interval changes
 *   wpstat run [...] -- CMD [ARGS...]              what CMD caused
 *   wpstat stalls [...]                            who stalled, where, why
 *   wpstat top [...]                               stalls per interval
 *   wpstat reset | enable | disable | filter ...   debugfs wpstat/control
 *   wpstat level ... | histogram ...               debugfs wpstat/control
 *
 * Errors are one line on stderr starting "wpstat: "; exit status 1 for
 * run-time errors, 2 for usage errors (run: the command's own status).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libkmod.h>

#include "delta.h"
#include "fmt.h"
#include "json.h"
#include "wpstat_proc.h"

#ifndef WPSTAT_VERSION
#define WPSTAT_VERSION		"0.1"
#endif

#define MODULE_NAME		"wpstat"
#define SYSFS_MODULE_DIR	"/sys/module/" MODULE_NAME
#define SYSFS_PARAMS_DIR	SYSFS_MODULE_DIR "/parameters"
#define DEBUGFS_MOUNT		"/sys/kernel/debug"
#define DEBUGFS_DIR		DEBUGFS_MOUNT "/wpstat"
#define DEBUGFS_PROBES		DEBUGFS_DIR "/probes"
#define DEBUGFS_CONFIG		DEBUGFS_DIR "/config"
#define DEBUGFS_MAGIC_NR	0x64626720
#define WATCH_DEFAULT_TOP	20
#define WATCH_MAX_INTERVAL_S	86400.0
#define RESOLVE_NFTW_FDS	32
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

enum {
	EXIT_RUNTIME		= 1,
	EXIT_USAGE		= 2,
	EXIT_CANNOT_EXEC	= 126,
	EXIT_NOT_FOUND		= 127,
};

/* ---- errors ------------------------------------------------------------- */

static int fail(int code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* One line on stderr; returns @code for the caller to pass on. */
static int fail(int code, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("wpstat: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return code;
}

#define usage_error(...)	fail(EXIT_USAGE, __VA_ARGS__)
#define runtime_error(...)	fail(EXIT_RUNTIME, __VA_ARGS__)

static void usage(FILE *out)
{
	fputs(
"Usage: wpstat COMMAND [OPTIONS]\n"
"\n"
"Per-inode counters of shared-mapping write faults (page_mkwrite), writeback\n"
"write-protection (folio_mkclean), stable-page waits and dirty balancing,\n"
"from the wpstat kernel module.\n"
"\n"
"Commands:\n"
"  load [--module PATH] [PARAM=VALUE...]\n"
"                      insert the module (params: level, max_inodes,\n"
"                      max_stalls, enable, skip_probes); already loaded is\n"
"                      not an error\n"
"  unload              remove the module\n"
"  status [--json]     module, parameters, probes, filters, table use\n"
"  show [--sort FIELD] [--top N] [--json | --format table|json|prometheus]\n"
"       [--resolve DIR...]\n"
"                      the counters of every tracked inode (default sort:\n"
"                      mkwrite_wp, largest first)\n"
"  watch [--interval S] [--top N] [--count N] [--sort FIELD] [--resolve DIR]\n"
"                      what changed in each interval, top-style\n"
"  stalls [--sort time|count] [--pid PID]\n"
"         [--json | --format table|json|prometheus] [--resolve DIR...]\n"
"                      who stalled, on which file, why: one row per process\n"
"                      and file, most stall time first\n"
"  top [--interval S] [--count N] [--limit ROWS] [--resolve DIR...]\n"
"                      the stalls of each interval, most stall time first\n"
"  run [--json] [--reset] [-o FILE] [--resolve DIR] -- CMD [ARGS...]\n"
"                      run CMD and report the counters it changed, what\n"
"                      write-protected its files, its own stalls, its wall\n"
"                      time and exit status (report on stderr, or FILE)\n"
"  reset               clear every counter and the stalls table\n"
"  enable | disable    start or stop counting\n"
"  level [counts|timing]\n"
"                      show or switch what is attached: counts (default,\n"
"                      cheapest) or timing (adds mkwrite_ns, mkwrite_max_ns,\n"
"                      mkclean_ptes, and the stalls' fault_ns, fault_max_ns)\n"
"  filter dev MAJ:MIN | filter pid TGID | filter path FILE | filter none\n"
"                      count only one filesystem and/or one process\n"
"  histogram all | histogram dev MAJ:MIN | histogram inode MAJ:MIN:INO[:GEN]\n"
"      | histogram path FILE\n"
"                      which events the debugfs histograms count (clears\n"
"                      them)\n"
"\n"
"Options:\n"
"  -h, --help          show this help and exit\n"
"  --version           show the version and exit\n"
"\n"
"Exit status: 0 success, 1 run-time error, 2 usage error; run exits with the\n"
"command's status (126 not executable, 127 not found, 128+N killed by signal\n"
"N).  See wpstat(8).\n", out);
}

/* One line for what getopt_long() rejected (opterr is 0); @cmd may be "". */
static int option_error(const char *cmd, int c, char *const *argv,
			const char *shortopts)
{
	const char *arg = argv[optind - 1], *sep = *cmd ? ": " : "";

	if (c == ':')
		return usage_error("%s%soption '%s' needs a value", cmd, sep, arg);
	if (optopt > 0 && optopt < 128 && !strchr(shortopts, optopt))
		return usage_error("%s%sunknown option '-%c' (see wpstat --help)",
				   cmd, sep, optopt);
	if (optopt == 0)
		return usage_error("%s%sunknown option '%s' (see wpstat --help)",
				   cmd, sep, arg);
	return usage_error("%s%soption '%s' takes no value", cmd, sep, arg);
}

/* ---- small helpers ------------------------------------------------------ */

static const char *kernel_release(void)
{
	static struct utsname uts;	/* filled once; read-only after */

	if (!uts.release[0] && uname(&uts))
		return "unknown";
	return uts.release;
}

/* A decimal integer in [min, max]; "1e3", "-1", " 5" and "0x10" are not. */
static int parse_uint(const char *what, const char *arg, uint64_t min,
		      uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!isdigit((unsigned char)arg[0]))
		return usage_error("%s: invalid number '%s'", what, arg);
	errno = 0;
	v = strtoull(arg, &end, 10);
	if (*end)
		return usage_error("%s: invalid number '%s'", what, arg);
	if (errno == ERANGE || v > max)
		return usage_error("%s: '%s' is too large (at most %" PRIu64 ")",
				   what, arg, max);
	if (v < min)
		return usage_error("%s: must be at least %" PRIu64 " (got %s)",
				   what, min, arg);
	*out = v;
	return 0;
}

/* Seconds as a positive decimal number, at most @max. */
static int parse_seconds(const char *what, const char *arg, double max,
			 uint64_t *out_ns)
{
	char *end;
	double s;

	if (!isdigit((unsigned char)arg[0]) && arg[0] != '.')
		return usage_error("%s: invalid number of seconds '%s'", what, arg);
	errno = 0;
	s = strtod(arg, &end);
	if (*end || errno)
		return usage_error("%s: invalid number of seconds '%s'", what, arg);
	if (s <= 0 || s > max)
		return usage_error("%s: must be more than 0 and at most %.0f seconds (got %s)",
				   what, max, arg);
	*out_ns = (uint64_t)(s * 1e9);
	if (!*out_ns)
		*out_ns = 1;
	return 0;
}

/* "MAJ:MIN" as two decimal numbers, nothing else. */
static bool parse_dev(const char *arg, unsigned int *maj, unsigned int *min)
{
	unsigned long a, b;
	char *end;

	if (!isdigit((unsigned char)arg[0]))
		return false;
	errno = 0;
	a = strtoul(arg, &end, 10);
	if (*end != ':' || !isdigit((unsigned char)end[1]))
		return false;
	b = strtoul(end + 1, &end, 10);
	if (*end || errno || a > UINT_MAX || b > UINT_MAX)
		return false;
	*maj = a;
	*min = b;
	return true;
}

/* Whole first line of a small file, without the newline; NULL on error. */
static char *read_first_line(const char *path)
{
	char *line = NULL;
	size_t n = 0;
	FILE *f;

	f = fopen(path, "re");
	if (!f)
		return NULL;
	if (getline(&line, &n, f) < 0) {
		free(line);
		line = strdup("");
	} else {
		line[strcspn(line, "\n")] = '\0';
	}
	fclose(f);
	return line;
}

/* ---- human units -------------------------------------------------------- */

/* ---- JSON and Prometheus strings ---------------------------------------- */

static void json_string_or_null(FILE *out, const char *s)
{
	if (s)
		json_string(out, s);
	else
		fputs("null", out);
}

/* Label value per the text exposition format: \\, \" and \n escaped. */
static void prom_label_value(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n;

	fputc('"', out);
	while (*p) {
		n = utf8_seq_len(p);
		if (n == 0) {
			fputs("\xef\xbf\xbd", out);
			p++;
			continue;
		}
		if (*p == '\\')
			fputs("\\\\", out);
		else if (*p == '"')
			fputs("\\\"", out);
		else if (*p == '\n')
			fputs("\\n", out);
		else
			fwrite(p, 1, n, out);
		p += n;
	}
	fputc('"', out);
}

/* A path for a terminal: control characters would corrupt the table. */
static void print_path_plain(FILE *out, const char *s)
{
	for (; *s; s++)
		fputc(iscntrl((unsigned char)*s) ? '?' : *s, out);
}

/* ---- module state and debugfs ------------------------------------------- */

static bool module_interface_present(void)
{
	return access(WPSTAT_SUMMARY_PATH, F_OK) == 0;
}

static bool debugfs_mounted(void)
{
	struct statfs sfs;

	return statfs(DEBUGFS_MOUNT, &sfs) == 0 &&
	       (unsigned long)sfs.f_type == DEBUGFS_MAGIC_NR;
}

static int module_not_loaded(void)
{
	return runtime_error("module not loaded (load it with 'wpstat load')");
}

/* Why a debugfs file of the module could not be opened, as one line. */
static int debugfs_error(const char *path, int err)
{
	if (!module_interface_present())
		return module_not_loaded();
	if ((err == EACCES || err == EPERM) && geteuid() != 0)
		return runtime_error("permission denied: %s is root-only (run as root)",
				     path);
	if (err == EACCES || err == EPERM)
		return runtime_error("%s: %s (debugfs restricted by kernel lockdown?)",
				     path, strerror(err));
	if (err == ENOENT && !debugfs_mounted())
		return runtime_error("debugfs is not mounted (mount -t debugfs none %s)",
				     DEBUGFS_MOUNT);
	if (err == ENOENT)
		return runtime_error("%s is missing: the module was built without CONFIG_WPSTAT_DEBUGFS",
				     path);
	return runtime_error("%s: %s", path, strerror(err));
}

/* Read /proc/wpstat/inodes, or say in one line why not. */
static int read_snapshot(struct wpstat_snapshot *s)
{
	int err = wpstat_snapshot_read(NULL, s);

	switch (-err) {
	case 0:
		return 0;
	case ENOENT:
		return module_not_loaded();
	case EACCES:
	case EPERM:
		return runtime_error("permission denied reading %s: per-file counters are root-only (run as root)",
				     WPSTAT_INODES_PATH);
	case EPROTO:
		return runtime_error("%s has an unexpected format (module and wpstat of different versions?)",
				     WPSTAT_INODES_PATH);
	default:
		return runtime_error("cannot read %s: %s", WPSTAT_INODES_PATH,
				     strerror(-err));
	}
}

/*
 * Send one command to debugfs wpstat/control.  @einval and @esrch, when
 * given, say what those errors mean for this command.
 */
static int control_command(const char *cmd, const char *einval,
			   const char *esrch)
{
	size_t len = strlen(cmd);
	ssize_t n;
	int fd, err;

	if (!module_interface_present())
		return module_not_loaded();
	fd = open(WPSTAT_CONTROL_PATH, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return debugfs_error(WPSTAT_CONTROL_PATH, errno);
	n = write(fd, cmd, len);
	err = errno;
	close(fd);
	if (n == (ssize_t)len)
		return 0;
	if (n >= 0)
		return runtime_error("short write of '%s' to %s", cmd,
				     WPSTAT_CONTROL_PATH);
	switch (err) {
	case EINVAL:
		if (einval)
			return runtime_error("%s", einval);
		return runtime_error("the module rejected '%s' (invalid argument)",
				     cmd);
	case ESRCH:
		if (esrch)
			return runtime_error("%s", esrch);
		return runtime_error("'%s': no such process", cmd);
	case EPERM:
	case EACCES:
		return runtime_error("permission denied: '%s' needs CAP_SYS_ADMIN (run as root)",
				     cmd);
	case ENOENT:
	case ENODEV:
		return module_not_loaded();
	case ENOMEM:
		return runtime_error("'%s': out of memory in the kernel", cmd);
	default:
		return runtime_error("'%s': %s", cmd, strerror(err));
	}
}

/* ---- file lists: rows to print, with their values and paths ------------- */

/* Sort fields that are not counters. */
enum {
	SORT_DEV = -1,
	SORT_INO = -2,
	SORT_GEN = -3,
};

/*
 * What is shown for one file: its row's own values (show), or the change
 * since an earlier snapshot (watch, run), kept in file_list.deltas.  Rows
 * are small: the table may hold millions.
 */
struct file_row {
	const struct wpstat_row *row;	/* identity; absolute values */
	const uint64_t *val;		/* shown values */
	const bool *avail;
	char *path;			/* resolved, or NULL */
};

struct file_list {
	const struct wpstat_snapshot *snap;	/* the counter names */
	size_t n;
	struct file_row *rows;
	struct wpstat_row *deltas;	/* backing store of val/avail, or NULL */
};

static void file_list_free(struct file_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->rows[i].path);
	free(l->rows);
	free(l->deltas);
	memset(l, 0, sizeof(*l));
}

static int key_cmp(const struct wpstat_row *a, const struct wpstat_row *b)
{
	if (a->major != b->major)
		return a->major < b->major ? -1 : 1;
	if (a->minor != b->minor)
		return a->minor < b->minor ? -1 : 1;
	if (a->ino != b->ino)
		return a->ino < b->ino ? -1 : 1;
	if (a->gen != b->gen)
		return a->gen < b->gen ? -1 : 1;
	return 0;
}

static int row_ptr_cmp(const void *a, const void *b)
{
	return key_cmp(*(const struct wpstat_row *const *)a,
		       *(const struct wpstat_row *const *)b);
}

/*
 * Every row of @after as it is (@before NULL), or only the rows that
 * changed since @before, with their change.  Rows are matched on dev,
 * inode and generation; a row new since @before counts from zero.
 */
static int file_list_build(const struct wpstat_snapshot *before,
			   const struct wpstat_snapshot *after,
			   struct file_list *l)
{
	const struct wpstat_row **index = NULL, **prev = NULL;
	int bcol[WPSTAT_MAX_COUNTERS];
	struct wpstat_row scratch;
	size_t i, nchanged = 0;
	int pass;

	memset(l, 0, sizeof(*l));
	l->snap = after;
	if (!before) {
		l->rows = calloc(after->nrows ? after->nrows : 1,
				 sizeof(*l->rows));
		if (!l->rows)
			return -ENOMEM;
		for (i = 0; i < after->nrows; i++) {
			l->rows[i].row = &after->rows[i];
			l->rows[i].val = after->rows[i].val;
			l->rows[i].avail = after->rows[i].avail;
		}
		l->n = after->nrows;
		return 0;
	}

	index = malloc((before->nrows ? before->nrows : 1) * sizeof(*index));
	prev = calloc(after->nrows ? after->nrows : 1, sizeof(*prev));
	if (!index || !prev)
		goto nomem;
	for (i = 0; i < before->nrows; i++)
		index[i] = &before->rows[i];
	qsort(index, before->nrows, sizeof(*index), row_ptr_cmp);
	for (i = 0; i < after->nrows; i++) {
		const struct wpstat_row *a = &after->rows[i];
		const struct wpstat_row **hit;

		hit = bsearch(&a, index, before->nrows, sizeof(*index),
			      row_ptr_cmp);
		prev[i] = hit ? *hit : NULL;
	}
	/* Columns by name: a reloaded module may have others. */
	wpstat_column_map(after, before, bcol);

	/* Count the changed rows, then store just those. */
	for (pass = 0; pass < 2; pass++) {
		if (pass == 1) {
			l->rows = calloc(nchanged ? nchanged : 1,
					 sizeof(*l->rows));
			l->deltas = calloc(nchanged ? nchanged : 1,
					   sizeof(*l->deltas));
			if (!l->rows || !l->deltas)
				goto nomem;
		}
		for (i = 0; i < after->nrows; i++) {
			struct wpstat_row *d;

			if (!wpstat_row_delta(after, &after->rows[i], prev[i],
					      bcol, &scratch))
				continue;
			if (!pass) {
				nchanged++;
				continue;
			}
			d = &l->deltas[l->n];
			*d = scratch;
			l->rows[l->n].row = &after->rows[i];
			l->rows[l->n].val = d->val;
			l->rows[l->n].avail = d->avail;
			l->n++;
		}
	}
	free(index);
	free(prev);
	return 0;
nomem:
	free(index);
	free(prev);
	free(l->rows);
	free(l->deltas);
	memset(l, 0, sizeof(*l));
	return -ENOMEM;
}

/* Field name -> column (counter index, or SORT_*), or a usage error. */
static int parse_sort_field(const struct wpstat_snapshot *s,
			    const char *field, int *col)
{
	static const char *const fixed[] = { "dev", "ino", "gen" };
	char valid[1024];
	size_t len = 0;
	int i;

	for (i = 0; i < (int)ARRAY_SIZE(fixed); i++) {
		if (!strcmp(field, fixed[i])) {
			*col = -1 - i;
			return 0;
		}
	}
	*col = wpstat_counter_index(s, field);
	if (*col >= 0)
		return 0;
	valid[0] = '\0';
	for (i = 0; i < (int)ARRAY_SIZE(fixed) + s->ncounters; i++) {
		const char *name = i < (int)ARRAY_SIZE(fixed) ? fixed[i] :
				   s->names[i - ARRAY_SIZE(fixed)];

		if (len < sizeof(valid))
			len += snprintf(valid + len, sizeof(valid) - len,
					"%s%s", i ? ", " : "", name);
	}
	return usage_error("unknown field '%s' (valid: %s)", field, valid);
}

/*
 * Counters sort largest first, with unavailable ones last; dev, ino and
 * gen sort ascending.  Ties go by dev, inode and generation.
 */
static int file_row_cmp(const void *pa, const void *pb, void *pcol)
{
	const struct file_row *a = pa, *b = pb;
	int col = *(const int *)pcol;

	if (col >= 0) {
		if (a->avail[col] != b->avail[col])
			return a->avail[col] ? -1 : 1;
		if (a->val[col] != b->val[col])
			return a->val[col] > b->val[col] ? -1 : 1;
	} else if (col == SORT_GEN && a->row->gen != b->row->gen) {
		return a->row->gen < b->row->gen ? -1 : 1;
	} else if (col == SORT_INO && a->row->ino != b->row->ino) {
		return a->row->ino < b->row->ino ? -1 : 1;
	}
	return key_cmp(a->row, b->row);
}

static void file_list_sort(struct file_list *l, int col)
{
	qsort_r(l->rows, l->n, sizeof(*l->rows), file_row_cmp, &col);
}

/* ---- resolving inodes to paths ------------------------------------------ */

/*
 * Rows without a path, sorted by (dev, ino), and the inode numbers alone
 * so that a directory walk can skip most files without opening them.
 */
struct resolver {
	struct file_row **by_key;
	size_t n;
	size_t unresolved;
	uint64_t *inos;
	size_t ninos;
};

static int file_row_ptr_cmp(const void *a, const void *b)
{
	return key_cmp((*(struct file_row *const *)a)->row,
		       (*(struct file_row *const *)b)->row);
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int resolver_init(struct resolver *r, struct file_row *rows, size_t n)
{
	size_t i, j;

	memset(r, 0, sizeof(*r));
	r->by_key = malloc((n ? n : 1) * sizeof(*r->by_key));
	r->inos = malloc((n ? n : 1) * sizeof(*r->inos));
	if (!r->by_key || !r->inos) {
		free(r->by_key);
		free(r->inos);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		if (rows[i].path)
			continue;
		r->by_key[r->n++] = &rows[i];
		r->inos[r->ninos++] = rows[i].row->ino;
	}
	r->unresolved = r->n;
	qsort(r->by_key, r->n, sizeof(*r->by_key), file_row_ptr_cmp);
	qsort(r->inos, r->ninos, sizeof(*r->inos), u64_cmp);
	for (i = j = 0; i < r->ninos; i++)	/* unique */
		if (!j || r->inos[j - 1] != r->inos[i])
			r->inos[j++] = r->inos[i];
	r->ninos = j;
	return 0;
}

static void resolver_free(struct resolver *r)
{
	free(r->by_key);
	free(r->inos);
	memset(r, 0, sizeof(*r));
}

static bool resolver_wants_ino(const struct resolver *r, uint64_t ino)
{
	return bsearch(&ino, r->inos, r->ninos, sizeof(ino), u64_cmp) != NULL;
}

/*
 * The row a file key names: dev, inode and generation; without a
 * generation (tmpfs), the newest row for dev and inode, the one the module
 * appended last.  NULL if that row has a path already.
 */
static struct file_row *resolver_match(const struct resolver *r,
				       const struct wpstat_file_key *key)
{
	struct file_row *found = NULL;
	size_t lo = 0, hi = r->n;

	while (lo < hi) {	/* first row with (dev, ino) >= key */
		size_t mid = lo + (hi - lo) / 2;
		const struct wpstat_row *m = r->by_key[mid]->row;

		if (m->major < key->major ||
		    (m->major == key->major && (m->minor < key->minor ||
		     (m->minor == key->minor && m->ino < key->ino))))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < r->n; lo++) {
		struct file_row *f = r->by_key[lo];

		if (f->row->major != key->major || f->row->minor != key->minor ||
		    f->row->ino != key->ino)
			break;
		if (key->have_gen) {
			if (f->row->gen == key->gen)
				found = f;
		} else if (!found || f->row > found->row) {
			found = f;
		}
	}
	return found && !found->path ? found : NULL;
}

static void resolver_assign(struct resolver *r, struct file_row *f,
			    const char *path)
{
	f->path = strdup(path);
	if (f->path)
		r->unresolved--;
}

/* A file named on a command line (run's arguments): only if it exists. */
static void resolve_named_file(struct resolver *r, const char *path)
{
	struct wpstat_file_key key;
	struct file_row *f;
	struct stat st;
	char *abs;

	if (stat(path, &st) || !S_ISREG(st.st_mode) ||
	    !resolver_wants_ino(r, st.st_ino) || wpstat_path_key(path, &key))
		return;
	f = resolver_match(r, &key);
	if (!f)
		return;
	abs = realpath(path, NULL);
	resolver_assign(r, f, abs ? abs : path);
	free(abs);
}

/*
 * /proc/PID/maps names a mapped file by its superblock's s_dev and inode:
 * the module's own key, less the generation.  Where the path opens to the
 * same inode (here, or under the process's root), its generation is known.
 */
static void resolve_map_line(struct resolver *r, const char *pid, char *line)
{
	static const char deleted[] = " (deleted)";
	struct wpstat_file_key key = { 0 }, seen;
	unsigned long long ino;
	unsigned int maj, min;
	char alt[PATH_MAX + 32];
	struct file_row *f;
	char *path, *s, *d;
	size_t len;
	int pos = 0;

	if (sscanf(line, "%*x-%*x %*s %*x %x:%x %llu %n", &maj, &min, &ino,
		   &pos) != 3 || !pos || !ino)
		return;
	path = line + pos;
	path[strcspn(path, "\n")] = '\0';
	len = strlen(path);
	if (path[0] != '/' || (len > sizeof(deleted) - 1 &&
	    !strcmp(path + len - (sizeof(deleted) - 1), deleted)))
		return;
	if (!resolver_wants_ino(r, ino))
		return;
	for (s = d = path; *s; d++) {	/* seq_file_path() escapes '\n' */
		if (!strncmp(s, "\\012", 4)) {
			*d = '\n';
			s += 4;
		} else {
			*d = *s++;
		}
	}
	*d = '\0';

	key.major = maj;
	key.minor = min;
	key.ino = ino;
	if (!resolver_match(r, &key))
		return;
	snprintf(alt, sizeof(alt), "/proc/%s/root%s", pid, path);
	if ((!wpstat_path_key(path, &seen) || !wpstat_path_key(alt, &seen)) &&
	    seen.major == maj && seen.minor == min && seen.ino == ino)
		key = seen;
	f = resolver_match(r, &key);
	if (f)
		resolver_assign(r, f, path);
}

static void resolve_from_maps(struct resolver *r)
{
	char path[64], *line = NULL;
	struct dirent *de;
	size_t cap = 0;
	DIR *proc;

	proc = opendir("/proc");
	if (!proc)
		return;
	while (r->unresolved && (de = readdir(proc))) {
		FILE *maps;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		if (snprintf(path, sizeof(path), "/proc/%s/maps",
			     de->d_name) >= (int)sizeof(path))
			continue;
		maps = fopen(path, "re");
		if (!maps)
			continue;	/* gone, or not ours to read */
		while (r->unresolved && getline(&line, &cap, maps) > 0)
			resolve_map_line(r, de->d_name, line);
		fclose(maps);
	}
	free(line);
	closedir(proc);
}

/* nftw() passes its callback no context: one walk at a time uses this. */
static struct resolver *nftw_resolver;

static int resolve_visit(const char *fpath, const struct stat *st, int type,
			 struct FTW *ftw)
{
	struct resolver *r = nftw_resolver;
	struct wpstat_file_key key;
	struct file_row *f;

	(void)ftw;
	if (type != FTW_F || !S_ISREG(st->st_mode) ||
	    !resolver_wants_ino(r, st->st_ino))
		return 0;
	if (wpstat_path_key(fpath, &key))
		return 0;
	f = resolver_match(r, &key);
	if (f)
		resolver_assign(r, f, fpath);
	return r->unresolved ? 0 : 1;	/* non-zero stops the walk */
}

/*
 * Give paths to the rows of @rows that have none, from: the files named
 * in @named (NULL-terminated, may be NULL), the files mapped by running
 * processes, and the trees under @dirs (each walked on its own filesystem).
 */
static void resolve_paths(struct file_row *rows, size_t n, char *const *named,
			  char *const *dirs, size_t ndirs)
{
	struct resolver r;
	size_t i;

	if (resolver_init(&r, rows, n))
		return;		/* out of memory: stay with dev:ino */
	for (i = 0; named && named[i] && r.unresolved; i++) {
		const char *eq = strchr(named[i], '=');

		resolve_named_file(&r, named[i]);
		if (named[i][0] == '-' && eq)	/* --file=PATH */
			resolve_named_file(&r, eq + 1);
	}
	if (r.unresolved)
		resolve_from_maps(&r);
	for (i = 0; i < ndirs && r.unresolved; i++) {
		nftw_resolver = &r;
		nftw(dirs[i], resolve_visit, RESOLVE_NFTW_FDS,
		     FTW_PHYS | FTW_MOUNT);
		nftw_resolver = NULL;
	}
	resolver_free(&r);
}

static int check_resolve_dirs(char *const *dirs, size_t ndirs)
{
	struct stat st;
	size_t i;

	for (i = 0; i < ndirs; i++)
		if (stat(dirs[i], &st))
			return runtime_error("--resolve %s: %s", dirs[i],
					     strerror(errno));
	return 0;
}

/* ---- output: table, JSON, Prometheus ------------------------------------ */

static void print_file_name(FILE *out, const struct file_row *f)
{
	if (f->path)
		print_path_plain(out, f->path);
	else
		fprintf(out, "%u:%u:%" PRIu64, f->row->major, f->row->minor,
			f->row->ino);
}

/* Counters right-aligned under their names, the file last. */
static void print_table(FILE *out, const struct file_list *l, size_t limit)
{
	const struct wpstat_snapshot *s = l->snap;
	size_t width[WPSTAT_MAX_COUNTERS];
	size_t i, n = l->n < limit ? l->n : limit;
	char buf[32];
	int c;

	for (c = 0; c < s->ncounters; c++) {
		width[c] = strlen(s->names[c]);
		for (i = 0; i < n; i++) {
			const struct file_row *f = &l->rows[i];
			size_t w = strlen(wpstat_fmt_counter(buf, sizeof(buf),
						      s->names[c], f->val[c],
						      f->avail[c]));

			if (w > width[c])
				width[c] = w;
		}
	}
	for (c = 0; c < s->ncounters; c++)
		fprintf(out, "%*s ", (int)width[c], s->names[c]);
	fputs("file\n", out);
	for (i = 0; i < n; i++) {
		const struct file_row *f = &l->rows[i];

		for (c = 0; c < s->ncounters; c++)
			fprintf(out, "%*s ", (int)width[c],
				wpstat_fmt_counter(buf, sizeof(buf), s->names[c],
					    f->val[c], f->avail[c]));
		print_file_name(out, f);
		fputc('\n', out);
	}
}

static void json_counters(FILE *out, const struct wpstat_snapshot *s,
			  const uint64_t *val, const bool *avail)
{
	int c;

	fputc('{', out);
	for (c = 0; c < s->ncounters; c++) {
		if (c)
			fputs(", ", out);
		json_string(out, s->names[c]);
		if (avail[c])
			fprintf(out, ": %" PRIu64, val[c]);
		else
			fputs(": null", out);
	}
	fputc('}', out);
}

/* One file; with @deltas, "counters" are the totals and "deltas" the change. */
static void json_file(FILE *out, const struct wpstat_snapshot *s,
		      const struct file_row *f, bool deltas)
{
	fprintf(out, "{\"dev\": \"%u:%u\", \"ino\": %" PRIu64 ", \"gen\": %" PRIu32
		", \"path\": ", f->row->major, f->row->minor, f->row->ino,
		f->row->gen);
	json_string_or_null(out, f->path);
	fputs(", \"counters\": ", out);
	if (deltas) {
		json_counters(out, s, f->row->val, f->row->avail);
		fputs(", \"deltas\": ", out);
	}
	json_counters(out, s, f->val, f->avail);
	fputc('}', out);
}

static void json_files(FILE *out, const struct file_list *l, size_t limit,
		       bool deltas)
{
	size_t i, n = l->n < limit ? l->n : limit;

	fputc('[', out);
	for (i = 0; i < n; i++) {
		fputs(i ? ",\n  " : "\n  ", out);
		json_file(out, l->snap, &l->rows[i], deltas);
	}
	fputs(n ? "\n ]" : "]", out);
}

/* What each counter means, for # HELP; later counters get a generic line. */
static const struct {
	const char *name;
	const char *help;
} counter_help[] = {
	{ "mkwrite_first", "page_mkwrite calls for write faults on pages not yet mapped" },
	{ "mkwrite_wp", "page_mkwrite calls for write faults on write-protected PTEs (after writeback cleaned them)" },
	{ "mkwrite_ns", "Time spent in page_mkwrite" },
	{ "mkclean_calls", "folio_mkclean calls (writeback write-protecting mapped folios)" },
	{ "mkclean_ptes", "PTEs write-protected by folio_mkclean" },
	{ "stable_calls", "folio_wait_stable calls" },
	{ "stable_waits", "folio_wait_stable calls that waited for writeback" },
	{ "stable_wait_ns", "Time spent waiting in folio_wait_stable" },
	{ "wb_waits", "Waits for a folio under writeback" },
	{ "dirtied", "Folios dirtied" },
	{ "bdp_calls", "balance_dirty_pages_ratelimited calls" },
	{ "bdp_fault_calls", "balance_dirty_pages_ratelimited calls made by write faults" },
	{ "bdp_throttled", "Ratelimited calls that entered balance_dirty_pages" },
	{ "bdp_pauses", "Dirty-throttling pauses" },
	{ "bdp_pause_ns", "Time paused by dirty throttling" },
	{ "mkclean_msync", "folio_mkclean calls in writeback started by msync(2)" },
	{ "mkclean_fsync", "folio_mkclean calls in writeback started by fsync(2) or fdatasync(2)" },
	{ "mkclean_sync_file_range", "folio_mkclean calls in writeback started by sync_file_range(2)" },
	{ "mkclean_sync", "folio_mkclean calls in writeback started by sync(2) or syncfs(2)" },
	{ "mkclean_flusher_periodic", "folio_mkclean calls in the flusher's periodic writeback (dirty_expire)" },
	{ "mkclean_flusher_background", "folio_mkclean calls in the flusher's background writeback (over the background threshold)" },
	{ "mkclean_reclaim", "folio_mkclean calls in writeback started by reclaim" },
	{ "mkclean_other", "folio_mkclean calls in writeback started by anything else" },
	{ "mkwrite_max_ns", "Longest single page_mkwrite call" },
	{ "stable_wait_max_ns", "Longest single wait in folio_wait_stable" },
	{ "bdp_pause_max_ns", "Longest single dirty-throttling pause" },
};

static const char *help_of(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(counter_help); i++)
		if (!strcmp(counter_help[i].name, name))
			return counter_help[i].help;
	return NULL;
}

/*
 * <prefix><name>_total, or <prefix><name less _ns>_seconds_total; a
 * maximum is a gauge: <prefix><name less _ns>_seconds, no _total.
 */
static void prom_metric_name(char *buf, size_t len, const char *prefix,
			     const char *counter)
{
	size_t n = strlen(counter), i, p;
	bool ns = wpstat_counter_is_ns(counter);

	if (ns)
		n -= 3;
	p = snprintf(buf, len, "%s", prefix);
	for (i = 0; i < n && p + 1 < len; i++, p++)
		buf[p] = isalnum((unsigned char)counter[i]) ? counter[i] : '_';
	buf[p] = '\0';
	strncat(buf, wpstat_counter_is_max(counter) ? (ns ? "_seconds" : "") :
		ns ? "_seconds_total" : "_total", len - p - 1);
}

static const char *prom_type(const char *counter)
{
	return wpstat_counter_is_max(counter) ? "gauge" : "counter";
}

/* A value, nanoseconds as seconds. */
static void prom_value(FILE *out, const char *counter, uint64_t v)
{
	if (wpstat_counter_is_ns(counter))
		fprintf(out, " %" PRIu64 ".%09" PRIu64 "\n", v / NSEC_PER_SEC,
			v % NSEC_PER_SEC);
	else
		fprintf(out, " %" PRIu64 "\n", v);
}

static void prom_labels(FILE *out, const struct file_row *f)
{
	char num[32];

	snprintf(num, sizeof(num), "%u:%u", f->row->major, f->row->minor);
	fputs("{dev=", out);
	prom_label_value(out, num);
	fprintf(out, ",ino=\"%" PRIu64 "\",gen=\"%" PRIu32 "\"", f->row->ino,
		f->row->gen);
	if (f->path) {
		fputs(",path=", out);
		prom_label_value(out, f->path);
	}
	fputc('}', out);
}

static void prom_gauge(FILE *out, const struct wpstat_kvlist *summary,
		       const char *key, const char *metric, const char *type,
		       const char *help)
{
	const char *v = wpstat_kv_get(summary, key);

	if (!v || !isdigit((unsigned char)v[0]))
		return;
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n%s %s\n", metric, help,
		metric, type, metric, v);
}

/*
 * node_exporter textfile-collector format.  Unavailable counters have no
 * samples, and a counter unavailable everywhere no family.  The inode's
 * generation is a label too: without it a reused inode number would give
 * two series the same labels.
 */
static void print_prometheus(FILE *out, const struct file_list *l,
			     size_t limit, const struct wpstat_kvlist *summary)
{
	const struct wpstat_snapshot *s = l->snap;
	size_t i, n = l->n < limit ? l->n : limit;
	char metric[128];
	int c;

	for (c = 0; c < s->ncounters; c++) {
		const char *help = help_of(s->names[c]);
		bool any = false;

		for (i = 0; i < n && !any; i++)
			any = l->rows[i].avail[c];
		if (!any)
			continue;
		prom_metric_name(metric, sizeof(metric), "wpstat_", s->names[c]);
		fprintf(out, "# HELP %s %s", metric, help ? help : "wpstat counter ");
		if (!help)
			fputs(s->names[c], out);
		fprintf(out, " (per file).\n# TYPE %s %s\n", metric,
			prom_type(s->names[c]));
		for (i = 0; i < n; i++) {
			const struct file_row *f = &l->rows[i];

			if (!f->avail[c])
				continue;
			fputs(metric, out);
			prom_labels(out, f);
			prom_value(out, s->names[c], f->val[c]);
		}
	}
	prom_gauge(out, summary, "tracked_inodes", "wpstat_tracked_inodes",
		   "gauge", "Inodes with a row in the module's table.");
	prom_gauge(out, summary, "max_inodes", "wpstat_max_inodes", "gauge",
		   "Size of the module's inode table.");
	prom_gauge(out, summary, "untracked_events",
		   "wpstat_untracked_events_total", "counter",
		   "Events not counted per file because the table was full.");
	prom_gauge(out, summary, "enabled", "wpstat_enabled", "gauge",
		   "1 while the module counts.");
}

/* ---- load / unload ------------------------------------------------------ */

static void kmod_log_quiet(void *data, int priority, const char *file,
			   int line, const char *fn, const char *format,
			   va_list args)
{
	/* Errors are reported once, in our own words. */
	(void)data;
	(void)priority;
	(void)file;
	(void)line;
	(void)fn;
	(void)format;
	(void)args;
}

static struct kmod_ctx *kmod_open(void)
{
	struct kmod_ctx *ctx = kmod_new(NULL, NULL);

	if (ctx)
		kmod_set_log_fn(ctx, kmod_log_quiet, NULL);
	return ctx;
}

/* -1 not loaded, else enum kmod_module_initstate. */
static int module_initstate(struct kmod_ctx *ctx)
{
	struct kmod_module *mod;
	int state;

	if (kmod_module_new_from_name(ctx, MODULE_NAME, &mod))
		return -1;
	state = kmod_module_get_initstate(mod);
	kmod_module_unref(mod);
	return state < 0 ? -1 : state;
}

/* The installed module (modules.dep), or NULL. */
static struct kmod_module *lookup_installed(struct kmod_ctx *ctx)
{
	struct kmod_module *found = NULL;
	struct kmod_list *list = NULL, *it;

	if (kmod_module_new_from_lookup(ctx, MODULE_NAME, &list) < 0)
		return NULL;
	for (it = list; it && !found; it = kmod_list_next(list, it)) {
		struct kmod_module *m = kmod_module_get_module(it);

		if (!strcmp(kmod_module_get_name(m), MODULE_NAME) &&
		    kmod_module_get_path(m))
			found = kmod_module_ref(m);
		kmod_module_unref(m);
	}
	kmod_module_unref_list(list);
	return found;
}

/* <bindir>/../kmod/<uname -r>/wpstat.ko, if it exists; malloc'd. */
static char *build_tree_module(void)
{
	char exe[PATH_MAX], path[PATH_MAX + 64];
	ssize_t n;
	char *slash;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	if (snprintf(path, sizeof(path), "%s/../kmod/%s/" MODULE_NAME ".ko",
		     exe, kernel_release()) >= (int)sizeof(path))
		return NULL;
	return realpath(path, NULL);
}

/* Module parameter names declared in the .ko's modinfo, comma-separated. */
static bool module_param_names(struct kmod_module *mod, char *buf, size_t len)
{
	struct kmod_list *info = NULL, *it;
	size_t used = 0;

	buf[0] = '\0';
	if (kmod_module_get_info(mod, &info) < 0)
		return false;
	for (it = info; it; it = kmod_list_next(info, it)) {
		const char *key = kmod_module_info_get_key(it);
		const char *val = kmod_module_info_get_value(it);
		size_t nlen;
		char name[128];

		if (strcmp(key, "parm") && strcmp(key, "parmtype"))
			continue;
		nlen = strcspn(val, ":");
		if (!nlen || nlen >= sizeof(name))
			continue;
		memcpy(name, val, nlen);
		name[nlen] = ',';
		name[nlen + 1] = '\0';
		/* ",a,b," lookup: no name is a substring of another */
		if (used && strstr(buf, name) &&
		    (strstr(buf, name) == buf || strstr(buf, name)[-1] == ','))
			continue;
		if (used + nlen + 2 < len) {
			memcpy(buf + used, name, nlen + 1);
			used += nlen + 1;
			buf[used] = '\0';
		}
	}
	kmod_module_info_free_list(info);
	if (used)
		buf[used - 1] = '\0';	/* drop the last comma */
	return used > 0;
}

static bool param_declared(const char *names, const char *param, size_t len)
{
	const char *p = names;

	while (*p) {
		size_t n = strcspn(p, ",");

		if (n == len && !strncmp(p, param, len))
			return true;
		p += n;
		if (*p)
			p++;
	}
	return false;
}

/* In the words of kmod's insmod, plus where to look. */
static const char *insert_strerror(int err)
{
	switch (err) {
	case ENOEXEC:
		return "invalid module format (built for another kernel?)";
	case ENOENT:
		return "unknown symbol in module or module file missing (see dmesg)";
	case ESRCH:
		return "module has a wrong symbol version (built for another kernel?; see dmesg)";
	case EPERM:
		return "operation not permitted (not root, or lockdown/secure boot forbids unsigned modules)";
	case EKEYREJECTED:
	case EBADMSG:
	case ENOKEY:
		return "module signature rejected (secure boot; see dmesg)";
	case EINVAL:
		return "invalid module parameter (see dmesg)";
	case ENOMEM:
		return "out of memory (max_inodes too large?)";
	case EBUSY:
		return "module is being loaded or unloaded by someone else";
	default:
		return NULL;
	}
}

static int cmd_load(int argc, char **argv)
{
	static const char shortopts[] = "+:hm:";
	static const struct option longopts[] = {
		{ "module",	required_argument,	NULL, 'm' },
		{ "help",	no_argument,		NULL, 'h' },
		{ NULL,		0,			NULL, 0 },
	};
	const char *given = NULL, *env, *how;
	struct kmod_module *mod = NULL;
	struct kmod_ctx *ctx = NULL;
	char *options = NULL, *built = NULL, names[512];
	size_t optlen = 1;
	int c, i, state, err, ret = EXIT_RUNTIME;
	bool probe = false, have_names;

	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		switch (c) {
		case 'm':
			given = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			return option_error("load", c, argv, shortopts);
		}
	}
	for (i = optind; i < argc; i++) {
		const char *eq = strchr(argv[i], '=');

		if (!eq || eq == argv[i] || strpbrk(argv[i], " \t\n"))
			return usage_error("load: '%s' is not PARAM=VALUE (e.g. max_inodes=1024)",
					   argv[i]);
		optlen += strlen(argv[i]) + 1;
	}
	if (given && access(given, R_OK))
		return runtime_error("--module %s: %s", given, strerror(errno));

	ctx = kmod_open();
	if (!ctx)
		return runtime_error("libkmod: cannot initialise");
	state = module_initstate(ctx);
	if (state >= 0) {
		if (state == KMOD_MODULE_GOING)
			ret = runtime_error("module is being unloaded; try again");
		else if (optind < argc)
			ret = printf("wpstat module already loaded; parameters not applied (unload it first)\n") < 0;
		else
			ret = printf("wpstat module already loaded\n") < 0;
		goto out;
	}

	/* Which file: --module, installed, $WPSTAT_MODULE, the build tree. */
	env = getenv("WPSTAT_MODULE");
	if (!given)
		mod = lookup_installed(ctx);
	if (!given && !mod && !(env && *env && !access(env, R_OK)))
		built = build_tree_module();
	if (given) {
		how = given;
		err = kmod_module_new_from_path(ctx, given, &mod);
	} else if (mod) {
		how = kmod_module_get_path(mod);
		probe = true;
		err = 0;
	} else if (!built && env && *env) {
		how = env;
		err = kmod_module_new_from_path(ctx, env, &mod);
	} else if (built) {
		how = built;
		err = kmod_module_new_from_path(ctx, built, &mod);
	} else {
		ret = runtime_error("no wpstat.ko found: not installed for %s, $WPSTAT_MODULE unset, none in the build tree (use --module PATH)",
				    kernel_release());
		goto out;
	}
	if (err < 0) {
		ret = runtime_error("cannot use %s: %s", how, strerror(-err));
		goto out;
	}

	/* The kernel ignores unknown parameters; a typo should not be. */
	options = malloc(optlen);
	if (!options) {
		ret = runtime_error("out of memory");
		goto out;
	}
	options[0] = '\0';
	have_names = module_param_names(mod, names, sizeof(names));
	for (i = optind; i < argc; i++) {
		size_t nlen = strcspn(argv[i], "=");

		if (have_names && !param_declared(names, argv[i], nlen)) {
			char *comma;

			while ((comma = strchr(names, ',')))	/* for reading */
				*comma = '/';
			ret = usage_error("load: unknown module parameter '%.*s' (valid: %s)",
					  (int)nlen, argv[i], names);
			goto out;
		}
		if (options[0])
			strcat(options, " ");
		strcat(options, argv[i]);
	}

	if (probe)	/* installed: modprobe.d options apply too */
		err = kmod_module_probe_insert_module(mod,
						      KMOD_PROBE_FAIL_ON_LOADED,
						      options, NULL, NULL, NULL);
	else
		err = kmod_module_insert_module(mod, 0, options);
	if (err == -EEXIST) {
		ret = printf("wpstat module already loaded\n") < 0;
	} else if (err < 0) {
		const char *why = insert_strerror(-err);

		ret = runtime_error("cannot load %s: %s", how,
				    why ? why : strerror(-err));
	} else if (err > 0) {
		ret = runtime_error("cannot load %s: blacklisted or refused by modprobe configuration",
				    how);
	} else {
		printf("loaded %s%s%s\n", how, options[0] ? " " : "", options);
		ret = 0;
	}
out:
	free(options);
	free(built);
	if (mod)
		kmod_module_unref(mod);
	kmod_unref(ctx);
	return ret;
}

static int cmd_unload(int argc, char **argv)
{
	static const char shortopts[] = "+:h";
	static const struct option longopts[] = {
		{ "help",	no_argument,		NULL, 'h' },
		{ NULL,		0,			NULL, 0 },
	};
	struct kmod_module *mod = NULL;
	struct kmod_ctx *ctx;
	int c, state, err, ret;

	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return 0;
		}
		return option_error("unload", c, argv, shortopts);
	}
	if (optind < argc)
		return usage_error("unload: unexpected argument '%s'", argv[optind]);

	ctx = kmod_open();
	if (!ctx)
		return runtime_error("libkmod: cannot initialise");
	state = module_initstate(ctx);
	if (state < 0) {
		ret = module_not_loaded();
		goto out;
	}
	if (state == KMOD_MODULE_BUILTIN) {
		ret = runtime_error("wpstat is built into the kernel and cannot be unloaded");
		goto out;
	}
	if (kmod_module_new_from_name(ctx, MODULE_NAME, &mod)) {
		ret = runtime_error("libkmod: cannot look up the module");
		goto out;
	}
	err = kmod_module_remove_module(mod, 0);
	switch (-err) {
	case 0:
		ret = printf("unloaded wpstat\n") < 0;
		break;
	case EBUSY:
	case EAGAIN:
		ret = runtime_error("module is in use (refcount %d): close what holds %s files open and retry",
				    kmod_module_get_refcnt(mod), DEBUGFS_DIR);
		break;
	case ENOENT:
		ret = module_not_loaded();
		break;
	case EPERM:
		ret = runtime_error("cannot unload: operation not permitted (not root)");
		break;
	default:
		ret = runtime_error("cannot unload: %s", strerror(-err));
	}
out:
	if (mod)
		kmod_module_unref(mod);
	kmod_unref(ctx);
	return ret;
}

/* ---- status ------------------------------------------------------------- */

struct probe_info {
	char *name, *target, *kind, *status;
	uint64_t hits, missed;
};

struct probe_list {
	size_t n;
	struct probe_info *p;
};

static void probe_list_free(struct probe_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		free(l->p[i].name);
		free(l->p[i].target);
		free(l->p[i].kind);
		free(l->p[i].status);
	}
	free(l->p);
	memset(l, 0, sizeof(*l));
}

/* debugfs wpstat/probes, columns found by header name.  0 or -errno. */
static int probes_read(struct probe_list *l)
{
	enum { P_NAME, P_TARGET, P_KIND, P_STATUS, P_HITS, P_MISSED, P_NR };
	static const char *const cols[P_NR] = {
		"probe", "target", "kind", "status", "hits", "missed",
	};
	int idx[P_NR], i, ncol = 0, ret = 0;
	char *line = NULL, *tok, *save;
	size_t n = 0, cap = 0;
	FILE *f;

	memset(l, 0, sizeof(*l));
	f = fopen(DEBUGFS_PROBES, "re");
	if (!f)
		return -errno;
	for (i = 0; i < P_NR; i++)
		idx[i] = -1;
	if (getline(&line, &n, f) > 0) {
		for (tok = strtok_r(line, " \n", &save); tok;
		     tok = strtok_r(NULL, " \n", &save), ncol++)
			for (i = 0; i < P_NR; i++)
				if (!strcmp(tok, cols[i]))
					idx[i] = ncol;
	}
	if (idx[P_NAME] < 0 || idx[P_STATUS] < 0)
		ret = -EPROTO;
	while (!ret && getline(&line, &n, f) > 0) {
		char *word[16] = { NULL };
		struct probe_info *p;
		int w = 0;

		if (line[0] == '#')
			continue;
		for (tok = strtok_r(line, " \n", &save); tok && w < 16;
		     tok = strtok_r(NULL, " \n", &save))
			word[w++] = tok;
		if (w <= idx[P_NAME] || w <= idx[P_STATUS])
			continue;
		if (l->n == cap) {
			cap = cap ? 2 * cap : 16;
			p = realloc(l->p, cap * sizeof(*p));
			if (!p) {
				ret = -ENOMEM;
				break;
			}
			l->p = p;
		}
		p = &l->p[l->n++];
		memset(p, 0, sizeof(*p));
#define WORD(i)	(idx[i] >= 0 && idx[i] < w ? word[idx[i]] : "")
		p->name = strdup(WORD(P_NAME));
		p->target = strdup(WORD(P_TARGET));
		p->kind = strdup(WORD(P_KIND));
		p->status = strdup(WORD(P_STATUS));
		p->hits = strtoull(WORD(P_HITS), NULL, 10);
		p->missed = strtoull(WORD(P_MISSED), NULL, 10);
#undef WORD
		if (!p->name || !p->target || !p->kind || !p->status)
			ret = -ENOMEM;
	}
	free(line);
	fclose(f);
	if (ret)
		probe_list_free(l);
	return ret;
}

struct module_param {
	char name[NAME_MAX + 1];
	char *value;
};

/* The files of /sys/module/wpstat/parameters, sorted by name. */
static size_t params_read(struct module_param *p, size_t max)
{
	struct dirent **ents;
	size_t n = 0;
	int i, nents;

	nents = scandir(SYSFS_PARAMS_DIR, &ents, NULL, alphasort);
	if (nents < 0)
		return 0;
	for (i = 0; i < nents; i++) {
		char path[sizeof(SYSFS_PARAMS_DIR) + NAME_MAX + 2];

		if (ents[i]->d_name[0] != '.' && n < max) {
			snprintf(path, sizeof(path), SYSFS_PARAMS_DIR "/%s",
				 ents[i]->d_name);
			snprintf(p[n].name, sizeof(p[n].name), "%s",
				 ents[i]->d_name);
			p[n].value = read_first_line(path);
			if (p[n].value)
				n++;
		}
		free(ents[i]);
	}
	free(ents);
	return n;
}

/* Why debugfs could not be read, as a JSON word and as a hint. */
static const char *debugfs_problem(int err, const char **hint)
{
	if (err == EACCES || err == EPERM) {
		*hint = geteuid() ? "debugfs needs root" :
			"debugfs refused (kernel lockdown?)";
		return "permission-denied";
	}
	if (err == ENOENT && !debugfs_mounted()) {
		*hint = "debugfs not mounted: mount -t debugfs none " DEBUGFS_MOUNT;
		return "not-mounted";
	}
	if (err == ENOENT) {
		*hint = "module built without CONFIG_WPSTAT_DEBUGFS";
		return "absent";
	}
	*hint = strerror(err);
	return "error";
}

/* A module parameter's value, or NULL. */
static const char *param_value(const struct module_param *p, size_t n,
			       const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(p[i].name, name))
			return p[i].value;
	return NULL;
}

static bool probe_attached(const struct probe_info *p)
{
	return !strcmp(p->status, "attached");
}

/* Whether /proc/wpstat/counters ("name level available help") says timing. */
static bool counter_needs_timing(const struct wpstat_kvlist *counters,
				 const char *name)
{
	const char *v = wpstat_kv_get(counters, name);

	return v && !strncmp(v, "timing ", 7);
}

static void status_json(bool loaded, int refcnt,
			const struct module_param *params, size_t nparams,
			const struct wpstat_kvlist *summary,
			const struct wpstat_kvlist *counters,
			const struct wpstat_kvlist *config,
			const struct probe_list *probes, int debugfs_err)
{
	const char *hint, *v, *w;
	size_t i;
	int c, first;

	printf("{\"loaded\": %s, \"kernel\": ", loaded ? "true" : "false");
	json_string(stdout, kernel_release());
	if (!loaded) {
		puts("}");
		return;
	}
	printf(", \"refcnt\": %d, \"parameters\": {", refcnt);
	for (i = 0; i < nparams; i++) {
		fputs(i ? ", " : "", stdout);
		json_string(stdout, params[i].name);
		fputs(": ", stdout);
		json_string(stdout, params[i].value);
	}
	fputs("}, \"level\": ", stdout);
	json_string_or_null(stdout, param_value(params, nparams, "level"));
	v = wpstat_kv_get(summary, "enabled");
	printf(", \"enabled\": %s", !v ? "null" : strcmp(v, "0") ? "true" : "false");
#define SUMMARY_NUM(key) do {						\
		v = wpstat_kv_get(summary, key);			\
		printf(", \"" key "\": %s",				\
		       v && isdigit((unsigned char)v[0]) ? v : "null");	\
	} while (0)
	SUMMARY_NUM("tracked_inodes");
	SUMMARY_NUM("max_inodes");
	SUMMARY_NUM("untracked_events");
	SUMMARY_NUM("entry_bytes");
	SUMMARY_NUM("stall_rows");
	SUMMARY_NUM("max_stalls");
	SUMMARY_NUM("stall_overflow_events");
	SUMMARY_NUM("stall_row_bytes");
#undef SUMMARY_NUM
	fputs(", \"histogram_scope\": ", stdout);
	json_string_or_null(stdout, wpstat_kv_get(summary, "histogram_scope"));
	/* Every counter that reads "-", and those of them only level timing makes. */
	for (c = 0; c < 2; c++) {
		printf("%s\"counters_%s\": [", c ? "], " : ", ",
		       c ? "timing_only" : "unavailable");
		for (i = 0, first = 1; i < summary->n; i++) {
			if (strcmp(summary->kv[i].value, "-") ||
			    (c && !counter_needs_timing(counters,
							summary->kv[i].name)))
				continue;
			fputs(first ? "" : ", ", stdout);
			json_string(stdout, summary->kv[i].name);
			first = 0;
		}
	}
	fputs("], \"debugfs\": ", stdout);
	if (debugfs_err) {
		json_string(stdout, debugfs_problem(debugfs_err, &hint));
		fputs(", \"filter\": null, \"probes\": null, \"probes_attached\": null, \"probes_unavailable\": null}\n",
		      stdout);
		return;
	}
	fputs("\"ok\", \"filter\": {\"dev\": ", stdout);
	v = wpstat_kv_get(config, "filter_dev");
	json_string_or_null(stdout, v && strcmp(v, "none") ? v : NULL);
	v = wpstat_kv_get(config, "filter_pid");
	w = wpstat_kv_get(config, "filter_pid_alive");
	printf(", \"pid\": %s, \"pid_exited\": %s}, \"probes\": [",
	       v && isdigit((unsigned char)v[0]) && strcmp(v, "0") ? v : "null",
	       w && !strcmp(w, "0") ? "true" : "false");
	for (i = 0; i < probes->n; i++) {
		const struct probe_info *p = &probes->p[i];

		fputs(i ? ", " : "", stdout);
		fputs("{\"name\": ", stdout);
		json_string(stdout, p->name);
		fputs(", \"target\": ", stdout);
		json_string(stdout, p->target);
		fputs(", \"kind\": ", stdout);
		json_string(stdout, p->kind);
		fputs(", \"status\": ", stdout);
		json_string(stdout, p->status);
		printf(", \"hits\": %" PRIu64 ", \"missed\": %" PRIu64 "}",
		       p->hits, p->missed);
	}
	for (c = 0; c < 2; c++) {
		printf("], \"probes_%s\": [", c ? "unavailable" : "attached");
		for (i = 0, first = 1; i < probes->n; i++) {
			if (probe_attached(&probes->p[i]) == !!c)
				continue;
			fputs(first ? "" : ", ", stdout);
			json_string(stdout, probes->p[i].name);
			first = 0;
		}
	}
	puts("]}");
}

static void status_text(bool loaded, int refcnt,
			const struct module_param *params, size_t nparams,
			const struct wpstat_kvlist *summary,
			const struct wpstat_kvlist *counters,
			const struct wpstat_kvlist *config,
			const struct probe_list *probes, int debugfs_err)
{
	const char *hint, *v, *w, *alive;
	size_t i, nattached = 0;
	bool first;
	int c;

	printf("module:      %s", loaded ? "loaded" : "not loaded");
	if (loaded)
		printf(" (refcount %d)", refcnt);
	printf("\nkernel:      %s\n", kernel_release());
	if (!loaded)
		return;
	fputs("parameters: ", stdout);
	for (i = 0; i < nparams; i++)
		printf(" %s=%s", params[i].name,
		       params[i].value[0] ? params[i].value : "\"\"");
	v = wpstat_kv_get(summary, "enabled");
	printf("\ncounting:    %s\n", !v ? "unknown" : strcmp(v, "0") ?
	       "enabled" : "disabled (wpstat enable)");
	if (debugfs_err) {
		debugfs_problem(debugfs_err, &hint);
		printf("filters:     unknown (%s)\nprobes:      unknown (%s)\n",
		       hint, hint);
	} else {
		v = wpstat_kv_get(config, "filter_dev");
		w = wpstat_kv_get(config, "filter_pid");
		alive = wpstat_kv_get(config, "filter_pid_alive");
		printf("filters:     dev %s, pid %s%s\n", v ? v : "?",
		       !w ? "?" : strcmp(w, "0") ? w : "none",
		       alive && !strcmp(alive, "0") ?
		       " (exited: matches nothing)" : "");
		for (i = 0; i < probes->n; i++)
			nattached += probe_attached(&probes->p[i]);
		printf("probes:      %zu of %zu attached:", nattached, probes->n);
		for (i = 0; i < probes->n; i++)
			if (probe_attached(&probes->p[i]))
				printf(" %s", probes->p[i].name);
		fputs("\nunavailable:", stdout);
		if (nattached == probes->n)
			fputs(" none", stdout);
		for (i = 0; i < probes->n; i++)
			if (!probe_attached(&probes->p[i]))
				printf(" %s (%s, %s)", probes->p[i].name,
				       probes->p[i].target, probes->p[i].status);
		putchar('\n');
	}
	v = param_value(params, nparams, "level");
	printf("level:       %s\n", v ? v : "unknown");
	/*
	 * A counter reads "-" when its level is not the current one or when
	 * a probe it needs is missing; /proc/wpstat/counters says which.
	 */
	fputs("counters:    ", stdout);
	for (c = 0, nattached = 0; c < 2; c++) {
		for (i = 0, first = true; i < summary->n; i++) {
			bool later = counter_needs_timing(counters,
							  summary->kv[i].name);

			if (strcmp(summary->kv[i].value, "-") || later != !c)
				continue;
			if (first && nattached++)
				fputs("; ", stdout);
			printf("%s%s", !first ? ", " : c ?
			       "unavailable (read '-'): " :
			       "at level timing only (read '-'): ",
			       summary->kv[i].name);
			first = false;
		}
	}
	puts(nattached ? "" : "all available");
	v = wpstat_kv_get(summary, "tracked_inodes");
	w = wpstat_kv_get(summary, "max_inodes");
	printf("inodes:      %s tracked of %s", v ? v : "?", w ? w : "?");
	v = wpstat_kv_get(summary, "untracked_events");
	if (v)
		printf(", %s untracked events", v);
	putchar('\n');
	/* Modules without a stalls table have none of these lines. */
	v = wpstat_kv_get(summary, "stall_rows");
	w = wpstat_kv_get(summary, "max_stalls");
	if (v || w) {
		printf("stalls:      %s rows of %s", v ? v : "?", w ? w : "?");
		v = wpstat_kv_get(summary, "stall_row_bytes");
		if (v)
			printf(" (%s bytes each)", v);
		v = wpstat_kv_get(summary, "stall_overflow_events");
		if (v)
			printf(", %s overflow events", v);
		putchar('\n');
	}
	v = wpstat_kv_get(summary, "histogram_scope");
	if (v)
		printf("histograms:  %s\n", v);
}

static int cmd_status(int argc, char **argv)
{
	static const char shortopts[] = "+:hj";
	static const struct option longopts[] = {
		{ "json",	no_argument,		NULL, 'j' },
		{ "help",	no_argument,		NULL, 'h' },
		{ NULL,		0,			NULL, 0 },
	};
	struct module_param params[32];
	struct wpstat_kvlist summary = { 0 }, config = { 0 }, counters = { 0 };
	struct probe_list probes = { 0 };
	size_t nparams = 0, i;
	int c, err, debugfs_err = 0, refcnt = 0;
	bool json = false, loaded;
	char *refs;

	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			return option_error("status", c, argv, shortopts);
		}
	}
	if (optind < argc)
		return usage_error("status: unexpected argument '%s'", argv[optind]);

	loaded = access(SYSFS_MODULE_DIR, F_OK) == 0 && module_interface_present();
	if (loaded) {
		refs = read_first_line(SYSFS_MODULE_DIR "/refcnt");
		refcnt = refs ? atoi(refs) : 0;
		free(refs);
		nparams = params_read(params, ARRAY_SIZE(params));
		err = wpstat_kv_read(WPSTAT_SUMMARY_PATH, &summary);
		if (err) {
			for (i = 0; i < nparams; i++)
				free(params[i].value);
			return runtime_error("cannot read %s: %s",
					     WPSTAT_SUMMARY_PATH, strerror(-err));
		}
		/* Absent before the module had it: all '-' are then probes. */
		wpstat_kv_read(WPSTAT_COUNTERS_PATH, &counters);
		err = wpstat_kv_read(DEBUGFS_CONFIG, &config);
		if (!err)
			err = probes_read(&probes);
		debugfs_err = -err;
	}
	if (json)
		status_json(loaded, refcnt, params, nparams, &summary,
			    &counters, &config, &probes, debugfs_err);
	else
		status_text(loaded, refcnt, params, nparams, &summary,
			    &counters, &config, &probes, debugfs_err);
	for (i = 0; i < nparams; i++)
		free(params[i].value);
	wpstat_kv_free(&summary);
	wpstat_kv_free(&counters);
	wpstat_kv_free(&config);
	probe_list_free(&probes);
	return 0;
}

/* ---- show --------------------------------------------------------------- */

enum show_format { FMT_TABLE, FMT_JSON, FMT_PROMETHEUS };

/* Directories for --resolve: the option's value plus any operands after. */
struct dir_list {
	size_t n;
	char **dirs;
};

static int dir_list_add(struct dir_list *d, char *dir)
{
	char **dirs = realloc(d->dirs, (d->n + 1) * sizeof(*dirs));

	if (!dirs)
		return runtime_error("out of memory");
	d->dirs = dirs;
	d->dirs[d->n++] = dir;
	return 0;
}

static int cmd_show(int argc, char **argv)
{
	static const char shortopts[] = ":hjs:n:f:r:";
	static const struct option longopts[] = {
		{ "sort",	required_argument,	NULL, 's' },
		{ "top",	required_argument,	NULL, 'n' },
		{ "json",	no_argument,		NULL, 'j' },
		{ "format",	required_argument,	NULL, 'f' },
		{ "resolve",	required_argument,	NULL, 'r' },
		{ "help",	no_argument,		NULL, 'h' },
		{ NULL,		0,			NULL, 0 },
	};
	enum show_format format = FMT_TABLE;
	const char *sort = "mkwrite_wp", *format_arg = NULL;
	struct wpstat_kvlist summary = { 0 };
	struct dir_list dirs = { 0 };
	struct wpstat_snapshot snap;
	struct file_list list;
	uint64_t top = SIZE_MAX;
	bool json = false;
	int c, col, ret;

	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			sort = optarg;
			break;
		case 'n':
			ret = parse_uint("--top", optarg, 1, SIZE_MAX, &top);
			if (ret)
				goto out_dirs;
			break;
		case 'j':
			json = true;
			break;
		case 'f':
			format_arg = optarg;
			if (!strcmp(optarg, "table")) {
				format = FMT_TABLE;
			} else if (!strcmp(optarg, "json")) {
				format = FMT_JSON;
			} else if (!strcmp(optarg, "prometheus")) {
				format = FMT_PROMETHEUS;
			} else {
				ret = usage_error("--format: unknown format '%s' (expected table, json or prometheus)",
						  optarg);
				goto out_dirs;
			}
			break;
		case 'r':
			ret = dir_list_add(&dirs, optarg);
			if (ret)
				goto out_dirs;
			break;
		case 'h':
			usage(stdout);
			ret = 0;
			goto out_dirs;
		default:
			ret = option_error("show", c, argv, shortopts);
			goto out_dirs;
		}
	}
	if (json && format_arg && format != FMT_JSON) {
		ret = usage_error("--json and --format %s contradict each other",
				  format_arg);
		goto out_dirs;
	}
	if (json)
		format = FMT_JSON;
	for (; optind < argc; optind++) {
		if (!dirs.n) {
			ret = usage_error("show: unexpected argument '%s' (directories to resolve go after --resolve)",
					  argv[optind]);
			goto out_dirs;
		}
		ret = dir_list_add(&dirs, argv[optind]);
		if (ret)
			goto out_dirs;
	}
	ret = check_resolve_dirs(dirs.dirs, dirs.n);
	if (ret)
		goto out_dirs;

	ret = read_snapshot(&snap);
	if (ret)
		goto out_dirs;
	ret = parse_sort_field(&snap, sort, &col);
	if (ret)
		goto out_snap;
	if (file_list_build(NULL, &snap, &list)) {
		ret = runtime_error("out of memory");
		goto out_snap;
	}
	file_list_sort(&list, col);
	/* Only the rows shown are worth a path. */
	resolve_paths(list.rows, list.n < top ? list.n : top, NULL, dirs.dirs,
		      dirs.n);

	switch (format) {
	case FMT_TABLE:
		print_table(stdout, &list, top);
		break;
	case FMT_JSON:
		fputs("{\"kernel\": ", stdout);
		json_string(stdout, kernel_release());
		fputs(", \"inodes\": ", stdout);
		json_files(stdout, &list, top, false);
		puts("}");
		break;
	case FMT_PROMETHEUS:
		wpstat_kv_read(WPSTAT_SUMMARY_PATH, &summary);	/* optional */
		print_prometheus(stdout, &list, top, &summary);
		wpstat_kv_free(&summary);
		break;
	}
	ret = 0;
	file_list_free(&list);
out_snap:
	wpstat_snapshot_free(&snap);
out_dirs:
	free(dirs.dirs);
	return ret;
}

/* ---- watch -------------------------------------------------------------- */

/* Set by SIGINT/SIGTERM: watch ends cleanly at the next wake-up. */
static volatile sig_atomic_t stop_requested;

static void on_stop_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

/*
 * Paths found for keys in earlier intervals, hits and misses alike, so a
 * --resolve walk is done once per file and not once per interval.
 */
struct path_cache {
	size_t n, cap;
	struct path_cache_entry {
		struct wpstat_row key;	/* dev, ino, gen only */
		char *path;		/* NULL: not found */
	} *e;
};

static struct path_cache_entry *path_cache_find(struct path_cache *pc,
						const struct wpstat_row *key)
{
	size_t i;

	for (i = 0; i < pc->n; i++)
		if (!key_cmp(&pc->e[i].key, key))
			return &pc->e[i];
	return NULL;
}

static void path_cache_add(struct path_cache *pc, const struct wpstat_row *key,
			   const char *path)
{
	struct path_cache_entry *e;

	if (pc->n == pc->cap) {
		size_t cap = pc->cap ? 2 * pc->cap : 64;

		e = realloc(pc->e, cap * sizeof(*e));
		if (!e)
			return;
		pc->e = e;
		pc->cap = cap;
	}
	e = &pc->e[pc->n++];
	memset(&e->key, 0, sizeof(e->key));
	e->key.major = key->major;
	e->key.minor = key->minor;
	e->key.ino = key->ino;
	e->key.gen = key->gen;
	e->path = path ? strdup(path) : NULL;
}

static void path_cache_free(struct path_cache *pc)
{
	size_t i;

	for (i = 0; i < pc->n; i++)
		free(pc->e[i].path);
	free(pc->e);
	memset(pc, 0, sizeof(*pc));
}

static void resolve_cached(struct path_cache *pc, struct file_row *rows,
			   size_t n, char *const *dirs, size_t ndirs)
{
	bool missing = false;
	size_t i;

	for (i = 0; i < n; i++) {
		struct path_cache_entry *e = path_cache_find(pc, rows[i].row);

		if (!e)
			missing = true;
		else if (e->path)
			rows[i].path = strdup(e->path);
	}
	if (!missing)
		return;
	resolve_paths(rows, n, NULL, dirs, ndirs);
	for (i = 0; i < n; i++)
		if (!path_cache_find(pc, rows[i].row))
			path_cache_add(pc, rows[i].row, rows[i].path);
}

/* Sleep until @deadline (CLOCK_MONOTONIC ns); false if asked to stop. */
static bool sleep_until(uint64_t deadline)
{
	struct timespec ts = {
		.tv_sec = deadline / NSEC_PER_SEC,
		.tv_nsec = deadline % NSEC_PER_SEC,
	};

	while (!stop_requested) {
		int err = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts,
					  NULL);

		if (!err)
			return !stop_requested;
		if (err != EINTR)
			return false;
	}
	return false;
}

static int cmd_watch(int argc, char **argv)
{
	static const char shortopts[] = "+:hi:n:c:s:r:";
	static const struct option longopts[] = {
		{ "interval",	required_argument,	NULL, 'i' },
		{ "top",	required_argument,	NULL, 'n' },
		{ "count",	required_argument,	NULL, 'c' },
		{ "sort",	required_argument,	NULL, 's' },
		{ "resolve",	required_argument,	NULL, 'r' },
		{ "help",	no_argument,		NULL, 'h' },
		{ NULL,		0,			NULL, 0 },
	};
	struct wpstat_snapshot prev, cur;
	struct path_cache cache = { 0 };
	struct dir_list dirs = { 0 };
	uint64_t interval = NSEC_PER_SEC, top = WATCH_DEFAULT_TOP, count = 0;
	uint64_t iter, deadline;
	const char *sort = "mkwrite_wp";
	struct sigaction sa;
	bool tty = isatty(STDOUT_FILENO);
	int c, col, ret;

	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		ret = 0;
		switch (c) {
		case 'i':
			ret = parse_seconds("--interval", optarg,
					    WATCH_MAX_INTERVAL_S, &interval);
			break;
		case 'n':
			ret = parse_uint("--top", optarg, 1, SIZE_MAX, &top);
			break;
		case 'c':
			ret = parse_uint("--count", optarg, 1, UINT64_MAX, &count);
			break;
		case 's':
			sort = optarg;
			break;
		case 'r':
			ret = dir_list_add(&dirs, optarg);
			break;
		case 'h':
			usage(stdout);
			free(dirs.dirs);
			return 0;
		default:
			ret = option_error("watch", c, argv, shortopts);
		}
		if (ret)
			goto out_dirs;
	}
	if (optind < argc) {
		ret = usage_error("watch: unexpected argument '%s'", argv[optind]);
		goto out_dirs;
	}
	ret = check_resolve_dirs(dirs.dirs, dirs.n);
	if (ret)
		goto out_dirs;
	ret = read_snapshot(&prev);
	if (ret)
		goto out_dirs;
	ret = parse_sort_field(&prev, sort, &col);
	if (ret)
		goto out_prev;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;	/* no SA_RESTART: wake the sleep */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	deadline = wpstat_now_ns();
	for (iter = 0; !count || iter < count; iter++) {
		struct file_list list;
		char when[32];
		time_t t;

		deadline += interval;
		if (!sleep_until(deadline))
			break;
		ret = read_snapshot(&cur);
		if (ret)
			goto out_prev;
		if (file_list_build(&prev, &cur, &list)) {
			wpstat_snapshot_free(&cur);
			ret = runtime_error("out of memory");
			goto out_prev;
		}
		/* The sort field may have gone if the module was reloaded. */
		if (col >= 0 && col >= cur.ncounters)
			col = SORT_DEV;
		file_list_sort(&list, col);
		resolve_cached(&cache, list.rows, list.n < top ? list.n : top,
			       dirs.dirs, dirs.n);
		t = time(NULL);
		strftime(when, sizeof(when), "%H:%M:%S", localtime(&t));
		if (tty)
			fputs("\033[H\033[2J", stdout);
		printf("wpstat watch  %s  interval %.3gs  %zu file%s changed",
		       when, interval / 1e9, list.n, list.n == 1 ? "" : "s");
		if (list.n > top)
			printf(" (top %" PRIu64 " by %s)", top, sort);
		putchar('\n');
		if (list.n)
			print_table(stdout, &list, top);
		putchar('\n');
		fflush(stdout);
		file_list_free(&list);
		wpstat_snapshot_free(&prev);
		prev = cur;
	}
	ret = 0;
out_prev:
	wpstat_snapshot_free(&prev);
	path_cache_free(&cache);
out_dirs:
	free(dirs.dirs);
	return ret;
}

/* ---- stalls: who stalled, on which file, why ---------------------------- */

#define TOP_DEFAULT_LIMIT	20
#define CGROUP2_DEFAULT_MOUNT	"/sys/fs/cgroup"
#define CGROUP2_SUPER_MAGIC_NR	0x63677270
#define CGROUP_WALK_MAX_DEPTH	64

/* Read /proc/wpstat/stalls, or say in one line why not. */
static int read_stalls(struct wpstat_stall_snapshot *s)
{
	int err = wpstat_stalls_read(NULL, s);

	switch (-err) {
	case 0:
		return 0;
	case ENOENT:
		if (!module_interface_present())
			return module_not_loaded();
		return runtime_error("%s is missing: the loaded module has no per-process stalls (older than this wpstat?)",
				     WPSTAT_STALLS_PATH);
	case EACCES:
	case EPERM:
		return runtime_error("permission denied reading %s: per-process stalls are root-only (run as root)",
				     WPSTAT_STALLS_PATH);
	case EPROTO:
		return runtime_error("%s has an unexpected format (module and wpstat of different versions?)",
				     WPSTAT_STALLS_PATH);
	default:
		return runtime_error("cannot read %s: %s", WPSTAT_STALLS_PATH,
				     strerror(-err));
	}
}

/*
 * Why a task waited, and the columns that say how often and how long.
 * fault is the time inside page_mkwrite, which includes the stable-page
 * and writeback waits made there (wb waits are only those).
 */
enum stall_cause { CAUSE_STABLE, CAUSE_WB, CAUSE_PAUSE, CAUSE_FAULT, CAUSE_NR };

static const struct {
	const char *name;
	const char *events[2];	/* columns counting its events */
	const char *ns, *max_ns;
	const char *unit;	/* what its events are, for the run report */
} stall_causes[CAUSE_NR] = {
	[CAUSE_STABLE]	= { "stable", { "stable_waits" }, "stable_ns",
			    "stable_max_ns", "waits" },
	[CAUSE_WB]	= { "wb", { "wb_waits" }, "wb_ns", "wb_max_ns",
			    "waits" },
	[CAUSE_PAUSE]	= { "pause", { "pauses" }, "pause_ns",
			    "pause_max_ns", "pauses" },
	[CAUSE_FAULT]	= { "fault", { "fault_first", "fault_wp" },
			    "fault_ns", "fault_max_ns", "faults" },
};

/* Where each cause's columns are in a stalls file; -1 if absent. */
struct stall_cols {
	int events[CAUSE_NR][2];
	int ns[CAUSE_NR];
	int max_ns[CAUSE_NR];
};

static void stall_cols_find(const struct wpstat_snapshot *cols,
			    struct stall_cols *sc)
{
	int k, e;

	for (k = 0; k < CAUSE_NR; k++) {
		for (e = 0; e < 2; e++)
			sc->events[k][e] = stall_causes[k].events[e] ?
				wpstat_counter_index(cols, stall_causes[k].events[e]) : -1;
		sc->ns[k] = wpstat_counter_index(cols, stall_causes[k].ns);
		sc->max_ns[k] = wpstat_counter_index(cols, stall_causes[k].max_ns);
	}
}

/* One row's stalls, or several rows' together, by cause. */
struct stall_sum {
	uint64_t events[CAUSE_NR];
	uint64_t ns[CAUSE_NR];
	uint64_t max_ns[CAUSE_NR];
	bool have_ns[CAUSE_NR];		/* the column reads a number */
	bool have_max[CAUSE_NR];
};

static void stall_sum_add(struct stall_sum *sum, const struct stall_cols *sc,
			  const uint64_t *val, const bool *avail)
{
	int k, e, c;

	for (k = 0; k < CAUSE_NR; k++) {
		for (e = 0; e < 2; e++) {
			c = sc->events[k][e];
			if (c >= 0 && avail[c])
				sum->events[k] += val[c];
		}
		c = sc->ns[k];
		if (c >= 0 && avail[c]) {
			sum->ns[k] += val[c];
			sum->have_ns[k] = true;
		}
		c = sc->max_ns[k];
		if (c >= 0 && avail[c]) {
			if (!sum->have_max[k] || val[c] > sum->max_ns[k])
				sum->max_ns[k] = val[c];
			sum->have_max[k] = true;
		}
	}
}

static bool stall_have_time(const struct stall_sum *s)
{
	int k;

	for (k = 0; k < CAUSE_NR; k++)
		if (s->have_ns[k])
			return true;
	return false;
}

/* Time in page_mkwrite that is not one of the waits counted on their own. */
static uint64_t stall_fault_own_ns(const struct stall_sum *s)
{
	uint64_t waits = s->ns[CAUSE_STABLE] + s->ns[CAUSE_WB];

	return s->ns[CAUSE_FAULT] > waits ? s->ns[CAUSE_FAULT] - waits : 0;
}

/*
 * The time stalled.  Adding fault_ns to the waits would count twice the
 * waits made inside page_mkwrite (all wb waits, and the stable waits of a
 * store to a mapping); pauses come after page_mkwrite returns.  So:
 * pause + max(fault, stable + wb), exact for a process that only stores
 * to mappings or only calls write(2), and at level counts (no fault_ns).
 */
static uint64_t stall_total_ns(const struct stall_sum *s)
{
	return s->ns[CAUSE_PAUSE] + s->ns[CAUSE_STABLE] + s->ns[CAUSE_WB] +
	       stall_fault_own_ns(s);
}

static uint64_t stall_events(const struct stall_sum *s)
{
	uint64_t n = 0;
	int k;

	for (k = 0; k < CAUSE_NR; k++)
		n += s->events[k];
	return n;
}

/* The worst single stall of any cause; false if no maximum is known. */
static bool stall_worst_ns(const struct stall_sum *s, uint64_t *worst)
{
	bool have = false;
	int k;

	*worst = 0;
	for (k = 0; k < CAUSE_NR; k++) {
		if (!s->have_max[k])
			continue;
		have = true;
		if (s->max_ns[k] > *worst)
			*worst = s->max_ns[k];
	}
	return have;
}

/*
 * The cause with the most time of its own (fault: less the waits inside
 * it).  Without any time (no timing probe, or no wait lasted a
 * nanosecond), the wait or pause with the most events; else "faults":
 * only faults were seen.
 */
static const char *stall_dominant(const struct stall_sum *s)
{
	uint64_t own[CAUSE_NR], best = 0;
	int k, found = -1;

	own[CAUSE_STABLE] = s->ns[CAUSE_STABLE];
	own[CAUSE_WB] = s->ns[CAUSE_WB];
	own[CAUSE_PAUSE] = s->ns[CAUSE_PAUSE];
	own[CAUSE_FAULT] = stall_fault_own_ns(s);
	for (k = 0; k < CAUSE_NR; k++) {
		if (own[k] > best) {
			best = own[k];
			found = k;
		}
	}
	if (found < 0) {
		for (k = 0; k < CAUSE_NR; k++) {
			if (k != CAUSE_FAULT && s->events[k] > best) {
				best = s->events[k];
				found = k;
			}
		}
	}
	return found < 0 ? "faults" : stall_causes[found].name;
}

/*
 * One row to show: a stalls row's own values (stalls), or their change
 * since an earlier snapshot (top, run), kept in stall_list.deltas.
 */
struct stall_item {
	const struct wpstat_stall_row *row;	/* identity; absolute values */
	const uint64_t *val;			/* shown values */
	const bool *avail;
	struct stall_sum sum;			/* of the shown values */
	uint64_t stall_ns, events;
	const char *path;			/* in stall_list.files, or NULL */
	const char *cgroup_path;		/* in a cgroup_map, or NULL */
};

struct stall_list {
	const struct wpstat_stall_snapshot *snap;
	struct stall_cols cols;
	size_t n;
	struct stall_item *items;
	struct wpstat_row *deltas;	/* backing store of val/avail, or NULL */
	struct file_row *files;		/* distinct files shown, with paths */
	size_t nfiles;
};

static void stall_list_free(struct stall_list *l)
{
	size_t i;

	for (i = 0; i < l->nfiles; i++)
		free(l->files[i].path);
	free(l->files);
	free(l->items);
	free(l->deltas);
	memset(l, 0, sizeof(*l));
}

/* The module's key of a row: process, then file. */
static int stall_key_cmp(const struct wpstat_stall_row *a,
			 const struct wpstat_stall_row *b)
{
	if (a->tgid != b->tgid)
		return a->tgid < b->tgid ? -1 : 1;
	return key_cmp(&a->file, &b->file);
}

static int stall_row_ptr_cmp(const void *a, const void *b)
{
	return stall_key_cmp(*(const struct wpstat_stall_row *const *)a,
			     *(const struct wpstat_stall_row *const *)b);
}

/*
 * The rows of @after (of process @pid only, if not 0) as they are
 * (@before NULL), or only those that changed since @before, with their
 * change.  Rows are matched on tgid, dev, inode and generation.
 */
static int stall_list_build(const struct wpstat_stall_snapshot *before,
			    const struct wpstat_stall_snapshot *after,
			    uint64_t pid, struct stall_list *l)
{
	const struct wpstat_stall_row **index = NULL;
	int bcol[WPSTAT_MAX_COUNTERS];
	size_t i, nafter = after->nrows ? after->nrows : 1;

	memset(l, 0, sizeof(*l));
	l->snap = after;
	stall_cols_find(&after->cols, &l->cols);
	l->items = calloc(nafter, sizeof(*l->items));
	if (!l->items)
		goto nomem;
	if (before) {
		l->deltas = calloc(nafter, sizeof(*l->deltas));
		index = malloc((before->nrows ? before->nrows : 1) *
			       sizeof(*index));
		if (!l->deltas || !index)
			goto nomem;
		for (i = 0; i < before->nrows; i++)
			index[i] = &before->rows[i];
		qsort(index, before->nrows, sizeof(*index), stall_row_ptr_cmp);
		/* Columns by name: a reloaded module may have others. */
		wpstat_column_map(&after->cols, &before->cols, bcol);
	}
	for (i = 0; i < after->nrows; i++) {
		const struct wpstat_stall_row *a = &after->rows[i];
		struct stall_item *it = &l->items[l->n];

		if (pid && a->tgid != pid)
			continue;
		it->row = a;
		it->val = a->file.val;
		it->avail = a->file.avail;
		if (before) {
			const struct wpstat_stall_row **hit;
			struct wpstat_row *d = &l->deltas[l->n];

			hit = bsearch(&a, index, before->nrows, sizeof(*index),
				      stall_row_ptr_cmp);
			if (!wpstat_row_delta(&after->cols, &a->file,
					     hit ? &(*hit)->file : NULL, bcol, d))
				continue;
			it->val = d->val;
			it->avail = d->avail;
		}
		stall_sum_add(&it->sum, &l->cols, it->val, it->avail);
		it->stall_ns = stall_total_ns(&it->sum);
		it->events = stall_events(&it->sum);
		l->n++;
	}
	free(index);
	return 0;
nomem:
	free(index);
	stall_list_free(l);
	return -ENOMEM;
}

enum stall_sort { STALL_SORT_TIME, STALL_SORT_COUNT };

/* Largest first, by time or by events, then the other; then by key. */
static int stall_item_cmp(const void *pa, const void *pb, void *psort)
{
	const struct stall_item *a = pa, *b = pb;
	bool by_count = *(const enum stall_sort *)psort == STALL_SORT_COUNT;
	uint64_t a1 = by_count ? a->events : a->stall_ns;
	uint64_t b1 = by_count ? b->events : b->stall_ns;
	uint64_t a2 = by_count ? a->stall_ns : a->events;
	uint64_t b2 = by_count ? b->stall_ns : b->events;

	if (a1 != b1)
		return a1 > b1 ? -1 : 1;
	if (a2 != b2)
		return a2 > b2 ? -1 : 1;
	return stall_key_cmp(a->row, b->row);
}

static void stall_list_sort(struct stall_list *l, enum stall_sort sort)
{
	qsort_r(l->items, l->n, sizeof(*l->items), stall_item_cmp, &sort);
}

static int file_row_key_cmp(const void *a, const void *b)
{
	return key_cmp(((const struct file_row *)a)->row,
		       ((const struct file_row *)b)->row);
}

/*
 * Paths for the files of the first @limit items: each file once, from
 * @known (a file list that has paths already, may be NULL), then from
 * @cache (top) or a fresh search (named files, mappings, @dirs).
 */
static void stall_list_resolve(struct stall_list *l, size_t limit,
			       const struct file_list *known,
			       struct path_cache *cache, char *const *named,
			       char *const *dirs, size_t ndirs)
{
	size_t i, j, n = l->n < limit ? l->n : limit;

	l->files = calloc(n ? n : 1, sizeof(*l->files));
	if (!l->files)
		return;		/* out of memory: stay with dev:ino */
	for (i = 0; i < n; i++)
		l->files[i].row = &l->items[i].row->file;
	qsort(l->files, n, sizeof(*l->files), file_row_key_cmp);
	for (i = j = 0; i < n; i++)	/* unique */
		if (!j || key_cmp(l->files[j - 1].row, l->files[i].row))
			l->files[j++] = l->files[i];
	l->nfiles = j;
	for (i = 0; known && i < l->nfiles; i++) {
		const struct file_row *k;

		for (j = 0, k = NULL; j < known->n && !k; j++)
			if (known->rows[j].path &&
			    !key_cmp(known->rows[j].row, l->files[i].row))
				k = &known->rows[j];
		if (k)
			l->files[i].path = strdup(k->path);
	}
	if (cache)
		resolve_cached(cache, l->files, l->nfiles, dirs, ndirs);
	else
		resolve_paths(l->files, l->nfiles, named, dirs, ndirs);
	for (i = 0; i < n; i++) {
		struct file_row key = { .row = &l->items[i].row->file };
		const struct file_row *f;

		f = bsearch(&key, l->files, l->nfiles, sizeof(*l->files),
			    file_row_key_cmp);
		l->items[i].path = f ? f->path : NULL;
	}
}

/* ---- cgroup ids to paths ------------------------------------------------ */

/*
 * A cgroup v2 id is the inode number of the cgroup's directory under the
 * cgroup2 mount (kernfs), which readdir() returns as d_ino: one walk of
 * the tree, without a stat per entry, finds every id wanted.  Ids are
 * never reused, so a miss is remembered too.
 */
struct cgroup_map {
	size_t n, cap;
	struct cgroup_entry {
		uint64_t id;
		char *path;	/* from the mount, "/" for the root; NULL: gone */
	} *e;
	char *mount;		/* where cgroup2 is mounted, NULL if nowhere */
	bool mount_looked_up;
};

static struct cgroup_entry *cgroup_map_find(const struct cgroup_map *m,
					    uint64_t id)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (m->e[i].id == id)
			return &m->e[i];
	return NULL;
}

/* A new entry for @id, path unknown; NULL when out of memory. */
static struct cgroup_entry *cgroup_map_add(struct cgroup_map *m, uint64_t id)
{
	struct cgroup_entry *e;

	if (m->n == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 16;

		e = realloc(m->e, cap * sizeof(*e));
		if (!e)
			return NULL;
		m->e = e;
		m->cap = cap;
	}
	e = &m->e[m->n++];
	e->id = id;
	e->path = NULL;
	return e;
}

static void cgroup_map_free(struct cgroup_map *m)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		free(m->e[i].path);
	free(m->e);
	free(m->mount);
	memset(m, 0, sizeof(*m));
}

/*
 * /sys/fs/cgroup where it is the cgroup2 mount (unified hierarchy), else
 * the first cgroup2 mount in mountinfo (hybrid: /sys/fs/cgroup/unified).
 */
static char *cgroup2_mount(void)
{
	char *line = NULL, *found = NULL;
	struct statfs sfs;
	size_t n = 0;
	FILE *f;

	if (!statfs(CGROUP2_DEFAULT_MOUNT, &sfs) &&
	    (unsigned long)sfs.f_type == CGROUP2_SUPER_MAGIC_NR)
		return strdup(CGROUP2_DEFAULT_MOUNT);
	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return NULL;
	while (!found && getline(&line, &n, f) > 0) {
		char mnt[PATH_MAX], *sep;
		int pos = 0;

		/* id parent dev root mountpoint opts... - fstype ... */
		sep = strstr(line, " - cgroup2 ");
		if (!sep || sscanf(line, "%*s %*s %*s %*s %n", &pos) != 0 ||
		    !pos)
			continue;
		line[pos + strcspn(line + pos, " ")] = '\0';
		wpstat_unescape_octal(mnt, sizeof(mnt), line + pos);
		found = strdup(mnt);
	}
	free(line);
	fclose(f);
	return found;
}

struct cgroup_walk {
	struct cgroup_map *map;
	size_t wanted;		/* entries still without a path */
	char path[PATH_MAX];	/* from the mount, without a trailing '/' */
};

static void cgroup_walk_found(struct cgroup_walk *w, uint64_t ino)
{
	struct cgroup_entry *e = cgroup_map_find(w->map, ino);

	if (!e || e->path)
		return;
	e->path = strdup(w->path[0] ? w->path : "/");
	if (e->path && w->wanted)	/* or one not found by an earlier walk */
		w->wanted--;
}

/* Every directory under @fd (taken), depth first; w->path names it. */
static void cgroup_walk_dir(struct cgroup_walk *w, int fd, int depth)
{
	size_t len = strlen(w->path);
	struct dirent *de;
	DIR *dir;

	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return;
	}
	while (w->wanted && (de = readdir(dir))) {
		uint64_t ino = de->d_ino;
		struct stat st;
		int sub;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (de->d_type == DT_UNKNOWN) {
			if (fstatat(dirfd(dir), de->d_name, &st,
				    AT_SYMLINK_NOFOLLOW) || !S_ISDIR(st.st_mode))
				continue;
			ino = st.st_ino;
		} else if (de->d_type != DT_DIR) {
			continue;
		}
		if (snprintf(w->path + len, sizeof(w->path) - len, "/%s",
			     de->d_name) >= (int)(sizeof(w->path) - len))
			continue;
		cgroup_walk_found(w, ino);
		if (depth < CGROUP_WALK_MAX_DEPTH) {
			sub = openat(dirfd(dir), de->d_name,
				     O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
				     O_CLOEXEC);
			if (sub >= 0)
				cgroup_walk_dir(w, sub, depth + 1);
		}
		w->path[len] = '\0';
	}
	closedir(dir);
}

/* Paths for the cgroups of the first @limit items; one walk at most. */
static void cgroup_map_resolve(struct cgroup_map *m, struct stall_list *l,
			       size_t limit)
{
	struct cgroup_walk *w;
	size_t i, n = l->n < limit ? l->n : limit, wanted = 0;
	struct stat st;
	int fd;

	for (i = 0; i < n; i++) {
		uint64_t id = l->items[i].row->cgroup;

		if (id && !cgroup_map_find(m, id) && cgroup_map_add(m, id))
			wanted++;
	}
	if (!m->mount_looked_up) {
		m->mount = cgroup2_mount();
		m->mount_looked_up = true;
	}
	w = wanted && m->mount ? calloc(1, sizeof(*w)) : NULL;
	if (w) {
		w->map = m;
		w->wanted = wanted;
		fd = open(m->mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd >= 0 && !fstat(fd, &st)) {
			cgroup_walk_found(w, st.st_ino);	/* the root */
			cgroup_walk_dir(w, fd, 0);
		} else if (fd >= 0) {
			close(fd);
		}
		free(w);
	}
	for (i = 0; i < n; i++) {
		const struct cgroup_entry *e;

		e = cgroup_map_find(m, l->items[i].row->cgroup);
		l->items[i].cgroup_path = e ? e->path : NULL;
	}
}

/* ---- stalls output ------------------------------------------------------ */

/* The table's columns, the file last; text columns are left-aligned. */
enum {
	SC_PID, SC_COMM, SC_CAUSE, SC_STALL, SC_STABLE, SC_WB, SC_PAUSE,
	SC_FAULT, SC_WORST, SC_EVENTS, SC_FAULT_FIRST, SC_FAULT_WP, SC_CGROUP,
	SC_NR,
};

static const struct {
	const char *name;
	bool left;
} stall_table_cols[SC_NR] = {
	[SC_PID] = { "pid", false },
	[SC_COMM] = { "comm", true },
	[SC_CAUSE] = { "cause", true },
	[SC_STALL] = { "stall", false },
	[SC_STABLE] = { "stable", false },
	[SC_WB] = { "wb", false },
	[SC_PAUSE] = { "pause", false },
	[SC_FAULT] = { "fault", false },
	[SC_WORST] = { "worst", false },
	[SC_EVENTS] = { "events", false },
	[SC_FAULT_FIRST] = { "fault_first", false },
	[SC_FAULT_WP] = { "fault_wp", false },
	[SC_CGROUP] = { "cgroup", true },
};

/* Cell @col of item @it as text; @buf holds at least PATH_MAX bytes. */
static const char *stall_cell(char *buf, size_t len, const struct stall_list *l,
			      const struct stall_item *it, int col)
{
	const struct stall_sum *s = &it->sum;
	uint64_t worst;
	int c, k;
	char *p;

	switch (col) {
	case SC_PID:
		snprintf(buf, len, "%" PRIu32, it->row->tgid);
		return buf;
	case SC_COMM:
		snprintf(buf, len, "%s", it->row->comm);
		for (p = buf; *p; p++)	/* a tab or newline would break rows */
			if (iscntrl((unsigned char)*p))
				*p = '?';
		return buf;
	case SC_CAUSE:
		return stall_dominant(s);
	case SC_STALL:
		if (!stall_have_time(s))
			return "-";
		return wpstat_fmt_duration(buf, len, it->stall_ns);
	case SC_STABLE:
	case SC_WB:
	case SC_PAUSE:
	case SC_FAULT:
		k = col == SC_STABLE ? CAUSE_STABLE : col == SC_WB ? CAUSE_WB :
		    col == SC_PAUSE ? CAUSE_PAUSE : CAUSE_FAULT;
		if (!s->have_ns[k])
			return "-";
		return wpstat_fmt_duration(buf, len, s->ns[k]);
	case SC_WORST:
		if (!stall_worst_ns(s, &worst))
			return "-";
		return wpstat_fmt_duration(buf, len, worst);
	case SC_EVENTS:
		snprintf(buf, len, "%" PRIu64, it->events);
		return buf;
	case SC_FAULT_FIRST:
	case SC_FAULT_WP:
		c = l->cols.events[CAUSE_FAULT][col == SC_FAULT_WP];
		if (c < 0 || !it->avail[c])
			return "-";
		snprintf(buf, len, "%" PRIu64, it->val[c]);
		return buf;
	case SC_CGROUP:
		if (!it->cgroup_path)
			return "-";
		snprintf(buf, len, "%s", it->cgroup_path);
		for (p = buf; *p; p++)
			if (iscntrl((unsigned char)*p))
				*p = '?';
		return buf;
	}
	return "?";
}

static void print_stall_file(FILE *out, const struct stall_item *it)
{
	if (it->path)
		print_path_plain(out, it->path);
	else
		fprintf(out, "%u:%u:%" PRIu64, it->row->file.major,
			it->row->file.minor, it->row->file.ino);
}

/* Columns aligned under their names, the file last; @indent before each. */
static void print_stall_table(FILE *out, const struct stall_list *l,
			      size_t limit, const char *indent)
{
	size_t width[SC_NR], i, n = l->n < limit ? l->n : limit, w;
	char buf[PATH_MAX];
	int c;

	for (c = 0; c < SC_NR; c++) {
		width[c] = strlen(stall_table_cols[c].name);
		for (i = 0; i < n; i++) {
			w = strlen(stall_cell(buf, sizeof(buf), l,
					      &l->items[i], c));
			if (w > width[c])
				width[c] = w;
		}
	}
	fputs(indent, out);
	for (c = 0; c < SC_NR; c++)
		fprintf(out, "%*s ", stall_table_cols[c].left ?
			-(int)width[c] : (int)width[c],
			stall_table_cols[c].name);
	fputs("file\n", out);
	for (i = 0; i < n; i++) {
		fputs(indent, out);
		for (c = 0; c < SC_NR; c++)
			fprintf(out, "%*s ", stall_table_cols[c].left ?
				-(int)width[c] : (int)width[c],
				stall_cell(buf, sizeof(buf), l, &l->items[i], c));
		print_stall_file(out, &l->items[i]);
		fputc('\n', out);
	}
}

/* Every column of the row as the module gave it, plus what wpstat adds. */
static void json_stall(FILE *out, const struct stall_list *l,
		       const struct stall_item *it)
{
	const struct wpstat_snapshot *cols = &l->snap->cols;
	const struct wpstat_stall_row *r = it->row;
	int c;

	fprintf(out, "{\"tgid\": %" PRIu32 ", \"comm\": ", r->tgid);
	json_string(out, r->comm);
	fprintf(out, ", \"dev\": \"%u:%u\", \"ino\": %" PRIu64 ", \"gen\": %"
		PRIu32 ", \"cgroup\": %" PRIu64, r->file.major, r->file.minor,
		r->file.ino, r->file.gen, r->cgroup);
	for (c = 0; c < cols->ncounters; c++) {
		fputs(", ", out);
		json_string(out, cols->names[c]);
		if (it->avail[c])
			fprintf(out, ": %" PRIu64, it->val[c]);
		else
			fputs(": null", out);
	}
	fputs(", \"path\": ", out);
	json_string_or_null(out, it->path);
	fputs(", \"cgroup_path\": ", out);
	json_string_or_null(out, it->cgroup_path);
	if (stall_have_time(&it->sum))
		fprintf(out, ", \"stall_ns\": %" PRIu64, it->stall_ns);
	else
		fputs(", \"stall_ns\": null", out);
	fputs(", \"dominant_cause\": ", out);
	json_string(out, stall_dominant(&it->sum));
	fputc('}', out);
}

static void json_stalls(FILE *out, const struct stall_list *l, size_t limit,
			const char *indent)
{
	size_t i, n = l->n < limit ? l->n : limit;

	fputc('[', out);
	for (i = 0; i < n; i++) {
		fprintf(out, "%s\n%s  ", i ? "," : "", indent);
		json_stall(out, l, &l->items[i]);
	}
	if (n)
		fprintf(out, "\n%s", indent);
	fputc(']', out);
}

/* # HELP of the stalls columns; later columns get a generic line. */
static const struct {
	const char *name;
	const char *help;
} stall_counter_help[] = {
	{ "fault_first", "Write faults on pages of the file's shared mapping not yet mapped" },
	{ "fault_wp", "Write faults on write-protected PTEs of the file's shared mapping" },
	{ "fault_ns", "Time spent in page_mkwrite, waits inside it included" },
	{ "fault_max_ns", "Longest single page_mkwrite call" },
	{ "stable_waits", "Waits for writeback in folio_wait_stable (stable pages)" },
	{ "stable_ns", "Time waited in folio_wait_stable" },
	{ "stable_max_ns", "Longest single wait in folio_wait_stable" },
	{ "wb_waits", "Other waits for writeback inside a write fault" },
	{ "wb_ns", "Time of the other waits for writeback inside a write fault" },
	{ "wb_max_ns", "Longest single other wait for writeback inside a write fault" },
	{ "pauses", "Dirty-throttling sleeps in balance_dirty_pages for the file" },
	{ "pause_ns", "Time slept by dirty throttling for the file" },
	{ "pause_max_ns", "Longest single dirty-throttling sleep for the file" },
};

static const char *stall_help_of(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(stall_counter_help); i++)
		if (!strcmp(stall_counter_help[i].name, name))
			return stall_counter_help[i].help;
	return NULL;
}

/*
 * One series per process and file: pid and comm, the file (dev, ino, gen
 * and its path when found) and the cgroup's path when found.  Rows of
 * exited processes stay until a reset, and so do their series.
 */
static void prom_stall_labels(FILE *out, const struct stall_item *it)
{
	const struct wpstat_stall_row *r = it->row;
	char num[32];

	fprintf(out, "{pid=\"%" PRIu32 "\",comm=", r->tgid);
	prom_label_value(out, r->comm);
	snprintf(num, sizeof(num), "%u:%u", r->file.major, r->file.minor);
	fputs(",dev=", out);
	prom_label_value(out, num);
	fprintf(out, ",ino=\"%" PRIu64 "\",gen=\"%" PRIu32 "\"", r->file.ino,
		r->file.gen);
	if (it->path) {
		fputs(",path=", out);
		prom_label_value(out, it->path);
	}
	if (it->cgroup_path) {
		fputs(",cgroup=", out);
		prom_label_value(out, it->cgroup_path);
	}
	fputc('}', out);
}

static void print_stall_prometheus(FILE *out, const struct stall_list *l,
				   const struct wpstat_kvlist *summary)
{
	const struct wpstat_snapshot *cols = &l->snap->cols;
	char metric[128];
	size_t i;
	int c;

	for (c = 0; c < cols->ncounters; c++) {
		const char *name = cols->names[c], *help = stall_help_of(name);
		bool any = false;

		for (i = 0; i < l->n && !any; i++)
			any = l->items[i].avail[c];
		if (!any)
			continue;
		prom_metric_name(metric, sizeof(metric), "wpstat_stall_", name);
		fprintf(out, "# HELP %s %s", metric,
			help ? help : "wpstat stall counter ");
		if (!help)
			fputs(name, out);
		fprintf(out, " (per process and file).\n# TYPE %s %s\n", metric,
			prom_type(name));
		for (i = 0; i < l->n; i++) {
			const struct stall_item *it = &l->items[i];

			if (!it->avail[c])
				continue;
			fputs(metric, out);
			prom_stall_labels(out, it);
			prom_value(out, name, it->val[c]);
		}
	}
	prom_gauge(out, summary, "stall_rows", "wpstat_stall_rows", "gauge",
		   "Process-and-file rows in the module's stalls table.");
	prom_gauge(out, summary, "max_stalls", "wpstat_stall_max_rows", "gauge",
		   "Size of the module's stalls table.");
	prom_gauge(out, summary, "stall_overflow_events",
		   "wpstat_stall_overflow_events_total", "counter",
		   "Stall events not counted per process and file because the table was full.");
}

/* ---- stalls ------------------------------------------------------------- */

static int parse_stall_sort(const char *arg, enum stall_sort *sort)
{
	if (!strcmp(arg, "time"))
		*sort = STALL_SORT_TIME;
	else if (!strcmp(arg, "count"))
		*sort = STALL_SORT_COUNT;
	else
		return usage_error("--sort: unknown order '%s' (expected time or count)",
				   arg);
	return 0;
}

static int cmd_stalls(int argc, char **argv)
{
	static const char shortopts[] = ":hjf:s:p:r:";
	static const struct option longopts[] = {
		{ "json",	no_argument,		NULL, 'j' },
		{ "format",	required_argument,	NULL, 'f' },
		{ "sort",	required_argument,	NULL, 's' },
		{ "pid",	required_argument,	NULL, 'p' },
		{ "resolve",	required_argument,	NULL, 'r' },
		{ "help",	no_argument,		NULL, 'h' },
		{ NULL,		0,			NULL, 0 },
	};
	enum show_format format = FMT_TABLE;
	enum stall_sort sort = STALL_SORT_TIME;
	struct wpstat_kvlist summary = { 0 };
	struct cgroup_map cgroups = { 0 };
	struct wpstat_stall_snapshot snap;
	struct dir_list dirs = { 0 };
	const char *format_arg = NULL;
	struct stall_list list;
	uint64_t pid = 0;
	bool json = false;
	int c, ret;

	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		ret = 0;
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'f':
			format_arg = optarg;
			if (!strcmp(optarg, "table"))
				format = FMT_TABLE;
			else if (!strcmp(optarg, "json"))
				format = FMT_JSON;
			else if (!strcmp(optarg, "prometheus"))
				format = FMT_PROMETHEUS;
			else
				ret = usage_error("--format: unknown format '%s' (expected table, json or prometheus)",
						  optarg);
			break;
		case 's':
			ret = parse_stall_sort(optarg, &sort);
			break;
		case 'p':
			ret = parse_uint("--pid", optarg, 1, INT_MAX, &pid);
			break;
		case 'r':
			ret = dir_list_add(&dirs, optarg);
			break;
		case 'h':
			usage(stdout);
			goto out_dirs;
		default:
			ret = option_error("stalls", c, argv, shortopts);
		}
		if (ret)
			goto out_dirs;
	}
	if (json && format_arg && format != FMT_JSON) {
		ret = usage_error("--json and --format %s contradict each other",
				  format_arg);
		goto out_dirs;
	}
	if (json)
		format = FMT_JSON;
	for (; optind < argc; optind++) {
		if (!dirs.n) {
			ret = usage_error("stalls: unexpected argument '%s' (directories to resolve go after --resolve)",
					  argv[optind]);
			goto out_dirs;
		}
		ret = dir_list_add(&dirs, argv[optind]);
		if (ret)
			goto out_dirs;
	}
	ret = check_resolve_dirs(dirs.dirs, dirs.n);
	if (ret)
		goto out_dirs;

	ret = read_stalls(&snap);
	if (ret)
		goto out_dirs;
	if (stall_list_build(NULL, &snap, pid, &list)) {
		ret = runtime_error("out of memory");
		goto out_snap;
	}
	stall_list_sort(&list, sort);
	stall_list_resolve(&list, SIZE_MAX, NULL, NULL, NULL, dirs.dirs, dirs.n);
	cgroup_map_resolve(&cgroups, &list, SIZE_MAX);

	switch (format) {
	case FMT_TABLE:
		print_stall_table(stdout, &list, SIZE_MAX, "");
		break;
	case FMT_JSON:
		fputs("{\"kernel\": ", stdout);
		json_string(stdout, kernel_release());
		fputs(", \"stalls\": ", stdout);
		json_stalls(stdout, &list, SIZE_MAX, "");
		puts("}");
		break;
	case FMT_PROMETHEUS:
		wpstat_kv_read(WPSTAT_SUMMARY_PATH, &summary);	/* optional */
		print_stall_prometheus(stdout, &list, &summary);
		wpstat_kv_free(&summary);
		break;
	}
	ret = 0;
	cgroup_map_free(&cgroups);
	stall_list_free(&list);
out_snap:
	wpstat_stalls_free(&snap);
out_dirs:
	free(dirs.dirs);
	return ret;
}

/* ---- top ---------------------------------------------------------------- */

static int cmd_top(int argc, char **argv)
{
	static const char shortopts[] = "+:hi:c:n:r:";
	static const struct option longopts[] = {
		{ "interval",	required_argument,	NULL, 'i' },
		{ "count",	required_argument,	NULL, 'c' },
		{ "limit",	required_argument,	NULL, 'n' },
		{ "resolve",	required_argument,	NULL, 'r' },
		{ "help",	no_argument,		NULL, 'h' },
		{ NULL,		0,			NULL, 0 },
	};
	uint64_t interval = NSEC_PER_SEC, limit = TOP_DEFAULT_LIMIT, count = 0;
	struct wpstat_stall_snapshot prev, cur;
	struct cgroup_map cgroups = { 0 };
	struct path_cache cache = { 0 };
	struct dir_list dirs = { 0 };
	bool tty = isatty(STDOUT_FILENO);
	uint64_t iter, deadline;
	struct sigaction sa;
	int c, ret;

	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		ret = 0;
		switch (c) {
		case 'i':
			ret = parse_seconds("--interval", optarg,
					    WATCH_MAX_INTERVAL_S, &interval);
			break;
		case 'c':
			ret = parse_uint("--count", optarg, 1, UINT64_MAX, &count);
			break;
		case 'n':
			ret = parse_uint("--limit", optarg, 1, SIZE_MAX, &limit);
			break;
		case 'r':
			ret = dir_list_add(&dirs, optarg);
			break;
		case 'h':
			usage(stdout);
			goto out_dirs;
		default:
			ret = option_error("top", c, argv, shortopts);
		}
		if (ret)
			goto out_dirs;
	}
	for (; optind < argc; optind++) {
		if (!dirs.n) {
			ret = usage_error("top: unexpected argument '%s' (directories to resolve go after --resolve)",
					  argv[optind]);
			goto out_dirs;
		}
		ret = dir_list_add(&dirs, argv[optind]);
		if (ret)
			goto out_dirs;
	}
	ret = check_resolve_dirs(dirs.dirs, dirs.n);
	if (ret)
		goto out_dirs;
	ret = read_stalls(&prev);
	if (ret)
		goto out_dirs;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;	/* no SA_RESTART: wake the sleep */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	deadline = wpstat_now_ns();
	for (iter = 0; !count || iter < count; iter++) {
		struct stall_list list;
		char when[32];
		time_t t;

		deadline += interval;
		if (!sleep_until(deadline))
			break;
		ret = read_stalls(&cur);
		if (ret)
			goto out_prev;
		if (stall_list_build(&prev, &cur, 0, &list)) {
			wpstat_stalls_free(&cur);
			ret = runtime_error("out of memory");
			goto out_prev;
		}
		stall_list_sort(&list, STALL_SORT_TIME);
		stall_list_resolve(&list, limit, NULL, &cache, NULL, dirs.dirs,
				   dirs.n);
		cgroup_map_resolve(&cgroups, &list, limit);
		t = time(NULL);
		strftime(when, sizeof(when), "%H:%M:%S", localtime(&t));
		if (tty)
			fputs("\033[H\033[2J", stdout);
		printf("wpstat top  %s  interval %.3gs  %zu row%s changed",
		       when, interval / 1e9, list.n, list.n == 1 ? "" : "s");
		if (list.n > limit)
			printf(" (top %" PRIu64 " by stall time)", limit);
		putchar('\n');
		if (list.n)
			print_stall_table(stdout, &list, limit, "");
		putchar('\n');
		fflush(stdout);
		stall_list_free(&list);
		wpstat_stalls_free(&prev);
		prev = cur;
	}
	ret = 0;
out_prev:
	wpstat_stalls_free(&prev);
	path_cache_free(&cache);
	cgroup_map_free(&cgroups);
out_dirs:
	free(dirs.dirs);
	return ret;
}

/* ---- run ---------------------------------------------------------------- */

struct run_result {
	char **argv;
	pid_t pid;		/* the command's process */
	int exit_status;
	int signal;		/* 0 unless killed by one */
	uint64_t wall_ns;
	bool reset;
};

/*
 * The command's own stalls: the change of the stalls rows of its process
 * (rows are per process: its children have rows of their own, which are
 * not counted).  @err says why there are none to report, if so.
 */
struct run_stalls {
	bool have;
	const char *err;
	struct stall_list list;
	struct stall_sum total;
	uint64_t fault_first, fault_wp;
	bool have_fault_first, have_fault_wp;
};

/* Why run reports no stalls, or NULL when @err is 0 (read them). */
static const char *stalls_unavailable(int err)
{
	switch (-err) {
	case 0:
		return NULL;
	case ENOENT:
		return "the module has no " WPSTAT_STALLS_PATH;
	case EPROTO:
		return WPSTAT_STALLS_PATH " has an unexpected format";
	default:
		return strerror(-err);
	}
}

static void run_stalls_total(struct run_stalls *rs)
{
	const struct stall_list *l = &rs->list;
	int first = l->cols.events[CAUSE_FAULT][0];
	int wp = l->cols.events[CAUSE_FAULT][1];
	size_t i;

	for (i = 0; i < l->n; i++) {
		const struct stall_item *it = &l->items[i];

		stall_sum_add(&rs->total, &l->cols, it->val, it->avail);
		if (first >= 0 && it->avail[first]) {
			rs->fault_first += it->val[first];
			rs->have_fault_first = true;
		}
		if (wp >= 0 && it->avail[wp]) {
			rs->fault_wp += it->val[wp];
			rs->have_fault_wp = true;
		}
	}
}

/* What started the writeback that write-protected pages: mkclean_<column>. */
static const struct {
	const char *column;
	const char *name;
} mkclean_triggers[] = {
	{ "mkclean_msync",		"msync" },
	{ "mkclean_fsync",		"fsync" },
	{ "mkclean_sync_file_range",	"sync_file_range" },
	{ "mkclean_sync",		"sync" },
	{ "mkclean_flusher_periodic",	"flusher-periodic" },
	{ "mkclean_flusher_background",	"flusher-background" },
	{ "mkclean_reclaim",		"reclaim" },
	{ "mkclean_other",		"other" },
};

#define NR_TRIGGERS	ARRAY_SIZE(mkclean_triggers)

/*
 * The changes of the trigger columns over the files of @l, into @sum;
 * @have[t] false where the column is absent or reads "-".  Returns
 * whether any trigger column exists.
 */
static bool trigger_sums(const struct file_list *l, uint64_t *sum, bool *have)
{
	bool any = false;
	size_t t, i;
	int c;

	for (t = 0; t < NR_TRIGGERS; t++) {
		sum[t] = 0;
		have[t] = false;
		c = wpstat_counter_index(l->snap, mkclean_triggers[t].column);
		if (c < 0)
			continue;
		any = true;
		have[t] = true;
		for (i = 0; i < l->n; i++) {
			if (!l->rows[i].avail[c])
				have[t] = false;
			sum[t] += l->rows[i].val[c];
		}
	}
	return any;
}

/* "write-protected by: fsync 120, flusher-periodic 4", largest first. */
static void run_report_triggers(FILE *out, const struct file_list *l)
{
	uint64_t sum[NR_TRIGGERS];
	bool have[NR_TRIGGERS], done[NR_TRIGGERS] = { false };
	size_t t, best, shown = 0;

	if (!trigger_sums(l, sum, have))
		return;
	fputs("\n write-protected by:", out);
	for (;;) {
		for (t = 0, best = NR_TRIGGERS; t < NR_TRIGGERS; t++)
			if (!done[t] && have[t] && sum[t] &&
			    (best == NR_TRIGGERS || sum[t] > sum[best]))
				best = t;
		if (best == NR_TRIGGERS)
			break;
		fprintf(out, "%s %s %" PRIu64, shown++ ? "," : "",
			mkclean_triggers[best].name, sum[best]);
		done[best] = true;
	}
	fputs(shown ? "\n" : " nothing (no folio_mkclean call)\n", out);
}

static void run_report_stalls(FILE *out, const struct run_result *r,
			      const struct run_stalls *rs)
{
	const struct stall_sum *s = &rs->total;
	char buf[32];
	int k;

	if (!rs->have) {
		fprintf(out, "\n stalls: not available (%s)\n", rs->err);
		return;
	}
	fprintf(out, "\n stalls of pid %d", (int)r->pid);
	if (!rs->list.n) {
		fputs(": none\n", out);
		return;
	}
	fputs(" (", out);
	print_path_plain(out, rs->list.items[0].row->comm);
	fprintf(out, "): %s, dominant cause %s\n",
		stall_have_time(s) ? wpstat_fmt_duration(buf, sizeof(buf),
						  stall_total_ns(s)) :
		"no time measured", stall_dominant(s));
	for (k = 0; k < CAUSE_NR; k++) {
		fprintf(out, "   %-7s %8s in %" PRIu64 " %s",
			stall_causes[k].name,
			s->have_ns[k] ? wpstat_fmt_duration(buf, sizeof(buf), s->ns[k]) :
			"-", s->events[k], stall_causes[k].unit);
		if (k == CAUSE_FAULT && rs->have_fault_first &&
		    rs->have_fault_wp)
			fprintf(out, " (%" PRIu64 " first, %" PRIu64 " write-protect)",
				rs->fault_first, rs->fault_wp);
		if (s->have_max[k])
			fprintf(out, ", worst %s",
				wpstat_fmt_duration(buf, sizeof(buf), s->max_ns[k]));
		fputc('\n', out);
	}
	fputc('\n', out);
	print_stall_table(out, &rs->list, SIZE_MAX, "");
}

static void run_report_text(FILE *out, const struct run_result *r,
			    const struct file_list *l,
			    const struct run_stalls *rs)
{
	int i;

	fputs("\n wpstat run:", out);
	for (i = 0; r->argv[i]; i++) {
		fputc(' ', out);
		print_path_plain(out, r->argv[i]);
	}
	fputs("\n\n", out);
	if (l->n)
		print_table(out, l, SIZE_MAX);
	else
		fputs(" no counter changed\n", out);
	run_report_triggers(out, l);
	run_report_stalls(out, r, rs);
	fprintf(out, "\n %.6f s wall time, exit status %d", r->wall_ns / 1e9,
		r->exit_status);
	if (r->signal)
		fprintf(out, " (killed by signal %d, %s)", r->signal,
			strsignal(r->signal));
	fputs("\n\n", out);
}

static void json_u64_or_null(FILE *out, uint64_t v, bool have)
{
	if (have)
		fprintf(out, "%" PRIu64, v);
	else
		fputs("null", out);
}

/* {"msync": N, ...}: the triggers' changes over the run's files. */
static void json_triggers(FILE *out, const struct file_list *l)
{
	uint64_t sum[NR_TRIGGERS];
	bool have[NR_TRIGGERS];
	size_t t;

	if (!trigger_sums(l, sum, have)) {
		fputs("null", out);
		return;
	}
	fputc('{', out);
	for (t = 0; t < NR_TRIGGERS; t++) {
		fprintf(out, "%s\"%s\": ", t ? ", " : "",
			mkclean_triggers[t].name);
		json_u64_or_null(out, sum[t], have[t]);
	}
	fputc('}', out);
}

static void json_run_stalls(FILE *out, const struct run_result *r,
			    const struct run_stalls *rs)
{
	const struct stall_sum *s = &rs->total;
	int k;

	if (!rs->have) {
		fputs("null", out);
		return;
	}
	fprintf(out, "{\"pid\": %d, \"rows\": ", (int)r->pid);
	json_stalls(out, &rs->list, SIZE_MAX, " ");
	fputs(", \"by_cause\": {", out);
	for (k = 0; k < CAUSE_NR; k++) {
		fprintf(out, "%s\"%s\": {\"events\": %" PRIu64, k ? ", " : "",
			stall_causes[k].name, s->events[k]);
		if (k == CAUSE_FAULT) {
			fputs(", \"first\": ", out);
			json_u64_or_null(out, rs->fault_first,
					 rs->have_fault_first);
			fputs(", \"wp\": ", out);
			json_u64_or_null(out, rs->fault_wp, rs->have_fault_wp);
		}
		fputs(", \"ns\": ", out);
		json_u64_or_null(out, s->ns[k], s->have_ns[k]);
		fputs(", \"max_ns\": ", out);
		json_u64_or_null(out, s->max_ns[k], s->have_max[k]);
		fputc('}', out);
	}
	fputs("}, \"stall_ns\": ", out);
	json_u64_or_null(out, stall_total_ns(s), stall_have_time(s));
	fputs(", \"dominant_cause\": ", out);
	json_string_or_null(out, rs->list.n ? stall_dominant(s) : NULL);
	fputc('}', out);
}

static void run_report_json(FILE *out, const struct run_result *r,
			    const struct file_list *l,
			    const struct run_stalls *rs)
{
	int i;

	fputs("{\"command\": [", out);
	for (i = 0; r->argv[i]; i++) {
		fputs(i ? ", " : "", out);
		json_string(out, r->argv[i]);
	}
	fprintf(out, "], \"exit_status\": %d, \"signal\": ", r->exit_status);
	if (r->signal)
		fprintf(out, "%d", r->signal);
	else
		fputs("null", out);
	fprintf(out, ", \"wall_ns\": %" PRIu64 ", \"reset\": %s, \"kernel\": ",
		r->wall_ns, r->reset ? "true" : "false");
	json_string(out, kernel_release());
	fputs(", \"files\": ", out);
	json_files(out, l, SIZE_MAX, true);
	fputs(", \"write_protected_by\": ", out);
	json_triggers(out, l);
	fputs(", \"stalls\": ", out);
	json_run_stalls(out, r, rs);
	fputs("}\n", out);
}

/*
 * Fork and exec @argv; wait for it.  Returns its exit status, or -1 after
 * an error message when it could not be started (*exec_failed: the exit
 * code to use).
 */
static int run_child(char **argv, struct run_result *r, int *exec_failed)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, old_int, old_quit;
	int errpipe[2], child_errno = 0, status;
	uint64_t start;
	ssize_t n;
	pid_t pid;

	*exec_failed = 0;
	if (pipe2(errpipe, O_CLOEXEC)) {
		*exec_failed = runtime_error("pipe: %s", strerror(errno));
		return -1;
	}
	/* Like perf stat: ^C goes to the command, and we still report. */
	sigemptyset(&ign.sa_mask);
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	fflush(NULL);
	start = wpstat_now_ns();
	pid = fork();
	if (pid == 0) {
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGQUIT, &old_quit, NULL);
		close(errpipe[0]);
		execvp(argv[0], argv);
		child_errno = errno;
		n = write(errpipe[1], &child_errno, sizeof(child_errno));
		(void)n;
		_exit(EXIT_NOT_FOUND);
	}
	close(errpipe[1]);
	r->pid = pid;
	if (pid < 0) {
		close(errpipe[0]);
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGQUIT, &old_quit, NULL);
		*exec_failed = runtime_error("fork: %s", strerror(errno));
		return -1;
	}
	do {
		n = read(errpipe[0], &child_errno, sizeof(child_errno));
	} while (n < 0 && errno == EINTR);
	close(errpipe[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	r->wall_ns = wpstat_now_ns() - start;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);

	if (n == sizeof(child_errno)) {
		if (child_errno == ENOENT)
			*exec_failed = fail(EXIT_NOT_FOUND, "%s: command not found",
					    argv[0]);
		else
			*exec_failed = fail(EXIT_CANNOT_EXEC, "%s: %s", argv[0],
					    strerror(child_errno));
		return -1;
	}
	if (WIFSIGNALED(status)) {
		r->signal = WTERMSIG(status);
		return 128 + r->signal;
	}
	return WEXITSTATUS(status);
}

static int cmd_run(int argc, char **argv)
{
	static const char shortopts[] = "+:hjo:r:";
	static const struct option longopts[] = {
		{ "json",	no_argument,		NULL, 'j' },
		{ "reset",	no_argument,		NULL, 'R' },
		{ "output",	required_argument,	NULL, 'o' },
		{ "resolve",	required_argument,	NULL, 'r' },
		{ "help",	no_argument,		NULL, 'h' },
		{ NULL,		0,			NULL, 0 },
	};
	struct wpstat_stall_snapshot stalls_before = { 0 }, stalls_after = { 0 };
	struct wpstat_snapshot before, after;
	struct run_stalls stalls = { 0 };
	struct cgroup_map cgroups = { 0 };
	struct run_result result = { 0 };
	struct dir_list dirs = { 0 };
	const char *output = NULL;
	struct file_list list;
	FILE *out = stderr;
	bool json = false;
	int c, ret, exec_failed;

	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		ret = 0;
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'R':
			result.reset = true;
			break;
		case 'o':
			output = optarg;
			break;
		case 'r':
			ret = dir_list_add(&dirs, optarg);
			break;
		case 'h':
			usage(stdout);
			free(dirs.dirs);
			return 0;
		default:
			ret = option_error("run", c, argv, shortopts);
		}
		if (ret)
			goto out_dirs;
	}
	if (optind >= argc) {
		ret = usage_error("run: no command given (wpstat run [--json] [--reset] -- CMD [ARGS...])");
		goto out_dirs;
	}
	result.argv = argv + optind;
	ret = check_resolve_dirs(dirs.dirs, dirs.n);
	if (ret)
		goto out_dirs;
	/* Before anything runs, so that no failure wastes the run. */
	ret = result.reset ? control_command("reset", NULL, NULL) : 0;
	if (ret)
		goto out_dirs;
	ret = read_snapshot(&before);
	if (ret)
		goto out_dirs;
	/* Optional: a module without per-process stalls still runs CMD. */
	stalls.err = stalls_unavailable(wpstat_stalls_read(NULL, &stalls_before));
	stalls.have = !stalls.err;
	if (output) {
		out = fopen(output, "we");
		if (!out) {
			ret = runtime_error("-o %s: %s", output, strerror(errno));
			goto out_before;
		}
	}

	result.exit_status = run_child(result.argv, &result, &exec_failed);
	if (result.exit_status < 0) {
		ret = exec_failed;
		goto out_file;
	}
	ret = result.exit_status;
	if (read_snapshot(&after)) {
		ret = ret ? ret : EXIT_RUNTIME;
		goto out_file;
	}
	if (stalls.have) {
		stalls.err = stalls_unavailable(wpstat_stalls_read(NULL,
								   &stalls_after));
		stalls.have = !stalls.err;
	}
	if (stalls.have && stall_list_build(&stalls_before, &stalls_after,
					    result.pid, &stalls.list)) {
		stalls.have = false;
		stalls.err = "out of memory";
	}
	if (file_list_build(&before, &after, &list)) {
		ret = runtime_error("out of memory");
		goto out_after;
	}
	file_list_sort(&list, wpstat_counter_index(&after, "mkwrite_wp") >= 0 ?
		       wpstat_counter_index(&after, "mkwrite_wp") : SORT_DEV);
	/* The command has exited: its own arguments name its files best. */
	resolve_paths(list.rows, list.n, result.argv, dirs.dirs, dirs.n);
	if (stalls.have) {
		stall_list_sort(&stalls.list, STALL_SORT_TIME);
		stall_list_resolve(&stalls.list, SIZE_MAX, &list, NULL,
				   result.argv, dirs.dirs, dirs.n);
		cgroup_map_resolve(&cgroups, &stalls.list, SIZE_MAX);
		run_stalls_total(&stalls);
	}
	if (json)
		run_report_json(out, &result, &list, &stalls);
	else
		run_report_text(out, &result, &list, &stalls);
	file_list_free(&list);
	if (fflush(out) || ferror(out))
		ret = runtime_error("writing the report: %s", strerror(errno));
out_after:
	wpstat_snapshot_free(&after);
out_file:
	if (out != stderr && fclose(out) && !ret)
		ret = runtime_error("-o %s: %s", output, strerror(errno));
out_before:
	wpstat_snapshot_free(&before);
	/* All zeroed unless filled: freeing them is always right. */
	stall_list_free(&stalls.list);
	cgroup_map_free(&cgroups);
	wpstat_stalls_free(&stalls_before);
	wpstat_stalls_free(&stalls_after);
out_dirs:
	free(dirs.dirs);
	return ret;
}

/* ---- control commands --------------------------------------------------- */

static int no_options(const char *cmd, int argc, char **argv, int nargs_max)
{
	static const char shortopts[] = "+:h";
	static const struct option longopts[] = {
		{ "help",	no_argument,		NULL, 'h' },
		{ NULL,		0,			NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return -1;
		}
		return option_error(cmd, c, argv, shortopts);
	}
	if (argc - optind > nargs_max)
		return usage_error("%s: unexpected argument '%s'", cmd,
				   argv[optind + nargs_max]);
	return 0;
}

/* reset, enable and disable take no argument and mean what they say. */
static int cmd_simple_control(int argc, char **argv)
{
	int ret = no_options(argv[0], argc, argv, 0);

	if (ret)
		return ret < 0 ? 0 : ret;
	return control_command(argv[0], NULL, NULL);
}

static int cmd_filter(int argc, char **argv)
{
	char cmd[96], einval[160], esrch[64];
	struct wpstat_file_key key;
	unsigned int maj, min;
	const char *what, *arg;
	uint64_t pid;
	int ret, nargs, err;

	ret = no_options("filter", argc, argv, 2);
	if (ret)
		return ret < 0 ? 0 : ret;
	nargs = argc - optind;
	what = nargs ? argv[optind] : NULL;
	arg = nargs > 1 ? argv[optind + 1] : NULL;
	if (!what)
		return usage_error("filter: expected dev MAJ:MIN, pid TGID, path FILE or none");
	if (!strcmp(what, "none")) {
		if (arg)
			return usage_error("filter none: unexpected argument '%s'", arg);
		return control_command("filter none", NULL, NULL);
	}
	if (strcmp(what, "dev") && strcmp(what, "pid") && strcmp(what, "path"))
		return usage_error("filter: unknown filter '%s' (expected dev, pid, path or none)",
				   what);
	if (!arg)
		return usage_error("filter %s: missing %s", what,
				   !strcmp(what, "dev") ? "MAJ:MIN" :
				   !strcmp(what, "pid") ? "TGID" : "FILE");
	if (!strcmp(what, "dev")) {
		if (!parse_dev(arg, &maj, &min))
			return usage_error("filter dev: invalid device '%s' (expected MAJ:MIN, e.g. 8:1)",
					   arg);
		snprintf(cmd, sizeof(cmd), "filter dev %u:%u", maj, min);
		snprintf(einval, sizeof(einval),
			 "the module rejected device %u:%u (it needs major < 4096, minor < 1048576, not 0:0)",
			 maj, min);
		return control_command(cmd, einval, NULL);
	}
	if (!strcmp(what, "pid")) {
		ret = parse_uint("filter pid", arg, 1, INT_MAX, &pid);
		if (ret)
			return ret;
		snprintf(cmd, sizeof(cmd), "filter pid %" PRIu64, pid);
		snprintf(esrch, sizeof(esrch), "no process with pid %" PRIu64, pid);
		return control_command(cmd, NULL, esrch);
	}
	err = wpstat_path_key(arg, &key);
	if (err)
		return runtime_error("filter path: %s: %s", arg, strerror(-err));
	snprintf(cmd, sizeof(cmd), "filter dev %u:%u", key.major, key.minor);
	snprintf(einval, sizeof(einval),
		 "the module cannot filter on device %u:%u, the filesystem holding %s",
		 key.major, key.minor, arg);
	ret = control_command(cmd, einval, NULL);
	if (!ret)
		printf("filtering on dev %u:%u (the filesystem holding %s)\n",
		       key.major, key.minor, arg);
	return ret;
}

/* level: print the current level, or switch to another without unloading. */
static int cmd_level(int argc, char **argv)
{
	char cmd[32], einval[96];
	const char *level;
	char *cur;
	int ret;

	ret = no_options("level", argc, argv, 1);
	if (ret)
		return ret < 0 ? 0 : ret;
	if (optind == argc) {
		if (!module_interface_present())
			return module_not_loaded();
		cur = read_first_line(SYSFS_PARAMS_DIR "/level");
		if (!cur)
			return runtime_error("cannot read %s: %s",
					     SYSFS_PARAMS_DIR "/level",
					     strerror(errno));
		printf("%s\n", cur);
		free(cur);
		return 0;
	}
	level = argv[optind];
	if (strcmp(level, "counts") && strcmp(level, "timing"))
		return usage_error("level: unknown level '%s' (expected counts or timing)",
				   level);
	snprintf(cmd, sizeof(cmd), "level %s", level);
	snprintf(einval, sizeof(einval),
		 "the module rejected level %s (see the kernel log)", level);
	ret = control_command(cmd, einval, NULL);
	if (!ret)
		printf("level %s\n", level);
	return ret;
}

/* "MAJ:MIN:INO[:GEN]" as decimal numbers, nothing else. */
static bool parse_inode_key(const char *arg, struct wpstat_file_key *key)
{
	unsigned long long v[4];
	const char *p = arg;
	char *end;
	int n = 0;

	for (;;) {
		if (n == 4 || !isdigit((unsigned char)*p))
			return false;
		errno = 0;
		v[n++] = strtoull(p, &end, 10);
		if (errno)
			return false;
		if (!*end)
			break;
		if (*end != ':')
			return false;
		p = end + 1;
	}
	if (n < 3 || v[0] > UINT_MAX || v[1] > UINT_MAX ||
	    (n == 4 && v[3] > UINT32_MAX))
		return false;
	key->major = v[0];
	key->minor = v[1];
	key->ino = v[2];
	key->gen = n == 4 ? v[3] : 0;
	key->have_gen = n == 4;
	return true;
}

/*
 * The control file takes one line of printable ASCII, split into words at
 * blanks: a path with a blank or another byte cannot be passed.
 */
static bool control_word_ok(const char *s)
{
	for (; *s; s++)
		if (!isascii((unsigned char)*s) || !isgraph((unsigned char)*s))
			return false;
	return true;
}

/* histogram: which events the debugfs histograms count (and clear them). */
static int cmd_histogram(int argc, char **argv)
{
	char cmd[PATH_MAX + 32], einval[PATH_MAX + 160];
	struct wpstat_kvlist summary;
	struct wpstat_file_key key;
	const char *what, *arg, *scope;
	unsigned int maj, min;
	char *abs = NULL;
	int ret, nargs, err;

	ret = no_options("histogram", argc, argv, 2);
	if (ret)
		return ret < 0 ? 0 : ret;
	nargs = argc - optind;
	what = nargs ? argv[optind] : NULL;
	arg = nargs > 1 ? argv[optind + 1] : NULL;
	if (!what)
		return usage_error("histogram: expected all, dev MAJ:MIN, inode MAJ:MIN:INO[:GEN] or path FILE");
	if (!strcmp(what, "all")) {
		if (arg)
			return usage_error("histogram all: unexpected argument '%s'",
					   arg);
		snprintf(cmd, sizeof(cmd), "histogram all");
		einval[0] = '\0';
	} else if (strcmp(what, "dev") && strcmp(what, "inode") &&
		   strcmp(what, "path")) {
		return usage_error("histogram: unknown scope '%s' (expected all, dev, inode or path)",
				   what);
	} else if (!arg) {
		return usage_error("histogram %s: missing %s", what,
				   !strcmp(what, "dev") ? "MAJ:MIN" :
				   !strcmp(what, "inode") ? "MAJ:MIN:INO[:GEN]" :
				   "FILE");
	} else if (!strcmp(what, "dev")) {
		if (!parse_dev(arg, &maj, &min))
			return usage_error("histogram dev: invalid device '%s' (expected MAJ:MIN, e.g. 8:1)",
					   arg);
		snprintf(cmd, sizeof(cmd), "histogram dev %u:%u", maj, min);
		snprintf(einval, sizeof(einval),
			 "the module rejected device %u:%u (it needs major < 4096, minor < 1048576, not 0:0)",
			 maj, min);
	} else if (!strcmp(what, "inode")) {
		if (!parse_inode_key(arg, &key))
			return usage_error("histogram inode: invalid inode '%s' (expected MAJ:MIN:INO[:GEN], e.g. 8:1:12 or 8:1:12:3405691582)",
					   arg);
		ret = snprintf(cmd, sizeof(cmd), "histogram inode %u:%u:%" PRIu64,
			       key.major, key.minor, key.ino);
		if (key.have_gen)
			snprintf(cmd + ret, sizeof(cmd) - ret, ":%" PRIu32,
				 key.gen);
		snprintf(einval, sizeof(einval),
			 "the module rejected inode %s (device major < 4096, minor < 1048576, not 0:0)",
			 arg);
	} else {
		/* The kernel looks the path up itself: give it an absolute one. */
		abs = realpath(arg, NULL);
		if (!abs)
			return runtime_error("histogram path: %s: %s", arg,
					     strerror(errno));
		if (!control_word_ok(abs)) {
			err = wpstat_path_key(abs, &key);
			free(abs);
			if (err)
				return runtime_error("histogram path: %s: %s", arg,
						     strerror(-err));
			ret = snprintf(cmd, sizeof(cmd), "%u:%u:%" PRIu64,
				       key.major, key.minor, key.ino);
			if (key.have_gen)
				snprintf(cmd + ret, sizeof(cmd) - ret, ":%" PRIu32,
					 key.gen);
			return usage_error("histogram path: '%s' has a blank or a byte that is not printable ASCII, which the control file cannot carry; name it by inode: wpstat histogram inode %s",
					   arg, cmd);
		}
		snprintf(cmd, sizeof(cmd), "histogram path %s", abs);
		snprintf(einval, sizeof(einval),
			 "the module rejected 'histogram path %s' (path too long for the control file, or not a file it can look up)",
			 abs);
	}
	ret = control_command(cmd, einval[0] ? einval : NULL, NULL);
	if (!ret) {
		/* What the module made of it, e.g. the path's inode. */
		if (wpstat_kv_read(WPSTAT_SUMMARY_PATH, &summary))
			memset(&summary, 0, sizeof(summary));
		scope = wpstat_kv_get(&summary, "histogram_scope");
		printf("histogram scope: %s\n", scope ? scope : cmd + 10);
		wpstat_kv_free(&summary);
	}
	free(abs);
	return ret;
}

/* ---- main --------------------------------------------------------------- */

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
} commands[] = {
	{ "load",	cmd_load },
	{ "unload",	cmd_unload },
	{ "status",	cmd_status },
	{ "show",	cmd_show },
	{ "watch",	cmd_watch },
	{ "run",	cmd_run },
	{ "stalls",	cmd_stalls },
	{ "top",	cmd_top },
	{ "reset",	cmd_simple_control },
	{ "enable",	cmd_simple_control },
	{ "disable",	cmd_simple_control },
	{ "filter",	cmd_filter },
	{ "level",	cmd_level },
	{ "histogram",	cmd_histogram },
};

int main(int argc, char **argv)
{
	static const char shortopts[] = "+:h";
	static const struct option longopts[] = {
		{ "help",	no_argument,		NULL, 'h' },
		{ "version",	no_argument,		NULL, 'V' },
		{ NULL,		0,			NULL, 0 },
	};
	const char *name;
	size_t i;
	int c, ret;

	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("wpstat %s\n", WPSTAT_VERSION);
			return 0;
		default:
			return option_error("", c, argv, shortopts);
		}
	}
	if (optind >= argc)
		return usage_error("no command given (see wpstat --help)");
	name = argv[optind];
	if (!strcmp(name, "help")) {
		usage(stdout);
		return 0;
	}
	for (i = 0; i < ARRAY_SIZE(commands); i++) {
		if (strcmp(name, commands[i].name))
			continue;
		argc -= optind;
		argv += optind;
		optind = 0;	/* glibc: start afresh for the subcommand */
		ret = commands[i].fn(argc, argv);
		if (fflush(stdout) && errno != EPIPE && !ret)
			ret = runtime_error("write error: %s", strerror(errno));
		return ret;
	}
	return usage_error("unknown command '%s' (commands: load, unload, status, show, watch, run, stalls, top, reset, enable, disable, filter, level, histogram; see wpstat --help)",
			   name);
}
