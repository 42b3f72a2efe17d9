// SPDX-License-Identifier: GPL-2.0
/*
 * wpstat_probe_core.c - what every handler file reads and nothing of
 * theirs writes back: the enable switch, the filters and the level the
 * handlers count at, the callers' address ranges, and the stack
 * classification of a writeback wait (stable page, a write's, or
 * another's).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "wpstat_probe.h"

#include <linux/backing-dev.h>
#include <linux/exportfs.h>
#include <linux/file.h>
#include <linux/uaccess.h>
#include <asm/syscall.h>

bool wpstat_enabled = true;
module_param_named(enable, wpstat_enabled, bool, 0444);
MODULE_PARM_DESC(enable, "Count from load (default 1); toggled at run time through debugfs wpstat/control");

u32 wpstat_filter_dev;
struct pid *wpstat_filter_pid;
int wpstat_counting_level;
/*
 * A timed fault's return probe may be detached while the task is inside
 * (a switch to level counts): its WPT_FAULT is then stale, and is known
 * so by the epoch it was set in.
 */
unsigned int wpstat_level_epoch;
bool wpstat_wait_bit_attached;
unsigned long wpstat_entry_ip[WPP_NR];
struct wpstat_range wpstat_fault_dirty_range;
/* Written by do_page_mkwrite()'s callback, read by the points after it. */
DEFINE_PER_CPU(struct wpstat_fault_hint, wpstat_fault_hint);
struct wpstat_range wpstat_mkwrite_range;

/*
 * folio_wait_writeback() and folio_wait_stable() (5.10: the page ones),
 * and where the kernel has it, folio_wait_stable()'s page wrapper.
 */
static struct wpstat_range fww_range, fws_range, fws_wrapper_range;

/*
 * Process context: filter on @pid (a reference the caller passes on), or
 * on nothing.  The old reference is dropped once no handler can still be
 * comparing against it (they run with preemption disabled).
 */
void wpstat_set_filter_pid(struct pid *pid)
{
	struct pid *old = xchg(&wpstat_filter_pid, pid);

	if (old) {
		synchronize_rcu();
		put_pid(old);
	}
}

/* ---- stable-page waits: who called folio_wait_writeback()? ------------- */

/*
 * folio_wait_stable() ends in a call to folio_wait_writeback() (5.10:
 * wait_for_stable_page() and wait_on_page_writeback()).  Where the
 * compiler makes that a tail call, a stable-page wait shows on the stack
 * as folio_wait_writeback() returning straight into folio_wait_stable()'s
 * caller: the instruction before that return address is a direct call
 * whose target is folio_wait_stable() (or, with call depth tracking, its
 * thunk in the padding before it: WPSTAT_CALL_PADDING).  Read from the
 * caller's text, so no probe on folio_wait_stable() is needed to
 * recognise its callers.
 * Without a tail call the caller is folio_wait_stable() itself, which is
 * recognised too, as is its own frame where folio_wait_writeback() is
 * inlined into it (wpstat_wait_classify()).
 */
#define WPSTAT_CALL_REL32	0xe8	/* x86 call rel32: 5 bytes */

static bool calls_into(unsigned long target, const struct wpstat_range *r)
{
	return r->size && target >= r->start - WPSTAT_CALL_PADDING &&
	       target < r->start + r->size;
}

/* Whether the instruction before @ret calls folio_wait_stable(). */
static bool calls_stable(unsigned long ret)
{
	unsigned long target;
	u8 op;
	s32 rel;

	if (get_kernel_nofault(op, (u8 *)(ret - 5)) ||
	    op != WPSTAT_CALL_REL32 ||
	    get_kernel_nofault(rel, (s32 *)(ret - 4)))
		return false;
	target = ret + (long)rel;
	return calls_into(target, &fws_range) ||
	       calls_into(target, &fws_wrapper_range);
}

#define WPSTAT_STACK_DEPTH	16

/*
 * The argument naming the file the current system call writes to, or -1:
 * write(2), pwrite(2), writev(2), pwritev(2), pwritev2(2) (fd, args[0]);
 * with @copies, the calls that copy into a file from another descriptor
 * too: sendfile(2) (out_fd, args[0]), splice(2) and copy_file_range(2)
 * (fd_out, args[2]).  x86-64 numbers.
 */
