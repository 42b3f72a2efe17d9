// SPDX-License-Identifier: GPL-2.0
/*
 * wpstat - per-inode counters for shared-mapping write faults, writeback
 * write-protection, stable-page waits and dirty balancing.
 *
 * This file only brings the parts up in order and down in reverse; see
 * wpstat.h for what each part owns.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/build_bug.h>
#include <linux/module.h>

#include "wpstat.h"
#include "wpstat_version.h"

static int __init wpstat_init(void)
{
	int ret;

	BUILD_BUG_ON(WPP_NR > 32);	/* probe masks are u32 */

	ret = wpstat_handlers_init();
	if (ret)
		return ret;
	ret = wpstat_table_init();
	if (ret)
		goto err_handlers;
	ret = wpstat_stalls_init();
	if (ret)
		goto err_table;
	ret = wpstat_tctx_init();
	if (ret)
		goto err_stalls;
	ret = wpstat_proc_init();
	if (ret)
		goto err_tctx;
	ret = wpstat_attach_init();
	if (ret)
		goto err_proc;
	/*
	 * The control file last: a writer that acts as soon as it appears
	 * (an agent setting the level) must find the points attached.
	 * wpstat_set_level() refuses until then anyway.
	 */
	wpstat_debugfs_init();

	pr_info("loaded: level %s, max_inodes=%u (%zu bytes each), counting %s\n",
		wpstat_level_name(wpstat_get_level()), wpstat_max_inodes,
		wpstat_entry_bytes(),
		wpstat_floor_mode() ? "nothing (floor mode: empty handlers)" :
		wpstat_enabled ? "on" : "off");
	return 0;

err_proc:
	wpstat_proc_exit();
err_tctx:
	wpstat_tctx_exit();
err_stalls:
	wpstat_stalls_exit();
err_table:
	wpstat_table_exit();
err_handlers:
	wpstat_handlers_exit();
	return ret;
}

static void __exit wpstat_exit(void)
{
	/* Readers first (proc_remove/debugfs_remove wait for them), ... */
	wpstat_debugfs_exit();
	wpstat_proc_exit();
	/* ... then handlers: this waits for every running handler. */
	wpstat_attach_exit();
	wpstat_tctx_exit();
	wpstat_stalls_exit();
	wpstat_table_exit();
	wpstat_handlers_exit();
	pr_info("unloaded\n");
}

module_init(wpstat_init);
module_exit(wpstat_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Per-inode write-protect fault, stable page and dirty balancing counters");
MODULE_AUTHOR("wpstat developers");
MODULE_VERSION(WPSTAT_VERSION);
