#!/usr/bin/env python3
"""Render docs/results/predictions.md from the TAP results of a `make check` run.

    scripts/check/predictions-report.py [--pages DIR|-] [RESULTS_DIR] \
        > docs/results/predictions.md

`make predictions` runs it on results/check (RESULTS=... another run).

Standard output is the index: how the tests ran, the filesystems' matrix,
every prediction and its result per kernel; each prediction, with its
tests and their measurements, is a page of its own, DIR/<N>.md (no page
of docs/ is over 500 lines; DIR defaults to docs/results/predictions/,
and a page of an earlier run not rendered now is removed).  --pages -:
no pages, the whole report on standard output as one page.

RESULTS_DIR (default results/check) holds one directory per kernel with the
suites' TAP files.  Every prediction is listed with the kernel source that
predicts it and, per kernel, the result of each test that checks it, with
the measurements the tests logged.
"""
import io
import os
import re
import sys
import datetime

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
import docpages  # noqa: E402

PREDICTIONS = [
    ("1", "ext4: pass 1 takes one first-write mkwrite and one ratelimited "
          "call per fault (N on order-0 folios; one per folio where a fault "
          "maps a whole large folio, 7.2: the test counts the stores that "
          "found no PTE and the folios); msync(MS_SYNC) cleans each folio "
          "once and write-protects N PTEs; pass 2 takes N write-protect "
          "mkwrites; pass 3 without writeback takes nothing.",
     "do_shared_fault -> do_page_mkwrite (vmf->pte NULL) -> finish_fault -> "
     "fault_dirty_shared_page; folio_clear_dirty_for_io -> folio_mkclean; "
     "do_wp_page -> wp_page_shared -> do_page_mkwrite (vmf->pte set)",
     [r"pred\.ext4\.store_msync_store_store", r"ext4 mmap: first pass"]),
    ("2", "The same on btrfs and xfs, folio by folio: xfs cleans and "
          "dirties large folios (counted in the test), btrfs calls "
          "folio_mkclean twice per folio (6.1, 6.12) or 3n - 1 times for a "
          "range of n folios (7.2), but mkclean_ptes is N on both.",
     "mapping_set_large_folios (xfs); extent_write_cache_pages + "
     "extent_writepage_io -> btrfs_folio_clear_dirty (btrfs)",
     [r"pred\.(xfs|btrfs)\.store_msync_store_store", r"^(xfs|btrfs):"]),
    ("3", "mlock, MAP_POPULATE and RocketMQ-style warm-up do not prevent "
          "write-protect faults; populated shared mappings start read-only.",
     "populate_vma_page_range: FOLL_WRITE only for private writable VMAs; "
     "folio_mkclean ignores VM_LOCKED",
     [r"populate_starts_read_only", r"mlock_does_not_prevent", r"MAP_POPULATE",
      r"mlock does not", r"warm-up", r"read-then-write"]),
    ("4", "MAP_PRIVATE: no mkwrite, no mkclean, nothing dirtied in the file.",
     "vma_wants_writenotify requires VM_SHARED; COW pages are anonymous",
     [r"private_mapping_never_notifies", r"MAP_PRIVATE"]),
    ("5", "tmpfs: no mkwrite and no mkclean, even after msync.",
     "shmem has no ->page_mkwrite and no writeback (noop_dirty_folio)",
     [r"pred\.tmpfs\.store_msync_store_store", r"^tmpfs"]),
    ("6", "write(2): no mkwrite; one balance_dirty_pages_ratelimited call per "
          "write; stable-page checks per write; fsync still write-protects "
          "an existing mapping.",
     "generic_perform_write / iomap_write_iter / btrfs_buffered_write; "
     "write_begin with FGP_STABLE (ext4 on 6.1 twice; btrfs on 6.1 never)",
     [r"write_syscall_path", r"write\(2\)"]),
    ("7", "msync(MS_ASYNC) starts no writeback: no mkclean, no later fault.",
     "mm/msync.c: only MS_SYNC calls vfs_fsync_range",
     [r"msync_async", r"MS_ASYNC", r"without writeback"]),
    ("8", "A store to a page under writeback: no wait without stable writes; "
          "a wait of about the device delay (200 ms) with them; always on "
          "btrfs.",
     "block_page_mkwrite / iomap_page_mkwrite -> folio_wait_stable "
     "(mapping_stable_writes, set at mount); btrfs_page_mkwrite -> "
     "folio_wait_writeback",
     [r"stable\."]),
    ("9", "Dirty throttling on a slow device pauses the writer, attributed to "
          "its file and not to an idle neighbour.",
     "balance_dirty_pages -> io_schedule_timeout(pause)",
     [r"throttle\."]),
    ("10", "Two processes (or threads) writing at once: exact per-file counts.",
     "per-inode keys (dev, ino, generation)",
     [r"two_processes", r"two processes", r"threads"]),
    ("11", "A store while another process fsyncs the file on a stable-writes "
           "device: the storing process's row has the stable-page wait "
           "(about the 200 ms device delay); the fsyncing process waits in "
           "no write: at level timing its row holds only the NPAGES (16) "
           "PTEs its fsync write-protected (wp_caused), at counts it has "
           "none; the NPAGES write-protects are attributed to fsync.",
     "ext4_sync_file -> filemap_fdatawrite -> folio_clear_dirty_for_io -> "
     "folio_mkclean in the fsync(2) caller; block_page_mkwrite -> "
     "folio_wait_stable; __filemap_fdatawait_range is not a write",
     [r"fsync_other\."]),
    ("12", "Each trigger cleans exactly the NPAGES (16) stored pages: "
           "msync, sync_file_range, sync and syncfs (by the flusher, "
           "WB_REASON_SYNC), the periodic flusher (WB_REASON_PERIODIC, "
           "dirty_expire_centisecs=100); a throttled writer's pages by the "
           "background flusher.",
     "msync -> vfs_fsync_range; ksys_sync -> sync_inodes_sb -> wb_writeback "
     "(reason SYNC); wb_check_old_data_flush (PERIODIC); "
     "balance_dirty_pages -> wb_start_background_writeback (BACKGROUND)",
     [r"trigger\.", r"throttle\."]),
    ("13", "4 processes x 2 files: each process takes NPAGES (16) first-write "
           "faults per file on its own PTEs, and the process rows add up "
           "exactly to the inode's counters.",
     "do_shared_fault: PTEs are per mm; rows keyed by (tgid, dev, ino, gen)",
     [r"rows_add_up"]),
    ("14", "With max_stalls=4, 12 files touched once: 4 rows, 8 overflow "
           "events, no row made.",
     "preallocated table, no allocation in probe context",
     [r"overflow_is_counted"]),
    ("15", "LMDB (liblmdb 0.9.24, 20 commits of 200 puts): with MDB_WRITEMAP "
           "each transaction's faults = the pages its commit's msync cleans "
           "= the folios it dirtied, first-write faults = last_pgno - 1, and "
           "rewrites of the same keys take only write-protect faults; with "
           "MDB_NOSYNC nothing is cleaned until mdb_env_sync, which cleans "
           "the mapping's dirty pages (smaps); without MDB_WRITEMAP no fault "
           "and mkclean = dirtied. Details: docs/clients/lmdb.md.",
     "mdb_txn_commit -> mdb_env_sync (msync MS_SYNC / fdatasync) -> "
     "mdb_env_write_meta; mdb_page_alloc (free list two transactions back)",
     [r"^lmdb\."]),
    ("16", "ext4 data=journal, ext4 nodelalloc, f2fs, overlayfs: N first-write "
           "faults, msync cleans N for msync, N write-protect faults; "
           "data=journal re-dirties what msync cleans (6.1) or cleans each page "
           "twice, once from the jbd2 commit (6.12); f2fs makes no "
           "folio_wait_stable call without writeback in flight; overlayfs is "
           "counted against the upper inode, found from the merged path. "
           "Details: docs/filesystems.md.",
     "ext4_page_mkwrite (journalled / non-delalloc branches); "
     "__jbd2_journal_refile_buffer; ext4_journalled_submit_inode_data_buffers; "
     "f2fs_wait_on_page_writeback; ovl_mmap",
     [r"^fs\."]),
    ("17", "FUSE: the same faults and cleans per page as ext4, and a store "
           "waiting for the server's WRITE is invisible to the wait counters "
           "(fuse_wait_on_page_writeback): only mkwrite_ns holds it. Details: "
           "docs/fs/fuse.md.",
     "fuse_page_mkwrite -> fuse_wait_on_page_writeback; fuse_writepages_send "
     "ends PG_writeback at once; fuse_flush -> write_inode_now",
     [r"^fuse\."]),
    ("18", "NFSv4 over loopback: the same faults per page; cleans per folio "
           "(large folios on 6.12 with readahead); a store to a page under "
           "WRITE waits in folio_wait_writeback (wb_waits), COMMIT waits are "
           "not timed; close of a writable descriptor writes back, a lookup "
           "by path does not. Details: docs/fs/nfs.md.",
     "nfs_vm_page_mkwrite -> folio_wait_writeback; nfs_file_flush -> "
     "nfs_wb_all; nfs_getattr flushes for mtime/ctime; nfs_commit_inode",
     [r"^nfs\."]),
    ("19", "Read faults on a shared mapping of a fully cached file: one per "
           "fault_around_bytes (debugfs; default 65536 = 16 pages): a read "
           "pass over 256 pages, 2 MiB-aligned, takes 16 minor faults, one "
           "page off that alignment 17 (the window is aligned to "
           "fault_around_bytes in the virtual address, clamped to the VMA); "
           "with fault_around_bytes = 4096, 256. No mkwrite, nothing "
           "dirtied; tmpfs the same (shmem maps with filemap_map_pages).",
     "do_read_fault -> should_fault_around -> do_fault_around -> "
     "filemap_map_pages (next_uptodate_folio skips PG_readahead); "
     "else __do_fault -> filemap_fault -> finish_fault; mm_account_fault",
     [r"read_fault_around"]),
    ("20", "Warm-up before the first writeback, side by side: mlock alone "
           "installs read-only PTEs (no mkwrite, nothing dirtied), so the "
           "measured pass takes N (64) write-protect faults; a store per "
           "page (RocketMQ warmMappedFile) takes N first-write faults in "
           "the warm-up and 0 in the measured pass. After msync(MS_SYNC) "
           "both take N write-protect faults. tmpfs: neither measured pass "
           "nor the pass after msync faults (no write-notify: mlock's PTEs "
           "are writable).",
     "mlock -> populate_vma_page_range (FOLL_WRITE only for private "
     "writable VMAs); do_shared_fault -> do_page_mkwrite; folio_mkclean; "
     "do_wp_page -> wp_page_shared; vma_wants_writenotify",
     [r"warmup_mlock_only_vs_store_per_page"]),
    ("21", "A writer throttled in balance_dirty_pages writes back nothing "
           "itself (the 5.4-era claim that it does predates IO-less "
           "throttling, 3.2): while it is paused on a ~2 MB/s device, "
           "block:block_bio_queue shows 0 write bios with its pid and the "
           "flusher's kworker queueing at least half of the 12 MiB; every "
           "mkclean of the file is the flusher's (background or periodic), "
           "none by msync, fsync, sync_file_range, sync, reclaim or other.",
     "balance_dirty_pages -> wb_start_background_writeback (wakes "
     "wb_workfn) + io_schedule_timeout; wb_workfn -> wb_writeback -> "
     "ext4_writepages -> submit_bio_noacct_nocheck -> trace_block_bio_queue",
     [r"throttle\."]),
    ("22", "File-to-file copies dirty the destination through the write(2) "
           "path: splice from a pipe, sendfile and (ext4, tmpfs) "
           "copy_file_range each give what one pwrite of the N pages gives "
           "on a cached destination (dirtied N, 0 on tmpfs; "
           "bdp_calls N, per batch of 8+ pages on btrfs; stable_calls as "
           "write(2), on btrfs between that and twice it, since a batch "
           "that meets an unfinished ordered extent is prepared again; "
           "no mkwrite); to an uncached file xfs 6.12 dirties "
           "large folios (dirtied = bdp_calls = folios). A reflink "
           "(FICLONE, and copy_file_range on xfs and btrfs) dirties "
           "nothing; FICLONE on ext4 and tmpfs fails with EOPNOTSUPP.",
     "vfs_copy_file_range (remap_file_range first on the same sb) / "
     "generic_copy_file_range (6.1) -> do_splice_direct; do_sendfile -> "
     "do_splice_direct -> splice_direct_to_actor; do_splice_from -> "
     "iter_file_splice_write -> vfs_iter_write -> generic_perform_write / "
     "iomap_write_iter / btrfs_buffered_write (FGP_STABLE -> "
     "folio_wait_stable, balance_dirty_pages_ratelimited; btrfs: "
     "lock_and_cleanup_extent -> -EAGAIN -> goto again); "
     "ioctl_file_clone -> vfs_clone_file_range -> remap_file_range",
     [r"copies_dirty_like_write", r"ficlone_dirties_nothing"]),
    ("23", "A cold shared mapping read one load per page (ext4, RAM disk, "
           "256 pages): first page first, one page-cache miss (readahead "
           "stays ahead); last page first, a miss every ra_pages / 2 + 1 "
           "pages, 16 at read_ahead_kb 128 and 29 at 64 (each read-around "
           "adds only the pages below its fault), as /proc/vmstat's "
           "pgmajfault counts. getrusage's major faults add, on 6.1 only, "
           "one per readahead mark met (npages / ra_pages forward: 9 and "
           "17; 1 backward), since 6.1 retries the fault that dropped "
           "mmap_lock for async readahead with FAULT_FLAG_TRIED; 6.12 "
           "retries after a VMA-lock try without it. This is why the "
           "experiment's cold 1 MiB mmap cells, which glibc's memcpy copies "
           "backward, miss every 17 pages.",
     "filemap_fault -> do_sync_mmap_readahead (read-around from index - "
     "ra_pages / 2) -> do_page_cache_ra (trimmed to EOF) -> "
     "page_cache_ra_unbounded (PG_readahead at nr_to_read - lookahead); "
     "do_async_mmap_readahead -> maybe_unlock_mmap_for_io -> "
     "page_cache_async_ra; mm_account_fault (FAULT_FLAG_TRIED is major); "
     "arch/x86/mm/fault.c do_user_addr_fault (6.12: lock_vma_under_rcu)",
     [r"cold_mmap_read_around"]),
    ("24", "A store to a page that is not in the page cache reads it first, "
           "inside its write fault: one read-in (a major fault) per page "
           "touched of a cold file, none of a warm one; at level timing the "
           "read is the fault's time (readin_ns at least pages x the device's "
           "delay) and a fault's time is its named waits plus its unnamed "
           "time to the nanosecond. fio's mmap randwrite on a cold file: "
           "the writer's fault time is at least 90 % of fio's write latency; "
           "warm, with an msync after every write: one fault per write, "
           "first-write faults = the pages touched.",
     "do_shared_fault -> __do_fault -> filemap_fault (the read, "
     "VM_FAULT_RETRY; the retry carries FAULT_FLAG_TRIED, which "
     "mm_account_fault counts major) -> do_page_mkwrite -> finish_fault "
     "-> fault_dirty_shared_page",
     [r"readin\.(cold|warm)\.store_waits_for_its_page", r"^fio "]),
    ("25", "The read-in's remedies: MADV_POPULATE_WRITE (5.14+) populates "
           "writable, so the pass takes no read-in and no first-write "
           "fault; MADV_WILLNEED and a cached file read nothing in inside "
           "the faults; MAP_POPULATE reads the pages in but maps them "
           "read-only, so the stores take write-protect faults.",
     "madvise_populate -> faultin_page_range (FOLL_WRITE); "
     "madvise_willneed -> vfs_fadvise -> force_page_cache_readahead; "
     "populate_vma_page_range: FOLL_WRITE only for private writable VMAs",
     [r"diagnose: .*read(s)? (nothing )?in", r"read-in remedy"]),
    ("26", "A fault's time in no named wait is time on a CPU, time "
           "runnable waiting for one, and other sleep: beside busy loops "
           "on every CPU, the run delay grows and the CPU time does not.",
     "se.sum_exec_runtime and sched_info.run_delay (kernel/sched/stats.h "
     "sched_info_arrive)",
     [r"contention\.fault_waits_for_a_cpu"]),
]

