// SPDX-License-Identifier: GPL-2.0
/*
 * The model of the control file for wpstat_ctlfuzz (wpstat_ctlfuzz.h):
 * each write's predicted result, the generator of writes, the config
 * the model expects.  In libwpstat_test.a; only wpstat_ctlfuzz links it.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <limits.h>
#include <signal.h>
#include <time.h>

#include "wpstat_ctlfuzz.h"

int read_config(struct cfg *c)
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

struct fz_verdict fz_model(const char *buf, size_t len,
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

bool fz_accepts(int expect, int err)
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
size_t fz_gen(uint64_t *r, char *b, const struct fz_ctx *ctx)
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
int fz_write(int fd, const char *b, size_t len)
{
	ssize_t n = write(fd, b, len);

	if (n < 0)
		return errno;
	return n == (ssize_t)len ? 0 : EIO;
}

void fz_describe(char *out, size_t outlen, const char *b, size_t len,
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

void fz_apply(struct fz_state *st, const struct fz_verdict *v)
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
int fz_compare(const struct fz_state *st, char *why, size_t len)
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
int fz_resync(struct fz_state *st)
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

long fz_dead_pid(void)
{
	long p;

	for (p = 4194303; p > 1000; p--)
		if (kill(p, 0) && errno == ESRCH)
			return p;
	return 0;
}

uint64_t fz_seed(void)
{
	const char *s = getenv("WPSTAT_FUZZ_SEED");
	struct timespec ts;

	if (s && *s)
		return strtoull(s, NULL, 0) ?: 1;
	clock_gettime(CLOCK_REALTIME, &ts);
	return ((uint64_t)ts.tv_sec << 20) ^ ts.tv_nsec ^ getpid();
}
