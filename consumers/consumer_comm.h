/* SPDX-License-Identifier: GPL-2.0 */
/* The comm filter that both example consumers take from debugfs. */
#ifndef _CONSUMER_COMM_H
#define _CONSUMER_COMM_H

#include <linux/sched.h>
#include <linux/string.h>
#include <linux/uaccess.h>

/* Sets @comm (TASK_COMM_LEN bytes) from a user write, trailing newline dropped. */
static inline ssize_t consumer_comm_write(char *comm, const char __user *ubuf,
					  size_t count)
{
	char buf[TASK_COMM_LEN] = {};

	if (count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	strscpy(comm, strim(buf), TASK_COMM_LEN);
	return count;
}

#endif /* _CONSUMER_COMM_H */