TAP_LINE = re.compile(r"^(not ok|ok) \d+ (.*?)(?: # (SKIP|skip).*)?$")


def read_results(resdir):
    """{kernel: [(suite, name, status, [log lines])]}"""
    out = {}
    for name in sorted(os.listdir(resdir)):
        kdir = os.path.join(resdir, name)
        if not os.path.isdir(kdir) or name == "host":
            continue
        # make check splits one kernel's suites over guests KVER-partN.
        kver = re.sub(r"-part[0-9]+$", "", name)
        rows = []
        # Each suite at level counts, then at level timing where it ran
        # there too (SUITE@timing.tap): the times are measured there.
        for suite in [s + lv for s in ("wpstat_predict", "wpstat_predict_read",
                                       "wpstat_predict_copy", "wpstat_stable",
                                       "wpstat_journal", "wpstat_throttle",
                                       "wpstat_faultwait", "wpstat_scopes",
                                       "wpstat_stalls", "predictions",
                                       "wpstat_lmdb", "wpstat_fs",
                                       "wpstat_fuse", "wpstat_nfs")
                      for lv in ("", "@timing")]:
            path = os.path.join(kdir, suite + ".tap")
            if not os.path.exists(path):
                continue
            logs = []
            for line in open(path, errors="replace"):
                line = line.rstrip("\n")
                m = TAP_LINE.match(line)
                if m:
                    status = "skip" if m.group(3) else (
                        "pass" if m.group(1) == "ok" else "FAIL")
                    rows.append((suite, m.group(2), status, logs))
                    logs = []
                elif re.match(r"# \S+\.c:\d+:\w+:[a-z]", line) and \
                        "Expected" not in line:
                    logs.append(line.split(":", 3)[3])
        if rows:
            out.setdefault(kver, []).extend(rows)
    return out


