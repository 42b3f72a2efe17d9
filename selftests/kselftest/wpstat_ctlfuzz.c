// SPDX-License-Identifier: GPL-2.0
/*
 * wpstat_ctlfuzz: the control file against a hostile writer.
 *
 *   rel.control_fuzz  random, near-miss and garbage control writes, each
 *                     result predicted by a model of the command grammar
 *                     (fz_model(): an independent oracle, on purpose not
 *                     shared with the module's parser), first from one
 *                     writer, then from several at once next to readers
 *                     and a workload.
 *
 * Over 800 lines, for one test: the grammar's model, the generator of
 * writes and the concurrent writers serve only control_fuzz, and are read
 * together when a write's result surprises.
 * WPSTAT_STRESS=1 (make stress) selects 100,000 writes instead of 10,000.
 * WPSTAT_FUZZ_SEED repeats a run.  Runs as root in a guest with wpstat.ko
 * loaded and $WPSTAT_FS_DIR/ext4 mounted (scripts/check/guest-check.sh).
 */
#define _GNU_SOURCE
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "wpstat_test.h"
#include "wpstat_harness.h"

#define NPAGES		16

/* The current debugfs config: 0 or -errno. */
struct cfg {
	int enabled;
	char dev[32];
	char pid[32];
	char level[16];
};

static int read_config(struct cfg *c)
{
	struct wpstat_kvlist l;
	const char *e, *d, *p, *lv;
	int ret = wpstat_kv_read(CONFIG_PATH, &l);

	if (ret)
		return ret;
	e = wpstat_kv_get(&l, "enabled");
	d = wpstat_kv_get(&l, "filter_dev");
	p = wpstat_kv_get(&l, "filter_pid");
	lv = wpstat_kv_get(&l, "level");
	if (!e || !d || !p || !lv || (strcmp(e, "0") && strcmp(e, "1"))) {
		wpstat_kv_free(&l);
		return -EPROTO;
	}
	c->enabled = !strcmp(e, "1");
	snprintf(c->dev, sizeof(c->dev), "%s", d);
	snprintf(c->pid, sizeof(c->pid), "%s", p);
	snprintf(c->level, sizeof(c->level), "%s", lv);
	wpstat_kv_free(&l);
	return 0;
}


/* ---- rel: the control file against random writers ---------------------- */

FIXTURE(rel) {
	struct wps_rel rel;
	pid_t kids[16];
	int nkids;
};

FIXTURE_SETUP(rel)
{
	self->nkids = 0;
	WPS_REL_SETUP(&self->rel, NPAGES);
}

FIXTURE_TEARDOWN(rel)
{
	int i;

	for (i = 0; i < self->nkids; i++) {
		if (self->kids[i] <= 0)
			continue;
		kill(self->kids[i], SIGKILL);
		waitpid(self->kids[i], NULL, 0);
	}
	WPS_REL_TEARDOWN(&self->rel);
}

/*
 * A model of the control parser (wpstat_debugfs.c), to predict each write's
 * result.  Expectations: 0 (success), EINVAL, ESRCH and FZ_PID (a well-formed
 * pid whose existence the writer does not know: success or ESRCH); FZ_ANY
 * (success or EINVAL) is left for what the model cannot predict, today
 * nothing: device numbers are read with kstrtouint, which refuses what
 * does not fit instead of wrapping.  Only printable ASCII and tabs, and one final
 * newline, pass: not Latin-1, where 0xa0 is printable and a space.
 */
#define FZ_PID		-1
#define FZ_ANY		-2
#define FZ_MAX		(4096 + 16)	/* WPSTAT_CONTROL_MAX: PATH_MAX + 16 */
#define FZ_BUF		8192

enum fz_cmd {
	C_NONE, C_RESET, C_ENABLE, C_DISABLE, C_FNONE, C_FDEV_NONE,
	C_FPID_NONE, C_FDEV, C_FPID, C_LEVEL,
};

struct fz_verdict {
	int expect;
	enum fz_cmd cmd;
	unsigned int major, minor;
	long pid;
	int timing;		/* C_LEVEL: 1 for timing, 0 for counts */
};

