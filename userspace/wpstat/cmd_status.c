// SPDX-License-Identifier: GPL-2.0
#include "wpstat_cli.h"

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

/* Nothing to attach at this level (jbd2's probes at level counts). */
static bool probe_off(const struct probe_info *p)
{
	return !strcmp(p->status, "off");
}

/* 0: attached, 1: unavailable, 2: not used at this level. */
static int probe_state(const struct probe_info *p)
{
	return probe_attached(p) ? 0 : probe_off(p) ? 2 : 1;
}

/* Whether /proc/wpstat/counters ("name level available help") says timing. */
static bool counter_needs_timing(const struct wpstat_kvlist *counters,
				 const char *name)
{
	const char *v = wpstat_kv_get(counters, name);

	return v && !strncmp(v, "timing ", 7);
}

static void status_json(bool loaded, const char *version, int refcnt,
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
	fputs(", \"module_version\": ", stdout);
	json_string_or_null(stdout, version);
	fputs(", \"wpstat_version\": ", stdout);
	json_string(stdout, WPSTAT_VERSION);
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
	SUMMARY_NUM("module_bytes");
	SUMMARY_NUM("module_cpu_bytes");
	SUMMARY_NUM("possible_cpus");
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
	for (c = 0; c < 3; c++) {
		printf("], \"probes_%s\": [",
		       c == 2 ? "off" : c ? "unavailable" : "attached");
		for (i = 0, first = 1; i < probes->n; i++) {
			if (probe_state(&probes->p[i]) != c)
				continue;
			fputs(first ? "" : ", ", stdout);
			json_string(stdout, probes->p[i].name);
			first = 0;
		}
	}
	puts("]}");
}

static void status_text(bool loaded, const char *version, int refcnt,
			const struct module_param *params, size_t nparams,
			const struct wpstat_kvlist *summary,
			const struct wpstat_kvlist *counters,
			const struct wpstat_kvlist *config,
			const struct probe_list *probes, int debugfs_err)
{
	const char *hint, *v, *w, *alive;
	size_t i, nattached = 0, noff = 0;
	bool first;
	int c;

	printf("module:      %s", loaded ? "loaded" : "not loaded");
	if (loaded)
		printf(" (refcount %d)", refcnt);
	printf("\nkernel:      %s\n", kernel_release());
	if (!loaded)
		return;
	printf("version:     module %s, wpstat %s%s\n",
	       version ? version : "(none)", WPSTAT_VERSION,
	       version && !strcmp(version, WPSTAT_VERSION) ? "" :
	       " (differ: reload the module)");
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
		for (i = 0; i < probes->n; i++) {
			nattached += probe_attached(&probes->p[i]);
			noff += probe_off(&probes->p[i]);
		}
		printf("probes:      %zu of %zu attached:", nattached,
		       probes->n - noff);
		for (i = 0; i < probes->n; i++)
			if (probe_attached(&probes->p[i]))
				printf(" %s", probes->p[i].name);
		fputs("\nunavailable:", stdout);
		if (nattached + noff == probes->n)
			fputs(" none", stdout);
		for (i = 0; i < probes->n; i++)
			if (probe_state(&probes->p[i]) == 1)
				printf(" %s (%s, %s)", probes->p[i].name,
				       probes->p[i].target, probes->p[i].status);
		if (noff)
			fputs("\nother level:", stdout);
		for (i = 0; i < probes->n; i++)
			if (probe_off(&probes->p[i]))
				printf(" %s", probes->p[i].name);
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
	/* What the module holds, and how much of it each CPU adds. */
	v = wpstat_kv_get(summary, "module_bytes");
	w = wpstat_kv_get(summary, "module_cpu_bytes");
	alive = wpstat_kv_get(summary, "possible_cpus");
	if (v && w && alive)
		printf("memory:      %.1f MiB, of which %.1f KiB for each of %s possible CPUs\n",
		       strtoull(v, NULL, 10) / 1048576.0,
		       strtoull(w, NULL, 10) / 1024.0, alive);
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
	char *refs, *version = NULL;

	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'h':
			return CMD_HELP;
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
	if (loaded)
		version = module_version();
	if (json)
		status_json(loaded, version, refcnt, params, nparams, &summary,
			    &counters, &config, &probes, debugfs_err);
	else
		status_text(loaded, version, refcnt, params, nparams, &summary,
			    &counters, &config, &probes, debugfs_err);
	if (loaded)
		module_version_note();
	free(version);
	for (i = 0; i < nparams; i++)
		free(params[i].value);
	wpstat_kv_free(&summary);
	wpstat_kv_free(&counters);
	wpstat_kv_free(&config);
	probe_list_free(&probes);
	return 0;
}

const struct wpstat_cmd wpstat_cmd_status = {
	"status", cmd_status, "status [--json]",
	"module, parameters, probes, filters, table use",
};
