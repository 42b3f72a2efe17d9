/* SPDX-License-Identifier: GPL-2.0 */
/*
 * wpstat_ctlfuzz's model of the control file (wpstat_ctlfuzz_model.c):
 * the command grammar as an independent oracle (on purpose not shared
 * with the module's parser), the generator of writes, and the config the
 * model expects.  Only wpstat_ctlfuzz uses it; it is a file of its own so
 * that the test reads as the scenario it runs.
 */
#ifndef WPSTAT_CTLFUZZ_H
#define WPSTAT_CTLFUZZ_H

#include "wpstat_test.h"

/* The current debugfs config: 0 or -errno. */
struct cfg {
	int enabled;
	char dev[32];
	char pid[32];
	char level[16];
};

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

/* What the model says the config now is. */
struct fz_state {
	int enabled;
	unsigned int major, minor;	/* 0:0 none */
	long pid;			/* 0 none */
	int timing;			/* level */
};

int read_config(struct cfg *c);
struct fz_verdict fz_model(const char *buf, size_t len,
			   const struct fz_ctx *ctx);
bool fz_accepts(int expect, int err);
size_t fz_gen(uint64_t *r, char *b, const struct fz_ctx *ctx);
int fz_write(int fd, const char *b, size_t len);
void fz_describe(char *out, size_t outlen, const char *b, size_t len,
		 int expect, int got);
void fz_apply(struct fz_state *st, const struct fz_verdict *v);
int fz_compare(const struct fz_state *st, char *why, size_t len);
int fz_resync(struct fz_state *st);
long fz_dead_pid(void);
uint64_t fz_seed(void);

#endif
