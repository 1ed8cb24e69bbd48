// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Linux 6.17 added file_operations.mmap_prepare: the mapping is set up
 * from a struct vm_area_desc before the VMA exists, and ->mmap is being
 * phased out.  This is the form with desc->vm_flags (6.17, 6.18), the one
 * mrmon_mmap_prepare() uses; a kernel whose descriptor holds its flags only
 * as vma_flags_t fails this probe and keeps ->mmap, which it still calls.
 */
#include <linux/fs.h>
#include <linux/mm.h>

extern const struct file_operations mrmon_probe_mmap_prepare_fops;

static int mrmon_probe_mmap_prepare(struct vm_area_desc *desc)
{
	if (!desc->file || desc->mm != current->mm || desc->pgoff ||
	    desc->end - desc->start > PAGE_SIZE || (desc->vm_flags & VM_WRITE))
		return -EINVAL;
	desc->vm_flags = (desc->vm_flags | VM_IO) & ~VM_MAYWRITE;
	desc->vm_ops = NULL;
	return 0;
}

const struct file_operations mrmon_probe_mmap_prepare_fops = {
	.mmap_prepare = mrmon_probe_mmap_prepare,
};