/* Pids a writer knows to exist or not to. */
struct fz_ctx {
	long alive[3];
	long dead[2];
};

static bool fz_kspace(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

static bool fz_digits(const char *s, size_t *n)
{
	*n = strspn(s, "0123456789");
	return *n > 0;
}

/* The @n digits at @s as kstrtouint() reads them: false on overflow. */
static bool fz_u32(const char *s, size_t n, unsigned int *out)
{
	unsigned long long v = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		v = v * 10 + (s[i] - '0');
		if (v > UINT_MAX)
			return false;
	}
	*out = v;
	return true;
}

static struct fz_verdict fz_model(const char *buf, size_t len,
				  const struct fz_ctx *ctx)
{
	struct fz_verdict v = { .expect = EINVAL, .cmd = C_NONE };
	char s[FZ_MAX + 1], *p, *end, *words[4], *w;
	int n = 0;
	size_t i;

	if (len == 0 || len > FZ_MAX)
		return v;
	for (i = 0; i < len; i++) {
		unsigned char c = buf[i];

		if (c == '\n' && i == len - 1)
			break;
		if (c != '\t' && (c < 0x20 || c > 0x7e))
			return v;
	}
	memcpy(s, buf, len);
	s[len] = '\0';
	for (end = s + len; end > s && fz_kspace(end[-1]); end--)
		;
	*end = '\0';
	for (p = s; fz_kspace(*p); p++)
		;
	while ((w = strsep(&p, " \t")) != NULL) {
		if (!*w)
			continue;
		if (n == 4)
			return v;
		words[n++] = w;
	}
	if (n == 1 && !strcmp(words[0], "reset"))
		v.cmd = C_RESET;
	else if (n == 1 && !strcmp(words[0], "enable"))
		v.cmd = C_ENABLE;
	else if (n == 1 && !strcmp(words[0], "disable"))
		v.cmd = C_DISABLE;
	else if (n == 2 && !strcmp(words[0], "filter") && !strcmp(words[1], "none"))
		v.cmd = C_FNONE;
	else if (n == 2 && !strcmp(words[0], "level") &&
		 (!strcmp(words[1], "counts") || !strcmp(words[1], "timing"))) {
		v.cmd = C_LEVEL;
		v.timing = !strcmp(words[1], "timing");
	}
	if (v.cmd != C_NONE) {
		v.expect = 0;
		return v;
	}
	if (n != 3 || strcmp(words[0], "filter"))
		return v;
	if (!strcmp(words[1], "dev")) {
		size_t a, b;
		char *colon;

		if (!strcmp(words[2], "none")) {
			v.cmd = C_FDEV_NONE;
			v.expect = 0;
			return v;
		}
		/* Digits, a colon, digits, nothing more; kstrtouint each. */
		colon = words[2] + strspn(words[2], "0123456789");
		if (!fz_digits(words[2], &a) || *colon != ':' ||
		    !fz_digits(colon + 1, &b) || colon[1 + b])
			return v;
		if (!fz_u32(words[2], a, &v.major) ||
		    !fz_u32(colon + 1, b, &v.minor))
			return v;	/* kstrtouint: -ERANGE */
		if (v.major >= 1U << 12 || v.minor >= 1U << 20 ||
		    (!v.major && !v.minor))
			return v;
		v.cmd = C_FDEV;
		v.expect = 0;
		return v;
	}
	if (!strcmp(words[1], "pid")) {
		const char *d = words[2];
		size_t nd;

		if (!strcmp(d, "none")) {
			v.cmd = C_FPID_NONE;
			v.expect = 0;
			return v;
		}
		/* kstrtoint(, 10): an optional sign, digits, nothing more. */
		if (*d == '+' || *d == '-')
			d++;
		if (!fz_digits(d, &nd) || d[nd] || words[2][0] == '-')
			return v;
		d += strspn(d, "0");
		if (strlen(d) > 10)	/* -ERANGE */
			return v;
		v.pid = strtol(d, NULL, 10);
		if (v.pid <= 0 || v.pid > 0x7fffffff)
			return v;
		v.cmd = C_FPID;
		v.expect = FZ_PID;
		for (i = 0; i < 3; i++)
			if (ctx->alive[i] && v.pid == ctx->alive[i])
				v.expect = 0;
		for (i = 0; i < 2; i++)
			if (ctx->dead[i] && v.pid == ctx->dead[i])
				v.expect = ESRCH;
		return v;
	}
	return v;
}

