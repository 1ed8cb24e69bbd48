/* SPDX-License-Identifier: MIT */
/*
 * tracer.c - the ptrace loop.
 *
 * One tracer thread waits for every traced thread (__WALL) and handles
 * each stop in the order the kernel reports them, so events of one
 * address space are recorded in the order they happened.
 *
 *   tracee                         tracer
 *   syscall (filter: TRACE)  --->  seccomp stop: args, ip, sp -> call site
 *                                  t_resume = now; PTRACE_SYSCALL
 *   kernel runs the syscall
 *   syscall exit stop        --->  t_exit = now; result
 *                                  latency = t_exit - t_resume - overhead
 *                                  PTRACE_CONT
 *
 * The latency excludes the tracer's own work at the entry stop (the clock
 * starts when the tracee is resumed) but includes waking the tracee and
 * waking the tracer: that part is the calibrated overhead subtracted.
 */
#include <errno.h>
#include <linux/io_uring.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "callsite.h"
#include "maps.h"
#include "hist.h"
#include "seccomp.h"
#include "tracer.h"

struct thread {
	pid_t tid;		/* 0: free slot */
	pid_t tgid;
	int expect_sigstop;	/* auto-attached: first stop is SIGSTOP */
	int in_syscall;		/* between seccomp stop and exit stop */
	int uring_setup;	/* that syscall is io_uring_setup (no event) */
	uint64_t arg;		/* io_uring_setup's params, mmap's offset */
	uint64_t t_resume;
	struct mp_event ev;
};

/*
 * io_uring: the I/O a program submits through a ring makes no read or
 * write syscall.  The tracer learns where each ring's submission queue
 * lives (io_uring_setup's parameters, then the program's mmap of the
 * ring and of its entries) and, at each io_uring_enter, reads the entries
 * being submitted, between the kernel's head and the program's tail.
 */
#ifndef IORING_SETUP_NO_SQARRAY
#define IORING_SETUP_NO_SQARRAY	(1U << 16)	/* Linux 6.6 */
#endif
#define MAX_URINGS 64
struct uring {
	uint32_t tgid;		/* 0: free */
	int fd;
	uint32_t flags;		/* IORING_SETUP_* */
	struct io_sqring_offsets off;
	uint64_t sq_ring;	/* the program's address of the SQ ring, 0: unmapped */
	uint64_t sqes;		/* of the entries */
};

struct tracer {
	const struct mp_tracer_opts *o;
	struct mp_trace *t;
	struct mp_maps *maps;
	struct mp_callsites *cs;
	struct thread *th;	/* open addressing on tid */
	size_t cap, n;
	pid_t root;
	int started;		/* the root process has exec'd the command */
	uint64_t t0, t_last;
	struct uring urings[MAX_URINGS];
	int err;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct thread *thread_find(struct tracer *tr, pid_t tid)
{
	for (size_t j = (size_t)tid & (tr->cap - 1); tr->th[j].tid; j = (j + 1) & (tr->cap - 1))
		if (tr->th[j].tid == tid)
			return &tr->th[j];
	return NULL;
}

static pid_t read_tgid(pid_t tid)
{
	char path[64], line[128];
	pid_t tgid = tid;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return tid;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}

static int thread_table_grow(struct tracer *tr)
{
	size_t ncap = tr->cap ? tr->cap * 2 : 64;
	struct thread *n = calloc(ncap, sizeof(*n));

	if (!n)
		return -ENOMEM;
	for (size_t i = 0; i < tr->cap; i++) {
		size_t j;

		if (!tr->th[i].tid)
			continue;
		for (j = (size_t)tr->th[i].tid & (ncap - 1); n[j].tid; j = (j + 1) & (ncap - 1))
			;
		n[j] = tr->th[i];
	}
	free(tr->th);
	tr->th = n;
	tr->cap = ncap;
	return 0;
}

static struct thread *thread_add(struct tracer *tr, pid_t tid, pid_t tgid, int expect_sigstop)
{
	struct thread *th = thread_find(tr, tid);
	size_t j;

