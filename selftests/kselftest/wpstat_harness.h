/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kselftest harness, without its clock: the harness kills a test that
 * runs past its timeout (30 s unless TEST_F_TIMEOUT says otherwise), which
 * fails a correct test on a slower machine.  A hang is caught by silence
 * instead (scripts/check/watchdog.sh: no output and no file written for
 * the hang limit), so every test's timeout here is the guest's backstop,
 * four hours, far above any working run.  Include this, not
 * kselftest_harness.h, in a test binary's one translation unit.
 */
#ifndef WPSTAT_HARNESS_H
#define WPSTAT_HARNESS_H

#include "kselftest_harness.h"

#define WPS_TEST_BACKSTOP_SECS	14400

/* TEST() and TEST_F() read it where they are used, after this. */
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT	WPS_TEST_BACKSTOP_SECS

#endif /* WPSTAT_HARNESS_H */