static bool fz_accepts(int expect, int err)
{
	switch (expect) {
	case FZ_PID:
		return err == 0 || err == ESRCH;
	case FZ_ANY:
		return err == 0 || err == EINVAL || err == ESRCH;
	default:
		return err == expect;
	}
}

static uint64_t fz_next(uint64_t *s)	/* xorshift64* */
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

#define FZ_RND(s, n)	((size_t)(fz_next(s) % (n)))

static size_t fz_seps(uint64_t *r, char *b, size_t max)
{
	size_t n = FZ_RND(r, 3), i;

	for (i = 0; i < n && i < max; i++)
		b[i] = FZ_RND(r, 3) ? ' ' : '\t';
	return i;
}

/* A filter's value: "none" 1 in 6, @rare 1 in 6, else @common. */
static void fz_filter_value(uint64_t *r, char w[24], const char *rare,
			    const char *common)
{
	switch (FZ_RND(r, 6)) {
	case 0:
		strcpy(w, "none");
		break;
	case 1:
		strcpy(w, rare);
		break;
	default:
		strcpy(w, common);
	}
}

/* A command the module accepts (or ESRCH for a known-dead pid). */
static size_t fz_valid(uint64_t *r, char *b, const struct fz_ctx *ctx)
{
	char w[3][24], rare[24], common[24];
	size_t len = 0;
	int n = 1, i;

	switch (FZ_RND(r, 16)) {
	case 0:
		/* Rarely a level switch: each one waits for RCU-tasks. */
		if (!FZ_RND(r, 4)) {
			strcpy(w[0], "level");
			strcpy(w[1], FZ_RND(r, 2) ? "timing" : "counts");
			n = 2;
			break;
		}
		strcpy(w[0], FZ_RND(r, 8) ? "enable" : "reset");
		break;
	case 1: case 2:
		strcpy(w[0], "enable");
		break;
	case 3: case 4:
		strcpy(w[0], "disable");
		break;
	case 5:
		strcpy(w[0], "filter");
		strcpy(w[1], "none");
		n = 2;
		break;
	case 6: case 7: case 8: case 9:
		strcpy(w[0], "filter");
		strcpy(w[1], "dev");
		n = 3;
		snprintf(rare, sizeof(rare), "%s",
			 FZ_RND(r, 2) ? "4095:1048575" : "0:1");
		snprintf(common, sizeof(common), "%zu:%zu",
			 1 + FZ_RND(r, 4095), FZ_RND(r, 1 << 20));
		fz_filter_value(r, w[2], rare, common);
		break;
	default:
		strcpy(w[0], "filter");
		strcpy(w[1], "pid");
		n = 3;
		snprintf(rare, sizeof(rare), "%ld",
			 ctx->dead[FZ_RND(r, 2)] ?: ctx->dead[0]);
		snprintf(common, sizeof(common), "%ld",
			 ctx->alive[FZ_RND(r, 3)] ?: ctx->alive[0]);
		fz_filter_value(r, w[2], rare, common);
	}
	len += fz_seps(r, b + len, 2);
	for (i = 0; i < n; i++) {
		if (i)
			b[len++] = ' ';
		len += fz_seps(r, b + len, 2);
		memcpy(b + len, w[i], strlen(w[i]));
		len += strlen(w[i]);
	}
	len += fz_seps(r, b + len, 2);
	if (FZ_RND(r, 2))
		b[len++] = '\n';
	return len;
}