	if (th)
		return th;
	if (2 * (tr->n + 1) > tr->cap && thread_table_grow(tr))
		return NULL;
	for (j = (size_t)tid & (tr->cap - 1); tr->th[j].tid; j = (j + 1) & (tr->cap - 1))
		;
	th = &tr->th[j];
	memset(th, 0, sizeof(*th));
	th->tid = tid;
	th->tgid = tgid ? tgid : read_tgid(tid);
	th->expect_sigstop = expect_sigstop;
	tr->n++;
	return th;
}

static void thread_remove(struct tracer *tr, pid_t tid)
{
	struct thread *th = thread_find(tr, tid);
	size_t i, j, k;

	if (!th)
		return;
	/* Backward-shift deletion keeps the probe chains intact. */
	i = (size_t)(th - tr->th);
	tr->th[i].tid = 0;
	for (j = (i + 1) & (tr->cap - 1); tr->th[j].tid; j = (j + 1) & (tr->cap - 1)) {
		k = (size_t)tr->th[j].tid & (tr->cap - 1);
		if ((j > i && (k <= i || k > j)) || (j < i && k <= i && k > j)) {
			tr->th[i] = tr->th[j];
			tr->th[j].tid = 0;
			i = j;
		}
	}
	tr->n--;
}

static int recording(const struct tracer *tr, pid_t tgid)
{
	return tr->started && (!tr->o->only_first || tgid == tr->root);
}

static void record(struct tracer *tr, struct mp_event *ev, uint64_t t)
{
	ev->t_ns = t - tr->t0;
	if (mp_trace_add_event(tr->t, ev) && !tr->err)
		tr->err = -ENOMEM;
}

static struct uring *uring_find(struct tracer *tr, pid_t tgid, int fd)
{
	for (int i = 0; i < MAX_URINGS; i++)
		if (tr->urings[i].tgid == (uint32_t)tgid && tr->urings[i].fd == fd)
			return &tr->urings[i];
	return NULL;
}

static void uring_forget(struct tracer *tr, pid_t tgid)
{
	for (int i = 0; i < MAX_URINGS; i++)
		if (tr->urings[i].tgid == (uint32_t)tgid)
			tr->urings[i].tgid = 0;
}

/* A forked child has its parent's rings, fds and mappings. */
static void uring_inherit(struct tracer *tr, pid_t parent, pid_t child)
{
	for (int i = 0; i < MAX_URINGS; i++) {
		if (tr->urings[i].tgid != (uint32_t)parent)
			continue;
		for (int j = 0; j < MAX_URINGS; j++) {
			if (!tr->urings[j].tgid) {
				tr->urings[j] = tr->urings[i];
				tr->urings[j].tgid = (uint32_t)child;
				break;
			}
		}
	}
}

static int read_mem(pid_t tid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };

