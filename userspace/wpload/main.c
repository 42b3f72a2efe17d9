// SPDX-License-Identifier: GPL-2.0
/*
 * wpload - workload generator for wpstat.
 *
 * Stores to (or loads from) one file in fixed-size chunks, through a shared
 * mapping or with pwrite/pread, one pass over the whole file at a time.  For
 * every pass it reports the wall time, per-op latency percentiles, the time
 * spent syncing, and the change of the file's counters in /proc/wpstat/inodes
 * (page_mkwrite faults, folio_mkclean write-protects, stable-page waits, dirty
 * balancing), so the cost of each write-protect cycle can be put next to the
 * kernel events that caused it.
 *
 * Exit status: 0 success, 1 run-time failure, 2 usage error, 3 SIGBUS.
 *
 * This file: main() and the pass loop (worker 0 decides whether to go on and
 * reports; barriers start and end every pass).  options.c parses the command
 * line, workload.c sets up and runs the ops, report.c prints.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "fmt.h"
#include "wpload.h"

/* Worker 0, before the start barrier: go on?  Then snapshot and start. */
static void pass_begin(struct wpload_run *run)
{
	const struct wpload_opts *opt = run->opt;
	uint64_t now = wpstat_now_ns();

	if (!run->pass)
		run->run_start_ns = now;
	if (run_failed(run))
		run->stop = true;
	else if (!run->pass)
		run->stop = false;
	else if (opt->duration_ns)
		run->stop = now - run->run_start_ns >= opt->duration_ns ||
			    (opt->passes_given && run->pass >= opt->passes);
	else
		run->stop = run->pass >= opt->passes;
	if (run->stop)
		return;

	run->pass++;
	counters_before(run);
	/* The CPU-time interval inside the elapsed one. */
	run->pass_start_ns = wpstat_now_ns();
	run->pass_start_cpu_ns = wpstat_process_cpu_ns();
}

/* Worker 0, after the end barrier: sync, snapshot, report. */
static void pass_end(struct wpload_run *run)
{
	const struct wpload_opts *opt = run->opt;
	struct wpload_pass_result r = { .pass = run->pass };
	unsigned int i;

	if (!run_failed(run) && !sync_file(run, &r.sync_ns)) {
		r.cpu_ns = wpstat_process_cpu_ns() - run->pass_start_cpu_ns;
		r.wall_ns = wpstat_now_ns() - run->pass_start_ns;
		for (i = 0; i < opt->threads; i++) {
			r.ops += run->workers[i].ops;
			r.bytes += run->workers[i].bytes;
			r.sync_ns += run->workers[i].sync_ns;
		}
		report_pass(run, &r);
	}
	counters_before_free(run);
}

static void worker_loop(struct wpload_worker *w)
{
	struct wpload_run *run = w->run;

	for (;;) {
		if (w->id == 0)
			pass_begin(run);
		pthread_barrier_wait(&run->barrier);
		if (run->stop)
			break;
		worker_pass(w);
		pthread_barrier_wait(&run->barrier);
		if (w->id == 0)
			pass_end(run);
	}
}

static void *worker_thread(void *arg)
{
	struct wpload_worker *w = arg;
	struct wpload_run *run = w->run;
	int launch;

	pthread_mutex_lock(&run->launch_lock);
	while (!run->launch)
		pthread_cond_wait(&run->launch_cond, &run->launch_lock);
	launch = run->launch;
	pthread_mutex_unlock(&run->launch_lock);
	if (launch > 0)
		worker_loop(w);
	return NULL;
}

static void run_launch(struct wpload_run *run, int launch)
{
	pthread_mutex_lock(&run->launch_lock);
	run->launch = launch;
	pthread_cond_broadcast(&run->launch_cond);
	pthread_mutex_unlock(&run->launch_lock);
}

/* The calling thread is worker 0. */
static void run_workers(struct wpload_run *run)
{
	unsigned int i;
	int err;

	for (i = 1; i < run->opt->threads; i++) {
		struct wpload_worker *w = &run->workers[i];

		err = pthread_create(&w->thread, NULL, worker_thread, w);
		if (err) {
			run_fail(run, WPLOAD_EXIT_FAIL,
				 "cannot create thread %u: %s", i,
				 strerror(err));
			break;
		}
		w->started = true;
	}
	if (run->error_exit) {
		run_launch(run, -1);
	} else {
		print_header(run);
		run_launch(run, 1);
		worker_loop(&run->workers[0]);
	}
	for (i = 1; i < run->opt->threads; i++)
		if (run->workers[i].started)
			pthread_join(run->workers[i].thread, NULL);
}

int main(int argc, char **argv)
{
	struct sigaction sa = {
		.sa_sigaction = sigbus_handler,
		.sa_flags = SA_SIGINFO,
	};
	struct wpload_opts opt;
	struct wpload_run run;
	int ret;

	ret = parse_args(argc, argv, &opt);
	if (ret != WPLOAD_CONTINUE)
		return ret;

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, NULL)) {
		fprintf(stderr, "wpload: sigaction(SIGBUS): %s\n",
			strerror(errno));
		return WPLOAD_EXIT_FAIL;
	}

	if (!run_init(&run, &opt))
		run_workers(&run);
	print_totals(&run);
	ret = run.error_exit;
	if (ret)
		fprintf(stderr, "wpload: %s\n", run.error_msg);
	run_destroy(&run);

	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "wpload: error writing the output: %s\n",
			strerror(errno));
		if (!ret)
			ret = WPLOAD_EXIT_FAIL;
	}
	return ret;
}