/* One fuzz write's bytes into @b (FZ_BUF long): its length. */
static size_t fz_gen(uint64_t *r, char *b, const struct fz_ctx *ctx)
{
	static const char near[] = " \t\n:+-0123456789abcdefilnoprstuvxz";
	static const unsigned char odd[] = {
		0, '\n', '\t', '\r', 0x7f, 0x80, 0x85, 0x9f, 0xa0, 0xff, ':',
		' ', '-', '+', '9',
	};
	size_t len, i;

	switch (FZ_RND(r, 20)) {
	case 0: case 1: case 2: case 3: case 4: case 5:	/* valid */
		return fz_valid(r, b, ctx);
	case 6: case 7:		/* near misses: the parser's own alphabet */
		len = 1 + FZ_RND(r, FZ_MAX);
		for (i = 0; i < len; i++)
			b[i] = near[FZ_RND(r, sizeof(near) - 1)];
		return len;
	case 8:			/* any printable */
		len = 1 + FZ_RND(r, FZ_MAX);
		for (i = 0; i < len; i++)
			b[i] = 0x20 + FZ_RND(r, 0x5f);
		return len;
	case 9:			/* binary */
		len = FZ_RND(r, 100);
		for (i = 0; i < len; i++)
			b[i] = fz_next(r);
		return len;
	case 10: case 11:	/* partial command */
		len = fz_valid(r, b, ctx);
		return len > 1 ? 1 + FZ_RND(r, len - 1) : len;
	case 12:		/* NUL inside or after a command */
		len = fz_valid(r, b, ctx);
		i = FZ_RND(r, len + 1);
		memmove(b + i + 1, b + i, len - i);
		b[i] = '\0';
		return len + 1;
	case 13: case 14: case 15:	/* mutated command */
		len = fz_valid(r, b, ctx);
		for (i = 1 + FZ_RND(r, 2); i > 0; i--) {
			size_t at = FZ_RND(r, len);
			unsigned char c = FZ_RND(r, 2) ? odd[FZ_RND(r, sizeof(odd))] :
					  near[FZ_RND(r, sizeof(near) - 1)];

			switch (FZ_RND(r, 3)) {
			case 0:
				b[at] = c;
				break;
			case 1:
				memmove(b + at + 1, b + at, len - at);
				b[at] = c;
				len++;
				break;
			default:
				if (len > 1) {
					memmove(b + at, b + at + 1, len - at - 1);
					len--;
				}
			}
		}
		return len;
	case 16:		/* a command padded to exactly 64 or 65 bytes */
		len = fz_valid(r, b, ctx);
		if (b[len - 1] == '\n')
			len--;
		i = FZ_RND(r, 2) ? FZ_MAX : FZ_MAX + 1;
		memset(b + len, ' ', i - len);
		return i;
	case 17:		/* overlong, a quarter far over */
		len = FZ_RND(r, 4) ? FZ_MAX + 1 + FZ_RND(r, 64) :
		      FZ_MAX + 1 + FZ_RND(r, FZ_BUF - FZ_MAX - 1);
		i = fz_valid(r, b, ctx);
		memset(b + i, FZ_RND(r, 2) ? ' ' : 'a', len - i);
		return len;
	default:		/* Latin-1 around a command: 0xa0 is a space there */
		len = fz_valid(r, b + 1, ctx) + 1;
		b[0] = FZ_RND(r, 2) ? 0xa0 : 0xe9;
		b[len++] = 0xa0;
		return len;
	}
}

/* One write: 0 or the errno; EIO for a short write. */
static int fz_write(int fd, const char *b, size_t len)
{
	ssize_t n = write(fd, b, len);

	if (n < 0)
		return errno;
	return n == (ssize_t)len ? 0 : EIO;
}

static void fz_describe(char *out, size_t outlen, const char *b, size_t len,
			int expect, int got)
{
	size_t i, o;

	o = snprintf(out, outlen, "len %zu expect %d got %d: '", len, expect,
		     got);
	for (i = 0; i < len && i < 80 && o + 5 < outlen; i++) {
		unsigned char c = b[i];

		o += snprintf(out + o, outlen - o,
			      isprint(c) && c != '\\' ? "%c" : "\\x%02x", c);
	}
	if (o + 2 < outlen)
		snprintf(out + o, outlen - o, "'");
}