	return process_vm_readv(tid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -EFAULT;
}

static void on_uring_setup_exit(struct tracer *tr, struct thread *th, int64_t fd)
{
	struct io_uring_params p;
	struct uring *u = uring_find(tr, th->tgid, (int)fd);

	if (fd < 0 || read_mem(th->tid, th->arg, &p, sizeof(p)))
		return;
	for (int i = 0; !u && i < MAX_URINGS; i++)
		if (!tr->urings[i].tgid)
			u = &tr->urings[i];
	if (!u)
		return;		/* more rings than we follow: their I/O is not seen */
	*u = (struct uring){ .tgid = (uint32_t)th->tgid, .fd = (int)fd, .flags = p.flags,
			     .off = p.sq_off };
}

/* The program mapped a ring's SQ ring or its entries. */
static void on_uring_mmap(struct tracer *tr, struct thread *th, const struct mp_event *ev)
{
	struct uring *u = uring_find(tr, th->tgid, (int)ev->a[3]);

	if (!u)
		return;
	if (th->arg == IORING_OFF_SQ_RING)
		u->sq_ring = (uint64_t)ev->ret;
	else if (th->arg == IORING_OFF_SQES)
		u->sqes = (uint64_t)ev->ret;
}

/* The I/O entries io_uring_enter(fd, to_submit) submits: one buffer event
 * each (vectored ones are not buffers, as for syscalls). */
static void on_uring_enter(struct tracer *tr, struct thread *th, const uint64_t *args,
			   uint32_t site, enum mp_owner owner, uint64_t t)
{
	struct uring *u = uring_find(tr, th->tgid, (int)args[0]);
	uint32_t head, tail, mask, n;

	if (!u || !u->sq_ring || !u->sqes || !args[1] || (args[3] & IORING_ENTER_REGISTERED_RING) ||
	    read_mem(th->tid, u->sq_ring + u->off.head, &head, 4) ||
	    read_mem(th->tid, u->sq_ring + u->off.tail, &tail, 4) ||
	    read_mem(th->tid, u->sq_ring + u->off.ring_mask, &mask, 4))
		return;
	n = tail - head < args[1] ? tail - head : (uint32_t)args[1];
	for (uint32_t k = 0; k < n; k++) {
		uint32_t pos = (head + k) & mask, idx = pos;
		struct io_uring_sqe sqe;
		struct mp_event ev = { .tid = (uint32_t)th->tid, .tgid = (uint32_t)th->tgid,
				       .site = site, .flags = MP_EV_URING };
		size_t sz = u->flags & IORING_SETUP_SQE128 ? 128 : 64;

		if (!(u->flags & IORING_SETUP_NO_SQARRAY) &&
		    read_mem(th->tid, u->sq_ring + u->off.array + 4ull * pos, &idx, 4))
			return;
		if (read_mem(th->tid, u->sqes + (uint64_t)(idx & mask) * sz, &sqe, sizeof(sqe)))
			return;
		switch (sqe.opcode) {
		case IORING_OP_READ_FIXED: case IORING_OP_WRITE_FIXED:
			ev.flags |= MP_EV_FIXED;
			/* fallthrough */
		case IORING_OP_READ: case IORING_OP_WRITE: case IORING_OP_RECV: case IORING_OP_SEND:
			break;
		default:
			continue;
		}
		if (sqe.len < tr->o->buffer_min)
			continue;
		ev.kind = sqe.opcode == IORING_OP_READ_FIXED || sqe.opcode == IORING_OP_READ ||
			  sqe.opcode == IORING_OP_RECV ? MP_IO_READ : MP_IO_WRITE;
		ev.a[0] = (uint64_t)(int64_t)sqe.fd;
		ev.a[1] = sqe.addr;
		ev.a[2] = sqe.len;
		ev.a[3] = (uint64_t)sqe.opcode << 32 | SYS_io_uring_enter;
		ev.ret = sqe.len;
		ev.flags |= mp_owner_flags(owner);
		record(tr, &ev, t);
	}
}

static void on_seccomp(struct tracer *tr, struct thread *th, uint64_t t)
{
	struct __ptrace_syscall_info info;
	struct mp_event *ev = &th->ev;
	int kind;

	if (ptrace(PTRACE_GET_SYSCALL_INFO, th->tid, sizeof(info), &info) <= 0 ||
	    info.op != PTRACE_SYSCALL_INFO_SECCOMP ||
	    (kind = mp_seccomp_kind((long)info.seccomp.nr)) < 0) {
		ptrace(PTRACE_CONT, th->tid, 0, 0);
		return;
	}
	memset(ev, 0, sizeof(*ev));
	ev->kind = (uint16_t)kind;
	ev->tid = (uint32_t)th->tid;
	ev->tgid = (uint32_t)th->tgid;
	th->uring_setup = 0;
	if (kind == MP_SECCOMP_URING_ENTER) {
		enum mp_owner owner;
		uint32_t site;

		if (recording(tr, th->tgid)) {
			site = mp_callsite_get(tr->cs, th->tid, th->tgid, info.instruction_pointer,
					       info.stack_pointer, 1, &owner);
			on_uring_enter(tr, th, (const uint64_t *)info.seccomp.args, site, owner, t);
		}
		ptrace(PTRACE_CONT, th->tid, 0, 0);
		return;
	}
	if (kind == MP_IO_READ || kind == MP_IO_WRITE) {
		/* The site is read while the thread is stopped; the exit stop
		 * gives the bytes moved (a read of a 2 MiB buffer may move
		 * 4 KiB). */
		ev->a[0] = info.seccomp.args[0];
		ev->a[1] = info.seccomp.args[1];
		ev->a[2] = info.seccomp.args[2];
		ev->a[3] = info.seccomp.nr;
	} else if (kind == MP_SECCOMP_URING_SETUP) {
		th->uring_setup = 1;
		th->arg = info.seccomp.args[1];
	} else {
		memcpy(ev->a, info.seccomp.args, sizeof(ev->a));
	}
	if (kind == MP_MMAP) {
		th->arg = info.seccomp.args[5];	/* the offset: a ring's part? */
		ev->a[2] = info.seccomp.args[2] << 32 | (info.seccomp.args[3] & 0xffffffffu);
		ev->a[3] = info.seccomp.args[4];
	} else if (kind == MP_SHMAT) {
		ev->a[3] = 0;	/* the segment size, known at exit */
	}
	if (recording(tr, th->tgid) && kind < MP_KINDS) {
		enum mp_owner owner;

		ev->site = mp_callsite_get(tr->cs, th->tid, th->tgid, info.instruction_pointer,
					   info.stack_pointer, kind >= MP_VM_KINDS, &owner);
		ev->flags = mp_owner_flags(owner);
	}
	ev->t_ns = t;		/* absolute until the exit stop */
	th->in_syscall = 1;
	th->t_resume = now_ns();
	ptrace(PTRACE_SYSCALL, th->tid, 0, 0);
}

static void on_syscall_exit(struct tracer *tr, struct thread *th, uint64_t t)
{
	struct __ptrace_syscall_info info;
	struct mp_event *ev = &th->ev;
	uint64_t raw = t - th->t_resume;

	th->in_syscall = 0;
	if (ptrace(PTRACE_GET_SYSCALL_INFO, th->tid, sizeof(info), &info) > 0 &&
	    info.op == PTRACE_SYSCALL_INFO_EXIT) {
		ev->ret = info.exit.rval;
		ev->flags |= info.exit.is_error ? MP_EV_ERROR : 0;
	}
	if (th->uring_setup) {
		th->uring_setup = 0;
		if (recording(tr, th->tgid))
			on_uring_setup_exit(tr, th, ev->ret);
		ptrace(PTRACE_CONT, th->tid, 0, 0);
		return;
	}
	if (ev->kind == MP_SHMAT && !(ev->flags & MP_EV_ERROR))
		ev->a[3] = mp_maps_mapping_len(th->tgid, (uint64_t)ev->ret);
	if (ev->kind == MP_MMAP && !(ev->flags & MP_EV_ERROR) && (int64_t)ev->a[3] >= 0)
		on_uring_mmap(tr, th, ev);
	ptrace(PTRACE_CONT, th->tid, 0, 0);
	ev->lat_ns = raw > tr->o->overhead_ns ? raw - tr->o->overhead_ns : 0;
	if (recording(tr, th->tgid))
		record(tr, ev, ev->t_ns);
}

static void on_new_task(struct tracer *tr, struct thread *parent, int event, uint64_t t)
{
	unsigned long msg = 0;
	struct thread *child;
	pid_t tgid;

	ptrace(PTRACE_GETEVENTMSG, parent->tid, 0, &msg);
	ptrace(PTRACE_CONT, parent->tid, 0, 0);
	if (!msg)
		return;
	tgid = event == PTRACE_EVENT_CLONE ? read_tgid((pid_t)msg) : (pid_t)msg;
	child = thread_find(tr, (pid_t)msg);
	if (!child)
		child = thread_add(tr, (pid_t)msg, tgid, 1);
	else
		child->tgid = tgid;	/* it stopped before this event came */
	if (!child) {
		tr->err = -ENOMEM;
		return;
	}
	if (tgid != parent->tgid)
		uring_inherit(tr, parent->tgid, tgid);
	if (tgid != parent->tgid && recording(tr, parent->tgid)) {
		struct mp_event ev = { .kind = MP_FORK, .tid = (uint32_t)parent->tid,
				       .tgid = (uint32_t)parent->tgid, .a = { (uint64_t)tgid } };

		record(tr, &ev, t);
	}
}

static void on_exec(struct tracer *tr, struct thread *th, uint64_t t)
{
	unsigned long former = 0;
	char path[64], exe[4096];
	ssize_t n;
	long id;

	/* A non-leader thread that execs takes over the leader's tid. */
	ptrace(PTRACE_GETEVENTMSG, th->tid, 0, &former);
	if (former && (pid_t)former != th->tid)
		thread_remove(tr, (pid_t)former);
	mp_maps_forget(tr->maps, th->tgid);
	mp_callsites_forget(tr->cs, th->tgid);
	uring_forget(tr, th->tgid);
	if (th->tid == tr->root && !tr->started) {
		tr->started = 1;
		tr->t0 = t;
	}
	if (recording(tr, th->tgid)) {
		struct mp_event ev = { .kind = MP_EXEC, .tid = (uint32_t)th->tid,
				       .tgid = (uint32_t)th->tgid };

		snprintf(path, sizeof(path), "/proc/%d/exe", (int)th->tid);
		n = readlink(path, exe, sizeof(exe) - 1);
		exe[n > 0 ? n : 0] = 0;
		id = mp_trace_intern(tr->t, exe);
		ev.a[0] = id > 0 ? (uint64_t)id : 0;
		record(tr, &ev, t);
	}
	ptrace(PTRACE_CONT, th->tid, 0, 0);
}

static void on_signal(struct thread *th, int sig)
{
	siginfo_t si;

	if (sig == SIGSTOP && th->expect_sigstop) {
		th->expect_sigstop = 0;
		ptrace(PTRACE_CONT, th->tid, 0, 0);
		return;
	}
	/* No siginfo: a group stop (job control).  Resume rather than keep
	 * the whole run stopped: job control is not supported under us. */
	if (ptrace(PTRACE_GETSIGINFO, th->tid, 0, &si) < 0)
		sig = 0;
	ptrace(PTRACE_CONT, th->tid, 0, sig);
}

static void on_gone(struct tracer *tr, pid_t tid, int status, uint64_t t)
{
	struct thread *th = thread_find(tr, tid);

	if (!th)
		return;
	if (th->tid == th->tgid) {
		if (recording(tr, th->tgid)) {
			struct mp_event ev = { .kind = MP_EXIT, .tid = (uint32_t)tid,
					       .tgid = (uint32_t)th->tgid,
					       .a = { (uint64_t)status } };

			record(tr, &ev, t);
		}
		mp_maps_forget(tr->maps, th->tgid);
		mp_callsites_forget(tr->cs, th->tgid);
		uring_forget(tr, th->tgid);
		if (tid == tr->root)
			tr->t->exit_status = status;
	}
	tr->t_last = t;
	thread_remove(tr, tid);
}

static void on_stop(struct tracer *tr, pid_t tid, int status, uint64_t t)
{
	struct thread *th = thread_find(tr, tid);
	int sig = WSTOPSIG(status), event = status >> 16;

	if (!th)	/* a new task can stop before its parent's event */
		th = thread_add(tr, tid, 0, 1);
	if (!th) {
		tr->err = -ENOMEM;
		ptrace(PTRACE_CONT, tid, 0, 0);
		return;
	}
	if (sig == (SIGTRAP | 0x80)) {
		if (th->in_syscall)
			on_syscall_exit(tr, th, t);
		else
			ptrace(PTRACE_CONT, tid, 0, 0);
		return;
	}
	if (sig == SIGTRAP && event) {
		switch (event) {
		case PTRACE_EVENT_SECCOMP:
			on_seccomp(tr, th, t);
			return;
		case PTRACE_EVENT_FORK:
		case PTRACE_EVENT_VFORK:
		case PTRACE_EVENT_CLONE:
			on_new_task(tr, th, event, t);
			return;
		case PTRACE_EVENT_EXEC:
			on_exec(tr, th, t);
			return;
		default:
			ptrace(PTRACE_CONT, tid, 0, 0);
			return;
		}
	}
	on_signal(th, sig);
}

/* Runs in the child: stop so the tracer can set its options, install the
 * filter (no syscall of interest may run before the options are set, or
 * SECCOMP_RET_TRACE would fail it with ENOSYS), then exec. */
static void child_main(const struct mp_tracer_opts *o)
{
	int err;

	if (o->no_aslr)
		personality(ADDR_NO_RANDOMIZE);
	if (o->libprof_prefix)
		setenv("MRCACHE_PROF", o->libprof_prefix, 1);
	if (ptrace(PTRACE_TRACEME, 0, 0, 0)) {
		perror("mrc-prof: PTRACE_TRACEME");
		_exit(127);
	}
	raise(SIGSTOP);
	err = mp_seccomp_install(o->buffer_min);
	if (err) {
		fprintf(stderr, "mrc-prof: seccomp filter: %s\n", strerror(-err));
		_exit(127);
	}
	if (o->child_fn)
		_exit(o->child_fn(o->child_arg));
	execvp(o->argv[0], o->argv);
	fprintf(stderr, "mrc-prof: %s: %s\n", o->argv[0], strerror(errno));
	_exit(127);
}

static int start_child(struct tracer *tr)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0)
		child_main(tr->o);
	if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status)) {
		fprintf(stderr, "mrc-prof: the child did not stop for tracing\n");
		return -ECHILD;
	}
	if (ptrace(PTRACE_SETOPTIONS, pid, 0,
		   PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACESECCOMP | PTRACE_O_TRACECLONE |
		   PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACEEXEC |
		   PTRACE_O_EXITKILL)) {
		int err = -errno;

		fprintf(stderr, "mrc-prof: PTRACE_SETOPTIONS: %s\n", strerror(-err));
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		return err;
	}
	tr->root = pid;
	if (!thread_add(tr, pid, pid, 0))
		return -ENOMEM;
	if (tr->o->child_fn) {
		tr->started = 1;
		tr->t0 = now_ns();
	}
	ptrace(PTRACE_CONT, pid, 0, 0);
	return 0;
}