def filesystem_matrix():
    """The table under '## The matrix' in docs/filesystems.md, or '', its
    links made relative to docs/results/."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "..", "..", "docs", "filesystems.md")
    try:
        text = open(path, encoding="utf-8").read()
    except OSError:
        return ""
    rows, on = [], False
    for line in text.splitlines():
        if line.startswith("## The matrix"):
            on = True
        elif on and line.startswith("|"):
            rows.append(line)
        elif on and rows:
            break
    # Its relative links are from docs/; this page is in docs/results/.
    return re.sub(r"\]\((?![a-z]+:|#|/)", "](../", "\n".join(rows))


def render(results, out):
    """The whole report, as one Markdown page, to out."""
    kernels = list(results)
    print("Generated by `make predictions` "
          "(`scripts/check/predictions-report.py`) from the TAP results of "
          "`make check`; do not edit.\n", file=out)
    print("# Predictions and what the kernels did\n", file=out)
    print("The predictions and their kernel sources are listed in "
          "`scripts/check/predictions-report.py`; how to run the tests: "
          "[../testing.md](../testing.md). "
          f"Rendered on {datetime.date.today()} from `make check` (kernels: "
          f"{', '.join(kernels)}; QEMU TCG guest, RAM-disk and null_blk "
          "devices). N = 64 pages. The tests state the exact numbers; "
          "see `selftests/kselftest/wpstat_predict*.c`, "
          "`wpstat_stable.c`, `wpstat_throttle.c`, `wpstat_faultwait.c`, "
          "`wpstat_stalls.c`, "
          "`selftests/bats/predictions.bats`, `wpstat_fs.c`, `wpstat_fuse.c`, `wpstat_nfs.c` and "
          "`selftests/clients/wpstat_lmdb.c`; "
          "the Java clients (`make clients`) are in "
          "[../clients/index.md](../clients/index.md).\n", file=out)
    print("The analysis was written against Linux 5.4.  The 5.10 column "
          "is the most literal check of it: the same page-era paths "
          "(`page_mkclean`, `wait_for_stable_page`, "
          "`balance_dirty_pages_ratelimited`).  Where 5.10, 6.x and 7.2 "
          "differ, the test states each kernel's number and the function "
          "it comes from.  Kernels other than the newest bookworm 6.12 run "
          "the kernel-facing suites only, so a test of another suite shows "
          "\"not run\" there, as does a suite not yet ready on that "
          "kernel (selftests/suites.txt).  What holds page by "
          "page and what folio by folio: predictions 1 and 2.\n", file=out)
    matrix = filesystem_matrix()
    if matrix:
        print("## Filesystems: what each counter shows\n", file=out)
        print("From [../filesystems.md](../filesystems.md) (the why of each cell, and the "
              "numbers, are there and in predictions 1-2, 5, 16-18 below).\n", file=out)
        print(matrix + "\n", file=out)
    for num, claim, source, patterns in PREDICTIONS:
        print(f"## {num}. {claim}\n", file=out)
        print(f"Source: {source}.\n", file=out)
        print("| test | " + " | ".join(kernels) + " |", file=out)
        print("|---|" + "---|" * len(kernels), file=out)
        names = []
        for k in kernels:
            for suite, name, _, _ in results[k]:
                if any(re.search(p, name) for p in patterns) and \
                        (suite, name) not in names:
                    names.append((suite, name))
        measured = []
        for suite, name in names:
            cells = []
            for k in kernels:
                hit = [r for r in results[k] if r[0] == suite and r[1] == name]
                cells.append(hit[0][2] if hit else "not run")
                for log in (hit[0][3] if hit else []):
                    measured.append(f"{k}: {log.strip()}")
            print(f"| `{suite}` {name} | " + " | ".join(cells) + " |", file=out)
        if measured:
            print("\nMeasured:\n", file=out)
            for m in measured:
                print(f"- {m}", file=out)
        print(file=out)


def prediction_status(body, kernels):
    """Per kernel, what a prediction's tests did, from its table: "pass"
    (all N), "FAIL" (some of N), or the count of each result."""
    rows = [[c.strip() for c in line.strip().strip("|").split("|")]
            for line in body.split("\n") if line.startswith("| `")]
    cells = []
    for i, _ in enumerate(kernels):
        got = [r[i + 1] for r in rows if len(r) > i + 1]
        if not got:
            cells.append("no test")
        elif "FAIL" in got:
            cells.append("**FAIL** %d of %d" % (got.count("FAIL"), len(got)))
        elif set(got) == {"pass"}:
            cells.append("pass (%d)" % len(got))
        else:
            cells.append(", ".join("%s %d" % (v, got.count(v))
                                   for v in ("pass", "skip", "not run") if v in got))
    return cells


def split(text, sub="predictions"):
    """(index, {file name: page}) of the one-page report text: each
    numbered prediction a page of its own in sub/, its heading the page's
    title; the index keeps the rest and lists them with their results.
    It works on the text alone (scripts/lib/docpages.py), so an earlier
    one-page report splits into what a new run writes."""
    pre, parts = docpages.sections(text)
    made = pre.split("\n\n")[0]      # "Generated by `make predictions` ..."
    kept, pages, listed, status = [], {}, [], []
    kernels = None
    for heading, body in parts:
        m = re.match(r"(\d+)\. (.*)", heading, re.S)
        if not m:
            kept.append("## %s\n%s" % (heading, body.rstrip("\n")))
            continue
        num, claim = m.groups()
        name = docpages.page_name(num)
        if kernels is None:
            head = [line for line in body.split("\n") if line.startswith("| test |")]
            kernels = [c.strip() for c in head[0].strip().strip("|").split("|")][1:] \
                if head else []
        pages[name] = docpages.page(
            made, "%s. %s" % (num, claim),
            "Prediction %s of [../%s.md](../%s.md), which says how the tests "
            "ran and on what, and lists every prediction with its result "
            "per kernel." % (num, sub, sub), body, sub)
        listed.append("- **[%s](%s/%s)**. %s" % (num, sub, name, claim))
        status.append("| [%s](%s/%s) | %s |" % (
            num, sub, name, " | ".join(prediction_status(body, kernels))))
    index = [pre.rstrip("\n"), ""] + [k + "\n" for k in kept]
    if listed:
        index += ["## The predictions", "",
                  "Each on a page of its own: the kernel source that predicts "
                  "it, each test's result per kernel, what the tests measured.",
                  ""] + listed + [""]
        index += ["## Results per kernel", "",
                  "A prediction's tests on each kernel: pass (all of them; "
                  "how many), FAIL (how many of how many), or the count of "
                  "each result (not run: the suite does not run on that "
                  "kernel, or is not yet ready there).", "",
                  "| prediction | " + " | ".join(kernels) + " |",
                  "|---|" + "---|" * len(kernels)] + status + [""]
    return "\n".join(index).rstrip("\n") + "\n", pages


def main():
    args = sys.argv[1:]
    top = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    pages = os.path.normpath(os.path.join(top, "docs", "results", "predictions"))
    if len(args) > 1 and args[0] == "--pages":
        pages, args = args[1], args[2:]
    resdir = args[0] if args else "results/check"
    results = read_results(resdir)
    if not results:
        sys.exit(f"no results under {resdir}: run make check first")
    out = io.StringIO()
    render(results, out)
    if pages == "-":
        sys.stdout.write(out.getvalue())
        return
    # Every page rendered before any is written.
    index, prediction_pages = split(out.getvalue(),
                                    os.path.basename(os.path.normpath(pages)))
    docpages.write(pages, prediction_pages)
    sys.stdout.write(index)


if __name__ == "__main__":
    main()
