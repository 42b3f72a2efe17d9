// SPDX-License-Identifier: GPL-2.0
/*
 * lmdb-commits: the LMDB workload of docs/results/clients-runs.md, as a py-lmdb
 * writer does it: TXNS write transactions of PUTS puts each
 * (new keys, 100-byte values) into a new environment in DIR, one commit
 * per transaction.  Prints one JSON line: the settings and LMDB's
 * last_pgno (the pages the file spans, less one).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <lmdb.h>

static void usage(FILE *f)
{
	fprintf(f, "Usage: lmdb-commits [--writemap] [--nosync] [--txns N] [--puts N] DIR\n"
		"  --writemap  MDB_WRITEMAP: write through the shared mapping\n"
		"  --nosync    MDB_NOSYNC: commits do not msync/fdatasync\n"
		"  --txns N    write transactions (default 20)\n"
		"  --puts N    puts per transaction (default 200)\n");
}

static int number(const char *opt, const char *s, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(s, &end, 10);
	if (errno || end == s || *end || *out < 1 || *out > 1000000) {
		fprintf(stderr, "lmdb-commits: %s: '%s' is not a number in 1..1000000\n",
			opt, s);
		return -1;
	}
	return 0;
}

#define CHECK(call) do {						\
	int __rc = (call);						\
									\
	if (__rc) {							\
		fprintf(stderr, "lmdb-commits: %s: %s\n", #call,	\
			mdb_strerror(__rc));				\
		return 1;						\
	}								\
} while (0)

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "writemap", no_argument, NULL, 'w' },
		{ "nosync", no_argument, NULL, 'n' },
		{ "txns", required_argument, NULL, 't' },
		{ "puts", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	unsigned int flags = 0;
	long txns = 20, puts = 200, t, i;
	char kbuf[16], vbuf[100];
	MDB_val key = { 0, kbuf }, val = { sizeof(vbuf), vbuf };
	MDB_envinfo info;
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
	int c;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'w': flags |= MDB_WRITEMAP; break;
		case 'n': flags |= MDB_NOSYNC; break;
		case 't': if (number("--txns", optarg, &txns)) return 2; break;
		case 'p': if (number("--puts", optarg, &puts)) return 2; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return 2;
	}
	if (mkdir(argv[optind], 0700) && errno != EEXIST) {
		fprintf(stderr, "lmdb-commits: mkdir %s: %s\n", argv[optind], strerror(errno));
		return 1;
	}
	CHECK(mdb_env_create(&env));
	CHECK(mdb_env_set_mapsize(env, 64UL << 20));
	CHECK(mdb_env_open(env, argv[optind], flags, 0600));
	CHECK(mdb_txn_begin(env, NULL, 0, &txn));
	CHECK(mdb_dbi_open(txn, NULL, 0, &dbi));
	CHECK(mdb_txn_commit(txn));
	for (t = 0; t < txns; t++) {
		CHECK(mdb_txn_begin(env, NULL, 0, &txn));
		memset(vbuf, 'a' + t % 26, sizeof(vbuf));
		for (i = t * puts; i < (t + 1) * puts; i++) {
			key.mv_size = snprintf(kbuf, sizeof(kbuf), "k%08ld", i);
			CHECK(mdb_put(txn, dbi, &key, &val, 0));
		}
		CHECK(mdb_txn_commit(txn));
	}
	CHECK(mdb_env_info(env, &info));
	printf("{\"writemap\":%s,\"nosync\":%s,\"txns\":%ld,\"puts\":%ld,\"last_pgno\":%zu}\n",
	       flags & MDB_WRITEMAP ? "true" : "false",
	       flags & MDB_NOSYNC ? "true" : "false", txns, puts, info.me_last_pgno);
	mdb_env_close(env);
	return 0;
}