static int write_fd_arg(bool copies)
{
	switch (wpstat_syscall_nr()) {
	case __NR_write:
	case __NR_pwrite64:
	case __NR_writev:
	case __NR_pwritev:
	case __NR_pwritev2:
		return 0;
	case __NR_sendfile:
		return copies ? 0 : -1;
	case __NR_splice:
	case __NR_copy_file_range:
		return copies ? 2 : -1;
	}
	return -1;
}

/* A write(2)-family call: its writeback waits are the writer's stalls. */
bool wpstat_write_syscall(void)
{
	return write_fd_arg(false) >= 0;
}

/*
 * In a write system call (write_fd_arg(@copies)), the file it writes to,
 * if its mapping can be written back: *key and *counted (the filters let
 * it count).  A stacking filesystem's file (overlayfs), whose writes dirty
 * another file's pages, names that file (d_real(): the upper file the
 * write copied up; it neither sleeps nor looks lower layers up for it).
 *
 * The file is held by a reference while it is read (fget_raw()): under
 * RCU alone, another thread's close() or dup2() on the descriptor could
 * drop the last reference meanwhile and, on a lazily unmounted filesystem,
 * the superblock's last active reference with it, and
 * generic_shutdown_super() frees its s_bdi (bdi_put(), a kfree() that RCU
 * does not delay), which the key (wpstat_sb_id()) and
 * mapping_can_writeback() read.  fput() is safe where this runs, task
 * context with preemption disabled (a kretprobe's entry handler on an
 * ftrace site, a kretprobe's return handler): a last reference is put
 * through task_work at the return to user space.  Not in NMI context (a
 * kprobe hit through int3), where fput() would queue delayed work: there
 * the file is not named.  Another thread that closes and reopens the
 * descriptor during the write can make this name the new file: a race
 * the writer made.
 */
bool wpstat_write_fd_key(struct wpstat_key *key, bool *counted, bool copies)
{
	int arg = write_fd_arg(copies);
	struct address_space *mapping;
	unsigned long args[6];
	struct inode *inode;
	struct file *file;
	bool named = false;

	if (arg < 0 || in_nmi() || !current->files)
		return false;
	syscall_get_arguments(current, task_pt_regs(current), args);
	file = fget_raw((unsigned int)args[arg]);
	if (!file)
		return false;
	mapping = READ_ONCE(file->f_mapping);
	if (mapping && !mapping_can_writeback(mapping)) {
		inode = d_inode(wpstat_d_real(file->f_path.dentry));
		mapping = inode ? inode->i_mapping : NULL;
	}
	if (mapping && mapping->host && mapping_can_writeback(mapping)) {
		*counted = wpstat_want_task() &&
			   wpstat_key_of_mapping(mapping, key);
		named = true;
	}
	fput(file);
	return named;
}

/*
 * Called from the folio_wait_writeback tracepoint: a task about to sleep
 * for the writeback of a folio of @mapping.  A stable-page wait is
 * folio_wait_writeback() returning into a folio_wait_stable() call site
 * (calls_stable()), or, where the compiler inlined the former into the
 * latter (a KASAN build of 6.12), folio_wait_stable()'s own frame; any
 * other wait is the writer's if it is below do_page_mkwrite() or in a
 * write system call.
 *
 * Where none of that can be (the mapping has no stable pages, nobody
 * maps the file writable, so no ->page_mkwrite() of it runs, and the task
 * is in no write system call), the wait is another's without a look at
 * the stack: most writeback waits of a machine (fsync, sync_file_range(),
 * truncation of files nobody maps) end there, and the walk cost each
 * about 700 instructions (make bench's W6).  A write fault on one file
 * waiting for the writeback of another that nobody maps writable is then
 * left out of the writer's waits.
 */
