// SPDX-License-Identifier: GPL-2.0
/*
 * wps-slowdev: the C suites' slow device (slowdev_up_rw()/slowdev_down() in
 * kselftest/wpstat_test_dev.c) for the bats suites, so both build it the same
 * way on every kernel (null_blk's parameters or, on 5.10, its configfs):
 *
 *   wps-slowdev up FS DELAY_MS STABLE_WRITES [PARAMS [READ_DELAY_MS]]
 *                          FS on null_blk (with null_blk's PARAMS, "k=v
 *                          ...", maybe empty) behind a dm-delay whose
 *                          writes complete DELAY_MS late and reads
 *                          READ_DELAY_MS late (0: none; both 0: no
 *                          dm-delay), mounted at /tmp/wpstat-slow
 *   wps-slowdev down                           unmount and remove it all
 */
#include "wpstat_test.h"

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "down")) {
		slowdev_down();
		return 0;
	}
	if (argc >= 5 && argc <= 7 && !strcmp(argv[1], "up"))
		return slowdev_up_rw(argv[2], argc >= 6 ? argv[5] : "",
				     argc == 7 ? atoi(argv[6]) : 0,
				     atoi(argv[3]), atoi(argv[4])) ? 1 : 0;
	fprintf(stderr, "usage: wps-slowdev up FS DELAY_MS STABLE_WRITES [PARAMS [READ_DELAY_MS]] | down\n");
	return 2;
}
