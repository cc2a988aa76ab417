/* SPDX-License-Identifier: MIT */
/*
 * A fault in the model host: the handler, on an alternate stack, writes
 * one record (the signal, the address, the call's channel, the stack when
 * the fault hit its guard, and a backtrace taken with libgcc's unwinder,
 * loaded beforehand) to the daemon and ends the process. It calls nothing
 * that allocates or locks: the fault may have come from inside malloc with
 * its arena lock held. The daemon symbolizes the frames and writes the
 * report.
 */
#define G_LOG_DOMAIN "cusemu-host"

#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "backtrace.h"
#include "host.h"

#define ALT_STACK_SIZE (256 * 1024)
/* The daemon asks a stuck thread for its backtrace with this signal. */
#define SAMPLE_SIGNAL (SIGRTMIN + 1)

/*
 * All three read by the signal handler, which is given no pointer: the
 * channel the thread serves, its stack (for a fault on the guard page
 * below it), and whether a thread faulted already (one report a process).
 */
static __thread int my_channel = -1;
static __thread struct cusemu_stack my_stack;
static int faulted;

static void on_signal(int signo, siginfo_t *si, void *context)
{
	struct host_fault_msg m;

	memset(&m, 0, sizeof(m));
	m.type = signo == SAMPLE_SIGNAL ? HOST_MSG_SAMPLE : HOST_MSG_FAULT;
	m.signo = signo;
	m.code = si->si_code;
	m.addr = (uintptr_t)si->si_addr;
	m.tid = (int32_t)syscall(SYS_gettid);
	m.channel = my_channel;
	if (cusemu_stack_overflowed(&my_stack, signo, m.addr)) {
		m.stack_low = my_stack.low;
		m.stack_high = my_stack.high;
	}
	cusemu_trace_from(&m.trace, cusemu_fault_ip(context));
	if (signo == SIGSYS)	/* the call the filter refused */
		m.addr = (uint64_t)si->si_syscall;
	if (signo == SAMPLE_SIGNAL) {
		send(host_control, &m, sizeof(m), MSG_NOSIGNAL);
		return;
	}
	/* One record: a second thread's fault waits for the first's exit. */
	if (__atomic_exchange_n(&faulted, 1, __ATOMIC_SEQ_CST))
		for (;;)
			pause();
	send(host_control, &m, sizeof(m), MSG_NOSIGNAL);
	_exit(128 + signo);
}

void host_fault_thread_init(void)
{
	stack_t ss = { .ss_size = ALT_STACK_SIZE };

	cusemu_stack_find(&my_stack);
	ss.ss_sp = mmap(NULL, ALT_STACK_SIZE, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK,
			-1, 0);
	if (ss.ss_sp != MAP_FAILED)
		sigaltstack(&ss, NULL);
}

void host_fault_init(void)
{
	/* SIGTRAP: glib's g_error() ends a program with a breakpoint. */
	static const int faults[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL,
				      SIGABRT, SIGSYS, SIGTRAP };
	struct sigaction sa = { .sa_sigaction = on_signal,
				.sa_flags = SA_SIGINFO | SA_ONSTACK };

	cusemu_trace_warm_up();
	sigfillset(&sa.sa_mask);
	for (size_t i = 0; i < G_N_ELEMENTS(faults); i++)
		sigaction(faults[i], &sa, NULL);
	sa.sa_flags |= SA_RESTART;
	sigaction(SAMPLE_SIGNAL, &sa, NULL);
	host_fault_thread_init();
}

void host_fault_set_channel(int channel)
{
	my_channel = channel;
}

void host_fault_sample(pid_t tid, int channel)
{
	(void)channel;
	syscall(SYS_tgkill, getpid(), tid, SAMPLE_SIGNAL);
}