noinline enum wpstat_wait_kind wpstat_wait_classify(struct address_space *mapping)
{
	bool stable_mapping = wpstat_mapping_stable_writes(mapping);
	unsigned long entries[WPSTAT_STACK_DEPTH];
	unsigned int n, i;
	bool fww = false;

	if (!stable_mapping && !mapping_writably_mapped(mapping) &&
	    !wpstat_write_syscall())
		return WPW_OTHER;
	n = stack_trace_save(entries, ARRAY_SIZE(entries), 0);
	for (i = 0; i < n; i++) {
		if (!fww && stable_mapping &&
		    (wpstat_in_range(entries[i], &fws_range) ||
		     wpstat_in_range(entries[i], &fws_wrapper_range)))
			return WPW_STABLE;
		if (!fww && i + 1 < n && wpstat_in_range(entries[i], &fww_range)) {
			fww = true;
			if (stable_mapping &&
			    (wpstat_in_range(entries[i + 1], &fws_range) ||
			     calls_stable(entries[i + 1])))
				return WPW_STABLE;
		} else if (fww && wpstat_in_range(entries[i], &wpstat_mkwrite_range)) {
			return WPW_WRITE;
		}
	}
	return wpstat_write_syscall() ? WPW_WRITE : WPW_OTHER;
}

/*
 * A btrfs file's subvolume: its root's id, read from the file handle
 * btrfs gives NFS, whose layout is a stable interface on every kernel
 * wpstat supports: FILEID_BTRFS_WITHOUT_PARENT is the u64 object id,
 * the u64 root id and the u32 generation (include/linux/exportfs.h,
 * fs/btrfs/export.h), five words.  btrfs_encode_fh() without a parent
 * reads the inode and its root and nothing else: no lock, no sleep.
 *
 * It dereferences the root, which an inode that never became a file
 * lacks (one that lost an iget race, one whose creation failed), and
 * which wpstat_evict sees.  btrfs sets the root before the generation
 * (btrfs_init_locked_inode(), btrfs_create_new_inode()), and
 * inode_init_always() zeroes the generation: an inode with one has a
 * root, held until ->destroy_inode, after the evict probe.  An inode
 * without one gets subvolume 0 at every event, its key the same at
 * write and at eviction.  Out of line: the handle is an array on the
 * stack, which would give every handler a stack-protector canary.
 */
#define WPSTAT_BTRFS_FH_WORDS	5

u64 wpstat_btrfs_subvol(const struct inode *inode)
{
	const struct export_operations *ops = inode->i_sb->s_export_op;
	u32 fh[WPSTAT_BTRFS_FH_WORDS + 1];
	int words = WPSTAT_BTRFS_FH_WORDS;
	u64 root;

	if (!inode->i_generation || !ops || !ops->encode_fh ||
	    ops->encode_fh((struct inode *)inode, fh, &words, NULL) !=
	    FILEID_BTRFS_WITHOUT_PARENT)
		return 0;
	memcpy(&root, &fh[2], sizeof(root));
	return root;
}

/*
 * The function around @addr, from kallsyms' "name+0xoff/0xsize": its
 * start and size.  -ENOENT if @addr is in no known function.
 */
int wpstat_symbol_range(unsigned long addr, struct wpstat_range *r)
{
	char buf[KSYM_SYMBOL_LEN];
	unsigned long off, size;
	char *plus;

	sprint_symbol(buf, addr);
	plus = strrchr(buf, '+');
	if (!plus || sscanf(plus, "+%lx/%lx", &off, &size) != 2 || !size)
		return -ENOENT;
	r->start = addr - off;
	r->size = size;
	return 0;
}

/* The ranges of folio_wait_writeback() and folio_wait_stable(). */
int wpstat_probe_core_init(void)
{
	int ret;

	ret = wpstat_symbol_range((unsigned long)WPSTAT_FN_WAIT_WRITEBACK,
				  &fww_range);
	if (!ret)
		ret = wpstat_symbol_range((unsigned long)WPSTAT_TARGET_STABLE,
					  &fws_range);
	if (!ret && WPSTAT_STABLE_WRAPPER_ADDR)
		ret = wpstat_symbol_range(WPSTAT_STABLE_WRAPPER_ADDR,
					  &fws_wrapper_range);
	if (ret)
		pr_err("cannot find %s/%s in kallsyms\n",
		       __stringify(WPSTAT_FN_WAIT_WRITEBACK),
		       __stringify(WPSTAT_TARGET_STABLE));
	return ret;
}
