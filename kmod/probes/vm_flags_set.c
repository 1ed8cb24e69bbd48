// SPDX-License-Identifier: GPL-2.0 OR MIT
/* Linux 6.3 made vma->vm_flags read-only: vm_flags_set()/vm_flags_clear(). */
#include <linux/mm.h>

void mrmon_probe_vm_flags_set(struct vm_area_struct *vma);
void mrmon_probe_vm_flags_set(struct vm_area_struct *vma)
{
	vm_flags_mod(vma, VM_DONTCOPY, VM_MAYWRITE);
}
