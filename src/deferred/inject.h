/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Test builds only (UNWIND_RS_INJECT): the injection points of
 * src/deferred/inject.rs, exported for tests/modules/race/.
 */
#ifndef _UNWIND_RS_INJECT_H
#define _UNWIND_RS_INJECT_H

void unwind_rs_inject_set(void (*fn)(int step));
void unwind_rs_inject_fail_queue(void);
void unwind_rs_inject_going_delay(void);

#endif /* _UNWIND_RS_INJECT_H */
