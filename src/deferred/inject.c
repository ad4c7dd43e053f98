// SPDX-License-Identifier: GPL-2.0
/*
 * Test builds only (UNWIND_RS_INJECT): the C side of src/deferred/inject.rs.
 */
#include <linux/delay.h>
#include <linux/moduleparam.h>

#include "inject.h"

/*
 * inject_going_ms: the module's exit first sleeps this long, GOING with
 * every hook still in place, so a test sees what perf's requests get
 * between rmmod's start and the exit (t_perf_defer_going).
 */
static unsigned int inject_going_ms;
module_param(inject_going_ms, uint, 0644);
MODULE_PARM_DESC(inject_going_ms, "test builds: ms the exit sleeps first, GOING");

void unwind_rs_inject_going_delay(void)
{
	if (inject_going_ms)
		msleep(inject_going_ms);
}