/* What the model says the config now is. */
struct fz_state {
	int enabled;
	unsigned int major, minor;	/* 0:0 none */
	long pid;			/* 0 none */
	int timing;			/* level */
};

static void fz_apply(struct fz_state *st, const struct fz_verdict *v)
{
	switch (v->cmd) {
	case C_ENABLE:
		st->enabled = 1;
		break;
	case C_DISABLE:
		st->enabled = 0;
		break;
	case C_FNONE:
		st->major = st->minor = 0;
		st->pid = 0;
		break;
	case C_FDEV_NONE:
		st->major = st->minor = 0;
		break;
	case C_FPID_NONE:
		st->pid = 0;
		break;
	case C_FDEV:
		st->major = v->major;
		st->minor = v->minor;
		break;
	case C_FPID:
		st->pid = v->pid;
		break;
	case C_LEVEL:
		st->timing = v->timing;
		break;
	default:
		break;
	}
}

/* 0 if the config equals @st, else -1 with the difference in @why. */
static int fz_compare(const struct fz_state *st, char *why, size_t len)
{
	char dev[32], pid[32];
	struct cfg c;

	if (read_config(&c)) {
		snprintf(why, len, "config unreadable or malformed");
		return -1;
	}
	if (st->major || st->minor)
		snprintf(dev, sizeof(dev), "%u:%u", st->major, st->minor);
	else
		strcpy(dev, "none");
	if (st->pid)
		snprintf(pid, sizeof(pid), "%ld", st->pid);
	else
		strcpy(pid, "none");
	if (c.enabled == st->enabled && !strcmp(c.dev, dev) &&
	    !strcmp(c.pid, pid) &&
	    !strcmp(c.level, st->timing ? "timing" : "counts"))
		return 0;
	snprintf(why, len,
		 "config enabled %d dev %s pid %s level %s, model %d %s %s %s",
		 c.enabled, c.dev, c.pid, c.level, st->enabled, dev, pid,
		 st->timing ? "timing" : "counts");
	return -1;
}

/* The model's state from the config, after a write it could not predict. */
static int fz_resync(struct fz_state *st)
{
	struct cfg c;

	if (read_config(&c))
		return -1;
	st->enabled = c.enabled;
	st->timing = !strcmp(c.level, "timing");
	st->major = st->minor = 0;
	st->pid = 0;
	if (strcmp(c.dev, "none") &&
	    sscanf(c.dev, "%u:%u", &st->major, &st->minor) != 2)
		return -1;
	if (strcmp(c.pid, "none") && sscanf(c.pid, "%ld", &st->pid) != 1)
		return -1;
	return 0;
}

static long fz_dead_pid(void)
{
	long p;

	for (p = 4194303; p > 1000; p--)
		if (kill(p, 0) && errno == ESRCH)
			return p;
	return 0;
}

static uint64_t fz_seed(void)
{
	const char *s = getenv("WPSTAT_FUZZ_SEED");
	struct timespec ts;

	if (s && *s)
		return strtoull(s, NULL, 0) ?: 1;
	clock_gettime(CLOCK_REALTIME, &ts);
	return ((uint64_t)ts.tv_sec << 20) ^ ts.tv_nsec ^ getpid();
}

/* Shared with the concurrent writers, reader and workload. */
struct fz_shared {
	volatile int stop;
	long writes, bad, reader_errors, reader_reads, touches;
	int first;
	char why[512];
};

static void fz_report(struct fz_shared *sh, const char *b, size_t len,
		      int expect, int got)
{
	__atomic_add_fetch(&sh->bad, 1, __ATOMIC_SEQ_CST);
	if (!__atomic_exchange_n(&sh->first, 1, __ATOMIC_SEQ_CST))
		fz_describe(sh->why, sizeof(sh->why), b, len, expect, got);
}

