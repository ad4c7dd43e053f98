/* SPDX-License-Identifier: GPL-2.0 */
/* Internals of unwind_test.ko. */
#ifndef _UT_MODULES_H
#define _UT_MODULES_H

#include <linux/unwind_deferred.h>
#include "unwind_test_uapi.h"

#define UT_US(us) ns_to_ktime((u64)(us) * NSEC_PER_USEC)

extern struct unwind_work ut_works[UT_NWORKS];

long ut_ioctl_unwind(void __user *arg);
long ut_ioctl_deferred(void __user *arg);
int ut_deferred_init(void);
void ut_deferred_exit(void);
int ut_stress(struct ut_deferred *req);
void ut_stress_exit(void);
void ut_stress_callback(struct unwind_work *work, u64 cookie);
int ut_syscall_init(void);
void ut_syscall_exit(void);

#endif /* _UT_MODULES_H */
