/* SPDX-License-Identifier: GPL-2.0 */
#ifndef WPSTAT_DIAGNOSE_H
#define WPSTAT_DIAGNOSE_H

#include "wpstat_cli.h"
#include "stalls.h"

/*
 * wpstat diagnose: the stall time of each process x file, split by cause,
 * turned into findings: what was measured (evidence), the kernel mechanism
 * in one sentence (with the function to read), and the remedies ranked by
 * what they change.  Rules in diagnose.c, how they make a finding in
 * diagnose_evidence.c (diagnose_rules.h), the command in cmd_diagnose.c.
 */
#define DX_MAX_FINDINGS		16
#define DX_MAX_EVIDENCE		8
#define DX_MAX_REMEDIES		6
#define DX_TEXT			320

/* Below this share of the stall time a cause is not a finding. */
#define DX_MIN_SHARE		0.05
/* Less stall time than this in all is nothing notable. */
#define DX_MIN_STALL_NS		1000000ULL

enum dx_severity { DX_INFO, DX_LOW, DX_MEDIUM, DX_HIGH };

struct dx_evidence {
	char name[40];
	bool numeric;
	uint64_t value;		/* numeric */
	const char *unit;	/* "ns", "events", or NULL */
	char text[DX_TEXT];	/* !numeric */
	const char *source;	/* where it comes from */
};

struct dx_remedy {
	char change[DX_TEXT];	/* what to change: a command or a code change */
	const char *effect;	/* what it takes away */
	const char *cost;	/* what it costs */
};

struct dx_finding {
	const char *rule;	/* stable, wb, throttle, journal, ... */
	char title[128];	/* copied: findings are sorted by value */
	enum dx_severity severity;
	uint64_t ns;		/* the stall time it explains */
	double share;		/* of all the stall time; < 0: not timed */
	uint32_t pid;		/* 0: not one process's */
	char comm[WPSTAT_COMM_MAX];
	char file[PATH_MAX];	/* path, or MAJ:MIN:INO; "" if no one file */
	const char *mechanism;
	int nev, nrem;
	struct dx_evidence ev[DX_MAX_EVIDENCE];
	struct dx_remedy rem[DX_MAX_REMEDIES];
};

/* What the rules read besides the rows: the system's settings. */
struct dx_input {
	const struct stall_list *stalls;	/* rows (or their deltas) */
	const struct stall_list *everyone;	/* the same, any process */
	const char *cgroup_mount;		/* cgroup2's, or NULL */
	const struct file_list *files;		/* inodes rows, the same way */
	const struct wpstat_kvlist *summary;
	const char *level;			/* "counts", "timing", or NULL */
	uint64_t window_ns;			/* 0: since the last reset */
};

struct dx_report {
	uint64_t stall_ns;	/* of every row considered */
	bool timed;		/* some row had a time */
	int n;
	struct dx_finding f[DX_MAX_FINDINGS];
};

void dx_diagnose(const struct dx_input *in, struct dx_report *r);
const char *dx_severity_name(enum dx_severity s);

#endif
