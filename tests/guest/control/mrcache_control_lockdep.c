// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Control for the debug kernel's kernel-log check: on load, take two
 * mutexes in the order a, b and then b, a.  One thread never deadlocks on
 * that, but lockdep records the first order and reports the second as
 * "possible circular locking dependency detected".  Test-only.
 */
#include <linux/module.h>
#include <linux/mutex.h>

static DEFINE_MUTEX(control_a);
static DEFINE_MUTEX(control_b);

static int __init control_lockdep_init(void)
{
	mutex_lock(&control_a);
	mutex_lock(&control_b);
	mutex_unlock(&control_b);
	mutex_unlock(&control_a);

	mutex_lock(&control_b);
	mutex_lock(&control_a);
	mutex_unlock(&control_a);
	mutex_unlock(&control_b);
	return 0;
}

static void __exit control_lockdep_exit(void)
{
}

module_init(control_lockdep_init);
module_exit(control_lockdep_exit);
MODULE_DESCRIPTION("mrcache test control: an AB-BA lock order for lockdep");
MODULE_LICENSE("Dual MIT/GPL");
