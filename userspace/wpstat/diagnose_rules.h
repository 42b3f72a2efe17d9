/* SPDX-License-Identifier: GPL-2.0 */
#ifndef WPSTAT_DIAGNOSE_RULES_H
#define WPSTAT_DIAGNOSE_RULES_H

#include "diagnose.h"

/*
 * What the rules of wpstat diagnose (diagnose.c) make findings of
 * (diagnose_evidence.c): the system's settings, a row's numbers as
 * evidence, remedies, where a wait was, who synced, what the triggers
 * say.  Private to the two files.
 */

struct dx_mount {
	char point[PATH_MAX];
	char fstype[32];
	char source[256];	/* the device, or ZFS's dataset (pool/name) */
	char options[512];	/* per-mount and superblock options, joined */
};

/* Where a row's waits of one cause were: its process's faults, or write(2). */
enum dx_where { DX_IN_FAULTS, DX_IN_WRITES, DX_IN_BOTH };

enum dx_severity dx_severity_of(double share);
bool dx_read_setting(const char *path, char *buf, size_t len);
bool dx_queue_attr(unsigned int major, unsigned int minor, const char *attr,
		   char *buf, size_t len, char *path, size_t plen);
bool dx_mount_of(unsigned int major, unsigned int minor, struct dx_mount *m);
bool dx_has_option(const char *options, const char *name);

void dx_ev_num(struct dx_finding *f, const char *name, uint64_t v,
	       const char *unit, const char *source);
void __attribute__((format(printf, 4, 5)))
dx_ev_text(struct dx_finding *f, const char *name, const char *source,
	   const char *fmt, ...);
void __attribute__((format(printf, 4, 5)))
dx_remedy(struct dx_finding *f, const char *effect, const char *cost,
	  const char *fmt, ...);
struct dx_finding *dx_finding_new(struct dx_report *r, const char *rule,
				  const char *title, uint64_t ns);
void dx_finding_of_item(struct dx_finding *f, const struct stall_item *it);

uint64_t dx_item_val(const struct stall_list *l, const struct stall_item *it,
		     enum stall_field f);
uint64_t dx_file_val(const struct file_list *fl, const struct stall_item *it,
		     const char *name);
enum dx_where dx_where_of(const struct stall_list *l,
			  const struct stall_item *it, enum stall_cause k);
const char *dx_where_subject(enum dx_where w);
void dx_ev_cause(struct dx_finding *f, const struct stall_list *l,
		 const struct stall_item *it, enum stall_field events,
		 enum stall_field ns);
uint32_t dx_synced_by(struct dx_finding *f, const struct dx_input *in,
		      const struct stall_item *it);
void dx_triggers(struct dx_finding *f, const struct dx_input *in,
		 const struct stall_item *it, enum dx_where where);

#endif
