// SPDX-License-Identifier: GPL-2.0
#include "wpstat_cli.h"

#include <libkmod.h>

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
			return CMD_HELP;
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
		if (state != KMOD_MODULE_GOING)
			module_version_note();
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
		/* DKMS builds it for each kernel whose headers are installed. */
		ret = runtime_error("no wpstat module for kernel %s: apt install wpstat-dkms linux-headers-%s (DKMS builds it for every kernel with headers), or --module PATH",
				    kernel_release(), kernel_release());
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
		module_version_note();
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
		if (c == 'h')
			return CMD_HELP;
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

const struct wpstat_cmd wpstat_cmd_load = {
	"load", cmd_load, "load [--module PATH] [PARAM=VALUE...]",
	"insert the module (params: level, max_inodes,\n"
	"max_stalls, enable, skip_probes); already loaded is\n"
	"not an error",
};

const struct wpstat_cmd wpstat_cmd_unload = {
	"unload", cmd_unload, "unload", "remove the module",
};