static uint64_t cpu_ns(int who)
{
	struct rusage ru;

	if (getrusage(who, &ru))
		return 0;
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ull +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ull;
}

int mp_tracer_run(const struct mp_tracer_opts *o, struct mp_trace *t)
{
	struct tracer tr = { .o = o, .t = t };
	/* Children's times count once reaped: the root by us, the others
	 * by their parents, so after the loop they cover the whole tree. */
	uint64_t children0 = cpu_ns(RUSAGE_CHILDREN), self0 = cpu_ns(RUSAGE_SELF);
	int err;

	t->overhead_ns = o->overhead_ns;
	t->buffer_min = o->buffer_min;
	t->unwind = (uint32_t)o->unwind;
	err = mp_maps_create(t, &tr.maps);
	if (!err)
		err = mp_callsites_create(t, tr.maps, o->depth, (enum mp_unwind_mode)o->unwind,
					  &tr.cs);
	if (!err)
		err = thread_table_grow(&tr);
	if (!err)
		err = start_child(&tr);
	while (!err && tr.n) {
		int status;
		pid_t tid = waitpid(-1, &status, __WALL);
		uint64_t now = now_ns();

		if (tid < 0) {
			if (errno == EINTR)
				continue;
			break;		/* ECHILD: nothing left */
		}
		if (WIFEXITED(status) || WIFSIGNALED(status))
			on_gone(&tr, tid, status, now);
		else if (WIFSTOPPED(status))
			on_stop(&tr, tid, status, now);
	}
	if (!err)
		err = tr.err;
	t->duration_ns = tr.started && tr.t_last > tr.t0 ? tr.t_last - tr.t0 : 0;
	t->program_cpu_ns = cpu_ns(RUSAGE_CHILDREN) - children0;
	t->tracer_cpu_ns = cpu_ns(RUSAGE_SELF) - self0;
	mp_callsites_destroy(tr.cs);
	mp_maps_destroy(tr.maps);
	free(tr.th);
	return err;
}

