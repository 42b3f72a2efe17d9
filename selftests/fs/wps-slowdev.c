// SPDX-License-Identifier: GPL-2.0
/*
 * wps-slowdev: the C suites' slow device (slowdev_up()/slowdev_down() in
 * kselftest/wpstat_test.c) for the bats suites, so both build it the same
 * way on every kernel (null_blk's parameters or, on 5.10, its configfs):
 *
 *   wps-slowdev up FS DELAY_MS STABLE_WRITES [PARAMS]
 *                          FS on null_blk (with null_blk's PARAMS, "k=v
 *                          ...") behind a DELAY_MS dm-delay (0: none),
 *                          mounted at /tmp/wpstat-slow
 *   wps-slowdev down                           unmount and remove it all
 */
#include "wpstat_test.h"

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "down")) {
		slowdev_down();
		return 0;
	}
	if ((argc == 5 || argc == 6) && !strcmp(argv[1], "up"))
		return slowdev_up(argv[2], argc == 6 ? argv[5] : "",
				  atoi(argv[3]), atoi(argv[4])) ? 1 : 0;
	fprintf(stderr, "usage: wps-slowdev up FS DELAY_MS STABLE_WRITES [PARAMS] | down\n");
	return 2;
}