struct fz_writer {
	struct fz_shared *sh;
	int fd;
	long count;
	uint64_t seed;
	struct fz_ctx ctx;
};

/* A concurrent writer: each result must be one the model allows. */
static void *fz_writer_thread(void *arg)
{
	struct fz_writer *wr = arg;
	static __thread char b[FZ_BUF + 2];
	uint64_t r = wr->seed;
	long i;

	for (i = 0; i < wr->count; i++) {
		size_t len = fz_gen(&r, b, &wr->ctx);
		struct fz_verdict v = fz_model(b, len, &wr->ctx);
		int got = fz_write(wr->fd, b, len);

		__atomic_add_fetch(&wr->sh->writes, 1, __ATOMIC_SEQ_CST);
		if (!fz_accepts(v.expect, got))
			fz_report(wr->sh, b, len, v.expect, got);
	}
	return NULL;
}

/* A process of two writer threads sharing one open control file. */
static void fz_writer_proc(struct fz_shared *sh, long count, uint64_t seed,
			   long parent)
{
	struct fz_writer wr[2];
	pthread_t th[2];
	int fd = open(WPSTAT_CONTROL_PATH, O_WRONLY | O_CLOEXEC);
	int i;

	if (fd < 0)
		_exit(2);
	for (i = 0; i < 2; i++) {
		wr[i] = (struct fz_writer){
			.sh = sh, .fd = fd, .count = count / 2 + (i ? count % 2 : 0),
			.seed = seed * 2 + i + 1,
			.ctx = { .alive = { getpid(), parent, 1 },
				 .dead = { fz_dead_pid(), 0 } },
		};
		if (pthread_create(&th[i], NULL, fz_writer_thread, &wr[i]))
			_exit(3);
	}
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	_exit(0);
}

/* Reads every module file while the writers run; counts what fails. */
static void fz_reader_proc(struct fz_shared *sh)
{
	static const char *const debugfs[] = {
		CONFIG_PATH, "/sys/kernel/debug/wpstat/probes",
		"/sys/kernel/debug/wpstat/histograms",
	};
	static char buf[65536];
	struct wpstat_snapshot s;
	struct wpstat_kvlist l;
	struct cfg c;
	size_t i;

	while (!sh->stop) {
		if (wpstat_snapshot_read(NULL, &s)) {
			sh->reader_errors++;
		} else {
			if (s.ncounters < (int)WPS_N)
				sh->reader_errors++;
			wpstat_snapshot_free(&s);
		}
		if (wpstat_kv_read(WPSTAT_SUMMARY_PATH, &l)) {
			sh->reader_errors++;
		} else {
			if (!wpstat_kv_get(&l, "tracked_inodes"))
				sh->reader_errors++;
			wpstat_kv_free(&l);
		}
		if (read_config(&c))
			sh->reader_errors++;
		for (i = 0; i < 3; i++)
			if (wps_slurp(debugfs[i], buf, sizeof(buf)) <= 0)
				sh->reader_errors++;
		sh->reader_reads++;
	}
	_exit(0);
}

/* Faults and writeback on a file while filters flip under them. */
static void fz_workload_proc(struct fz_shared *sh, int fd)
{
	while (!sh->stop) {
		if (touch_file(fd, NPAGES))
			_exit(1);
		sh->touches++;
	}
	_exit(0);
}

/* A thread that waits, so that its id is alive but not a process's. */
struct park {
	int pipe[2];
	long tid;
};

static void *park_thread(void *arg)
{
	struct park *p = arg;
	char c;

	__atomic_store_n(&p->tid, syscall(SYS_gettid), __ATOMIC_SEQ_CST);
	if (read(p->pipe[0], &c, 1) < 0)
		return NULL;
	return NULL;
}