/* --- calibration --- */

#define CAL_CALLS 400
#define CAL_PERCENTILE 5

static int null_syscalls(void *arg)
{
	for (int i = 0; i < CAL_CALLS; i++)
		syscall(SYS_madvise, 0, 0, 0);	/* len 0: returns at once */
	return 0;
}

static uint64_t bare_null_ns(void)
{
	uint64_t v[64];

	for (int i = 0; i < 64; i++) {
		uint64_t t = now_ns();

		syscall(SYS_madvise, 0, 0, 0);
		v[i] = now_ns() - t;
	}
	mp_sort_u64(v, 64);
	return v[32];
}

uint64_t mp_tracer_calibrate(void)
{
	struct mp_tracer_opts o = { .child_fn = null_syscalls, .depth = 1 };
	struct mp_trace t;
	uint64_t *lat, least = 0, bare = bare_null_ns();
	size_t n = 0;

	mp_trace_init(&t);
	if (mp_tracer_run(&o, &t) == 0 && (lat = malloc(t.nev * sizeof(*lat) + 1))) {
		for (size_t i = 0; i < t.nev; i++)
			if (t.ev[i].kind == MP_MADVISE)
				lat[n++] = t.ev[i].lat_ns;
		/* The least overhead, not the typical one: subtracting the
		 * median (26 us under load) from every call left the faster
		 * half of the calls at 0 and mmap's p50 at 0.0 us.  A call's
		 * latency now keeps whatever its own stops cost above the
		 * least (an upper bound of the syscall's time); it is 0 only
		 * when its stops were cheaper than 95% of the calibration's. */
		mp_sort_u64(lat, n);
		least = mp_percentile_sorted(lat, n, CAL_PERCENTILE);
		free(lat);
	}
	mp_trace_free(&t);
	return least > bare ? least - bare : 0;
}
