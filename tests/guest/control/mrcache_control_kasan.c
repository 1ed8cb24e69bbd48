// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Control for the debug kernel's kernel-log check: on load, read one byte
 * past a 16-byte kmalloc() object, which KASAN reports as
 * "BUG: KASAN: slab-out-of-bounds".  The size goes through
 * OPTIMIZER_HIDE_VAR so the compiler cannot see (and warn about, or drop)
 * the overrun.  Test-only.
 */
#include <linux/module.h>
#include <linux/slab.h>

static int __init control_kasan_init(void)
{
	size_t size = 16;
	char *p = kmalloc(size, GFP_KERNEL);

	if (!p)
		return -ENOMEM;
	OPTIMIZER_HIDE_VAR(size);
	pr_info("mrcache_control_kasan: read %d\n", READ_ONCE(p[size]));
	kfree(p);
	return 0;
}

static void __exit control_kasan_exit(void)
{
}

module_init(control_kasan_init);
module_exit(control_kasan_exit);
MODULE_DESCRIPTION("mrcache test control: an out-of-bounds read for KASAN");
MODULE_LICENSE("Dual MIT/GPL");