/*
 * 10,000 control writes (100,000 with WPSTAT_STRESS): valid commands with
 * random blanks, near misses, printable and binary garbage, partial
 * commands, NUL bytes, mutations, commands padded to 64 and 65 bytes,
 * writes over 64 bytes and over 4 KiB, and Latin-1 bytes (0xa0 is a
 * space to the kernel's ctype: "\xa0disable" once disabled counting).  First 40% from one writer with a model of the config checked
 * every 16 writes, each write's result predicted exactly; then the rest
 * from 4 processes x 2 threads at once (one fd per process) while a reader
 * reads every module file and a workload faults.  Afterwards the config
 * follows valid commands again, counting works, and the ~0.3% of writes
 * that were "reset" freed every old table (vmallocinfo).
 * The harness's bound is for a hung test only: make check's suite budget
 * is tighter, and make stress's 100,000 writes took over 600 s on 5.10
 * beside two other guests.
 */
TEST_F(rel, control_fuzz)
{
	const long total = wps_stress() ? 100000 : 10000;
	const long seq = total * 4 / 10, conc = total - seq;
	uint64_t seed = fz_seed(), r = seed;
	static char b[FZ_BUF + 2];
	struct fz_state st = { .enabled = 1, .timing = wps_timing() == 1 };
	struct fz_shared *sh;
	struct fz_ctx ctx = { 0 };
	char why[256], cmd[64];
	long i, resets = 0, bad = 0;
	int fd, areas, status, k, timing;
	struct park park = { 0 };
	pthread_t parked;
	struct cfg c;
	struct wps w;

	TH_LOG("seed %#llx (WPSTAT_FUZZ_SEED to repeat), %ld writes",
	       (unsigned long long)seed, total);
	areas = wpstat_vmalloc_areas();
	ASSERT_LT(0, areas) TH_LOG("no [wpstat] area in /proc/vmallocinfo");
	ctx.alive[0] = getpid();
	ctx.alive[1] = 1;
	ctx.alive[2] = getppid();
	ctx.dead[0] = fz_dead_pid();
	/* A live thread's id names no process: ESRCH. */
	ASSERT_EQ(0, pipe(park.pipe));
	ASSERT_EQ(0, pthread_create(&parked, NULL, park_thread, &park));
	while (!__atomic_load_n(&park.tid, __ATOMIC_SEQ_CST))
		usleep(1000);
	ctx.dead[1] = park.tid;
	ASSERT_NE(0, ctx.dead[0]);
	ASSERT_EQ(0, fz_compare(&st, why, sizeof(why))) TH_LOG("%s", why);
	/* Latin-1: 0xa0 is printable and a space to the kernel's ctype. */
	EXPECT_EQ(-EINVAL, wps_control("\xa0" "disable"));
	EXPECT_EQ(-EINVAL, wps_control("enable\xa0"));
	EXPECT_EQ(-EINVAL, wps_control("filter\xa0none"));
	ASSERT_EQ(0, fz_compare(&st, why, sizeof(why))) TH_LOG("%s", why);
	ASSERT_EQ(0, touch_file(self->rel.probe_fd, NPAGES));

	/* Sequential: every result and the resulting state predicted. */
	fd = open(WPSTAT_CONTROL_PATH, O_WRONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	for (i = 0; i < seq; i++) {
		size_t len = fz_gen(&r, b, &ctx);
		struct fz_verdict v = fz_model(b, len, &ctx);
		int got = fz_write(fd, b, len);

		if (!fz_accepts(v.expect, got)) {
			fz_describe(why, sizeof(why), b, len, v.expect, got);
			if (bad++ < 5)
				TH_LOG("write %ld: %s", i, why);
		}
		if (!got && v.expect == FZ_ANY) {
			ASSERT_EQ(0, fz_resync(&st));
		} else if (!got) {
			fz_apply(&st, &v);
		}
		if (!got && v.cmd == C_RESET) {
			resets++;
			EXPECT_EQ(0, wps_summary("mkwrite_first") +
				  wps_summary("mkclean_calls"))
				TH_LOG("reset left counts");
		}
		if (i % 16 == 15 || i == seq - 1)
			ASSERT_EQ(0, fz_compare(&st, why, sizeof(why)))
				TH_LOG("after write %ld: %s", i, why);
		if (i % 500 == 499) {	/* and sometimes a fresh open */
			close(fd);
			fd = open(WPSTAT_CONTROL_PATH, O_WRONLY | O_CLOEXEC);
			ASSERT_LE(0, fd);
		}
	}
	close(fd);
	close(park.pipe[1]);
	pthread_join(parked, NULL);
	close(park.pipe[0]);
	EXPECT_EQ(0, bad);

	/* Concurrent: 4 processes x 2 threads, a reader and a workload. */
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sh);
	for (k = 0; k < 6; k++) {
		pid_t pid = fork();

		ASSERT_LE(0, pid);
		if (pid == 0) {
			if (k < 4)
				fz_writer_proc(sh, conc / 4 + (k ? 0 : conc % 4),
					       seed + k + 1, ctx.alive[0]);
			else if (k == 4)
				fz_reader_proc(sh);
			else
				fz_workload_proc(sh, self->rel.probe_fd);
		}
		self->kids[self->nkids++] = pid;
	}
	for (k = 0; k < 4; k++) {
		ASSERT_EQ(self->kids[k], waitpid(self->kids[k], &status, 0));
		self->kids[k] = 0;
		EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
			TH_LOG("writer %d: status %#x", k, status);
	}
	sh->stop = 1;
	for (k = 4; k < 6; k++) {
		ASSERT_EQ(self->kids[k], waitpid(self->kids[k], &status, 0));
		self->kids[k] = 0;
		EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
			TH_LOG("%s: status %#x", k == 4 ? "reader" : "workload",
			       status);
	}
	self->nkids = 0;
	TH_LOG("concurrent: %ld writes, %ld reader passes, %ld workload passes",
	       sh->writes, sh->reader_reads, sh->touches);
	EXPECT_EQ(conc, sh->writes);
	EXPECT_EQ(0, sh->bad) TH_LOG("%ld unexpected results, first: %s",
				     sh->bad, sh->why);
	EXPECT_EQ(0, sh->reader_errors);
	EXPECT_LT(0, sh->reader_reads);
	munmap(sh, sizeof(*sh));

	/* Whatever state the race left is well formed ... */
	ASSERT_EQ(0, read_config(&c));
	EXPECT_TRUE(!strcmp(c.dev, "none") || strchr(c.dev, ':')) TH_LOG("%s", c.dev);
	EXPECT_TRUE(!strcmp(c.pid, "none") || atol(c.pid) > 0) TH_LOG("%s", c.pid);

	/* ... and follows valid commands again, at the suite's level. */
	timing = !strcmp(wps_suite_level(), "timing");
	st = (struct fz_state){ .enabled = 0, .major = 8, .minor = 1,
				.pid = getpid(), .timing = timing };
	snprintf(cmd, sizeof(cmd), "level %s", wps_suite_level());
	ASSERT_EQ(0, wps_control(cmd));
	ASSERT_EQ(0, wps_control("disable"));
	ASSERT_EQ(0, wps_control("filter dev 8:1"));
	snprintf(cmd, sizeof(cmd), "filter pid %d", getpid());
	ASSERT_EQ(0, wps_control(cmd));
	EXPECT_EQ(0, fz_compare(&st, why, sizeof(why))) TH_LOG("%s", why);
	ASSERT_EQ(0, wps_control("filter none"));
	ASSERT_EQ(0, wps_control("enable"));
	st = (struct fz_state){ .enabled = 1, .timing = timing };
	EXPECT_EQ(0, fz_compare(&st, why, sizeof(why))) TH_LOG("%s", why);

	/* Counting works, and resets freed every old table. */
	ASSERT_EQ(0, wps_control("reset"));
	ASSERT_EQ(0, touch_file(self->rel.probe_fd, NPAGES));
	ASSERT_EQ(0, wps_read(self->rel.probe, &w));
	EXPECT_EQ(NPAGES, w.mkwrite_first);
	EXPECT_TIMED_EQ(NPAGES, w.mkclean_ptes);
	EXPECT_EQ(areas, wpstat_vmalloc_areas()) TH_LOG("%ld sequential resets",
							resets);
}

TEST_HARNESS_MAIN
