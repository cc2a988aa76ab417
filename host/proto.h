/* SPDX-License-Identifier: MIT */
/*
 * What cusemud and a model host (cusemu-host) say to each other, and the
 * host's launcher too: fixed-size messages on SOCK_SEQPACKET sockets, so
 * that each side checks a message's type and exact size before it reads a
 * field, and every string is a NUL-terminated array of known length. The
 * daemon trusts nothing the host sends: the host runs a plugin's code.
 *
 * Sockets: the launcher's (daemon <-> launcher), a host's control socket
 * (its description, faults, wake-ups and logs; interrupts and new call
 * channels the other way) and its call channels, each with a shared memory
 * area (struct host_shm) that holds what a call moves. A call goes through
 * that memory alone: its state word passes it from one side to the other,
 * and a side that waits sleeps on the word (a futex); the channel's socket
 * tells the daemon the host is gone, and carries the late answer to a call
 * the daemon gave up on.
 */
#ifndef CUSEMU_HOST_PROTO_H
#define CUSEMU_HOST_PROTO_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "backtrace.h"
#include "call.h"
#include "cusemu/uaccess.h"

/* Bumped whenever a message or struct host_shm changes. */
#define HOST_PROTO_VERSION 4

/* Lengths of the strings of a description, NUL included. */
#define HOST_NAME_MAX 64
#define HOST_SUMMARY_MAX 256
#define HOST_DEFAULT_MAX 256
#define HOST_HELP_MAX 512
#define HOST_ROW_NAME_MAX 96
#define HOST_PATH_MAX 512
#define HOST_TEXT_MAX 1024
/* Counts a description may hold. */
#define HOST_MODELS_MAX 64
#define HOST_PARAMS_MAX 128
#define HOST_ROWS_MAX 4096
#define HOST_MODULES_MAX 256

enum host_msg_type {
	/* daemon -> launcher; fds: the host's control socket, the image */
	HOST_MSG_LAUNCH = 1,
	/* launcher -> daemon; fd: the host's pidfd */
	HOST_MSG_LAUNCHED,
	/* daemon -> launcher: reap a host that ended; -> its wait status */
	HOST_MSG_REAP,
	HOST_MSG_REAPED,
	/* daemon -> launcher: SIGKILL to a host it has not reaped, which the
	 * daemon cannot signal itself when it runs as another uid; no
	 * answer */
	HOST_MSG_KILL,

	/* host -> daemon, control socket, at start */
	HOST_MSG_HELLO = 16,
	HOST_MSG_REFUSED,	/* the plugin did not load: why */
	HOST_MSG_MODEL,
	HOST_MSG_PARAM,
	HOST_MSG_ROW,
	HOST_MSG_MODULE,	/* a loaded object, for backtraces */
	HOST_MSG_READY,		/* the description is complete */
	/* host -> daemon, control socket, any time */
	HOST_MSG_FAULT = 32,
	HOST_MSG_SAMPLE,	/* a stuck thread's backtrace, asked for */
	HOST_MSG_EXIT,		/* exit() with this status */
	HOST_MSG_WAKE_UP,
	HOST_MSG_EVENT,
	HOST_MSG_LOST,
	HOST_MSG_LOG,
	/* daemon -> host, control socket */
	HOST_MSG_CHANNEL = 48,	/* fds: the channel's socket, its memory */
	HOST_MSG_INTERRUPT,	/* the client of the channel's call gave up */
	HOST_MSG_SAMPLE_ASK,	/* the backtrace of the channel's thread */

	/* in a channel's memory (struct host_shm) */
	HOST_MSG_CALL = 64,	/* daemon -> host */
	HOST_MSG_DONE,		/* host -> daemon: the call's result; also on
				 * the socket, for a call given up on */
	HOST_MSG_ASK,		/* host -> daemon, during a call */
	HOST_MSG_ANSWER,	/* daemon -> host */
};

/*
 * A channel's state word (host_shm.state): whose turn it is. The daemon
 * posts CALL (from IDLE or DONE) and ANSWER (from ASK), and CLOSED when the
 * channel goes; the host takes CALL to RUNNING, then posts ASK or DONE, and
 * takes ANSWER back to RUNNING. A side that waits for its turn spins a
 * little, then sets its WAITS bit and sleeps on the word (FUTEX_WAIT); the
 * side that changes the state wakes it when the old value had the bit.
 */
enum host_chan_state {
	HOST_CHAN_IDLE,
	HOST_CHAN_CALL,
	HOST_CHAN_RUNNING,
	HOST_CHAN_ASK,
	HOST_CHAN_ANSWER,
	HOST_CHAN_DONE,
	HOST_CHAN_CLOSED,
	HOST_CHAN_STATES
};

#define HOST_CHAN_HOST_WAITS (1u << 31)
#define HOST_CHAN_DAEMON_WAITS (1u << 30)
#define HOST_CHAN_WAITS (HOST_CHAN_HOST_WAITS | HOST_CHAN_DAEMON_WAITS)
/* A state word's state, and the bit of a state in a set of them. */
#define HOST_CHAN_STATE(word) ((word) & ~HOST_CHAN_WAITS)
#define HOST_CHAN_BIT(state) (1u << (state))
/* Whether a state word read from a host's memory holds a state at all. */
#define HOST_CHAN_VALID(word) (HOST_CHAN_STATE(word) < HOST_CHAN_STATES)

/*
 * The slots of a model a call runs: each trampoline of the daemon's proxy
 * model says which, and the host runs that slot of the real model (a table
 * row found by the command, as cusemu_ioctl_lookup() finds it).
 */
enum host_slot {
	HOST_SLOT_PROBE,
	HOST_SLOT_REMOVE,
	HOST_SLOT_OPEN,
	HOST_SLOT_RELEASE,
	HOST_SLOT_READ,
	HOST_SLOT_WRITE,
	HOST_SLOT_POLL,
	HOST_SLOT_CONTROL,
	HOST_SLOT_SANDBOXED,
	HOST_SLOT_IOCTL,
	HOST_SLOT_UNLOCKED_IOCTL,
	HOST_SLOT_COMPAT_IOCTL,
	HOST_SLOT_IOCTL_NATIVE,
	HOST_SLOT_IOCTL_COMPAT,
	HOST_SLOT_IOCTL_FETCH,
	/* Not bits of a model's slots: the rows of its tables. */
	HOST_SLOT_NATIVE_ROW,
	HOST_SLOT_COMPAT_ROW,
	HOST_SLOT_NATIVE_FETCH,
	HOST_SLOT_COMPAT_FETCH,
	HOST_SLOTS
};

/* Which of the slots up to HOST_SLOT_IOCTL_FETCH a model sets. */
#define HOST_SLOT_BIT(slot) (1u << (slot))

/* What a host thread asks the daemon thread that waits for its call. */
enum host_ask {
	HOST_ASK_LOCK_KERNEL,
	HOST_ASK_UNLOCK_KERNEL,
	HOST_ASK_SLEEP_BEGIN,	/* let go of the dispatcher's locks */
	HOST_ASK_SLEEP_END,	/* take them back */
	HOST_ASK_IS_32BIT,	/* cusemu_process_is_32bit(pid) */
};

struct host_launch_msg {
	uint32_t type;
	uint32_t uid, gid;	/* whom the host runs as */
	uint32_t n_groups;
	uint32_t groups[64];
	uint64_t memory;	/* RLIMIT_AS, bytes */
	uint32_t seccomp;	/* enum cusemu_seccomp_mode */
	char label[HOST_NAME_MAX];	/* the plugin's file name, for ps */
};

struct host_launched_msg {
	uint32_t type;
	int32_t pid;		/* -errno when it could not start */
};

struct host_reap_msg {
	uint32_t type;
	int32_t pid;
	int32_t status;		/* REAPED: waitpid's; -1 when unknown */
};

struct host_hello_msg {
	uint32_t type;
	uint32_t version;	/* HOST_PROTO_VERSION */
	int32_t pid;
	uint32_t n_models;
};

struct host_text_msg {		/* REFUSED, LOG, LOST */
	uint32_t type;
	uint32_t level;		/* LOG: a GLogLevelFlags level */
	uint64_t dev;		/* LOST: the device */
	char text[HOST_TEXT_MAX];
};

struct host_model_msg {
	uint32_t type;
	uint32_t index;		/* in the plugin's list */
	char name[HOST_NAME_MAX];
	char summary[HOST_SUMMARY_MAX];
	char node_prefix[HOST_NAME_MAX];
	uint32_t has_name, has_summary, has_node_prefix;
	uint32_t slots;		/* HOST_SLOT_BIT()s of the slots set */
	uint32_t compat_ptr_ioctl;
	uint32_t n_params;
	uint32_t n_rows[2];	/* native, compat */
	uint32_t has_table[2];
};

struct host_param_msg {
	uint32_t type;
	uint32_t model;
	char key[HOST_NAME_MAX];
	uint32_t param_type;	/* enum cusemu_param_type */
	uint32_t has_default;
	char default_value[HOST_DEFAULT_MAX];
	char help[HOST_HELP_MAX];
	uint64_t min, max;
};

struct host_row_msg {
	uint32_t type;
	uint32_t model;
	uint32_t table;		/* 0 native, 1 compat */
	uint32_t cmd;
	char name[HOST_ROW_NAME_MAX];
	uint32_t payload;	/* enum cusemu_payload */
	uint32_t has_handler;
	uint32_t has_fetch;
	/* The handler's address in the plugin's file (its offset from where
	 * it was loaded), for a warning's file:line; 0 if elsewhere. */
	uint64_t handler_at;
};

struct host_module_msg {
	uint32_t type;
	uint32_t plugin;	/* the plugin's image itself */
	uint64_t base;
	char path[HOST_PATH_MAX];	/* "" for the host program */
};

struct host_fault_msg {		/* FAULT, SAMPLE */
	uint32_t type;
	int32_t signo, code;
	int32_t tid;
	int32_t channel;	/* the call's channel, -1 outside calls */
	uint32_t pad;
	uint64_t addr;
	/* A fault on the guard below the thread's stack: the stack, else
	 * 0, 0. */
	uint64_t stack_low, stack_high;
	struct cusemu_trace trace;
};

struct host_event_msg {		/* WAKE_UP, EVENT, EXIT */
	uint32_t type;
	int32_t status;		/* EXIT */
	uint64_t dev;
	char event[HOST_NAME_MAX];
};

struct host_channel_msg {	/* CHANNEL, INTERRUPT, SAMPLE_ASK */
	uint32_t type;
	int32_t channel;
	uint64_t seq;		/* INTERRUPT: the call */
};

struct host_call_msg {
	uint32_t type;
	uint32_t slot;		/* enum host_slot */
	uint64_t seq;
	uint64_t dev;		/* the daemon's ids of the instance and file */
	uint64_t file;
	uint32_t model;		/* PROBE: its index in the plugin */
	uint32_t cmd;
	uint64_t arg;
	int32_t pid;		/* the caller, 0 if none */
	int32_t flags;		/* the file's, O_NONBLOCK as of the request */
	uint64_t size;		/* READ, WRITE: bytes */
	/* How long the channel was idle in the daemon before this call, in
	 * ns (0 at first): the host spins for the next call only while
	 * calls come that close together. */
	uint64_t idle_ns;
};

struct host_done_msg {
	uint32_t type;
	/* How long the call ran in the host, in ns (at most 2^32 - 1): the
	 * daemon spins for the next one's answer only while calls are that
	 * short. */
	uint32_t ran_ns;
	uint64_t seq;
	int64_t result;
};

struct host_ask_msg {		/* ASK, ANSWER */
	uint32_t type;
	uint32_t what;		/* enum host_ask */
	uint64_t seq;
	int64_t value;		/* IS_32BIT: the pid; the answer */
};

struct host_range {
	uint64_t addr;
	uint32_t len, off;
};

/* The bytes of a read, a write, the parameters of a probe... */
#define HOST_DATA_MAX CUSEMU_USER_MAX_BYTES

/*
 * A channel's memory, mapped by both sides. The daemon writes the call's
 * snapshot, the host the results; the daemon copies what it reads back
 * before it checks it, since a host thread could change it meanwhile.
 */
struct host_shm {
	/* Whose turn: enum host_chan_state and the WAITS bits, a futex. */
	uint32_t state;
	/* Written by the daemon: it gave up on the call (its client did),
	 * so the host sends DONE on the socket too, and asks nothing more. */
	uint32_t abandoned;
	/* Written by the daemon with each call: few calls are in flight, so
	 * the host thread may spin a little for the next one. */
	uint32_t spin;
	uint32_t pad;
	struct host_call_msg call;	/* the daemon's, with CALL */
	struct host_done_msg done;	/* the host's, with DONE */
	struct host_ask_msg ask;	/* the host's with ASK, then the
					 * daemon's answer with ANSWER */
	/* The call: written by the daemon. */
	uint32_t cmd;
	uint32_t compat;
	uint64_t arg;
	uint32_t method;	/* enum cusemu_method */
	uint32_t phase;		/* enum cusemu_phase */
	char step[HOST_ROW_NAME_MAX];
	uint32_t lock_depth;	/* of the big lock */
	uint32_t locks_held;	/* dispatcher locks: a sleep lets go */
	uint32_t in_count, out_count;
	uint32_t in_bytes, out_bytes;
	uint32_t in_avail, out_avail;
	/* Results: written by the host. */
	uint32_t out_used;
	int32_t error;
	uint32_t pending;
	uint32_t methods_set;	/* PROBE: cusemu_device_set_methods() */
	uint32_t methods;
	uint32_t data_len;	/* of data: a read's bytes, a message */
	char default_name[HOST_NAME_MAX + 8];	/* PROBE, "" if not set */
	/* The fetch step named memory to write (an _IOR's payload, say). */
	uint32_t named_out;
	/* The channel's thread, for its time on a CPU: its own. */
	int32_t tid;
	/* Odd while the host thread sleeps: for the soft-lockup watch. */
	uint64_t sleeps;
	struct host_range in[CUSEMU_USER_MAX_RANGES];
	struct host_range out[CUSEMU_USER_MAX_RANGES];
	uint8_t in_data[CUSEMU_USER_MAX_BYTES];
	uint8_t out_data[CUSEMU_USER_MAX_BYTES];
	/* A read's or write's bytes, a probe's name, kernel model, its
	 * version in decimal and parameters ("name\0kernel\0version\0key\0value\0"),
	 * control's words and answer, a message for the user. */
	char data[HOST_DATA_MAX];
};

/*
 * A message and up to two descriptors (SCM_RIGHTS), either way; received
 * ones are close-on-exec, and ones beyond n_fds closed. recv: its length,
 * or -1.
 */
ssize_t host_recv_fds(int sock, void *buf, size_t len, int *fds, int n_fds,
		      int flags);
bool host_send_fds(int sock, const void *buf, size_t len, const int *fds,
		   int n_fds);

/*
 * How a waiter's spins went: one that ends in a sleep makes the next waits
 * skip theirs, twice as many after each such spin, up to 64. Spins pay on a
 * machine with CPUs to spare, and take from a busy one what the other
 * threads need, the other side's among them.
 */
struct host_spin {
	uint32_t skip, backoff;
};

/*
 * A channel's state word. post: the new state in, and the sleeping side
 * woken; the old word out. move: the same, only from the word `from` (false
 * if it is no longer that). wait: until its state is one of `want` (a set
 * of HOST_CHAN_BIT()s), spinning for at most spin_ns while it is one of
 * `spin_in` (and `spin`, if not NULL, lets it), then asleep with the
 * `mine` bit set, for at most ms milliseconds (-1: no limit); the word as
 * last read, which may be in none of `want` when the time ran out, a
 * signal came, or the word changed to another state: the caller looks, and
 * waits again.
 */
uint32_t host_chan_post(uint32_t *word, uint32_t state);
bool host_chan_move(uint32_t *word, uint32_t from, uint32_t state);
/* Wake a thread asleep on the word, whatever its state: it looks again. */
void host_chan_wake(uint32_t *word);
/* The host takes its turn (CALL or ANSWER to RUNNING): the daemon, if it
 * sleeps, sleeps on, as its own turn has not come. */
bool host_chan_take(uint32_t *word, uint32_t from, uint32_t state);
/* CLOCK_MONOTONIC in ns. */
uint64_t host_now_ns(void);
uint32_t host_chan_wait(uint32_t *word, uint32_t want, uint32_t spin_in,
			uint64_t spin_ns, uint32_t mine, int ms,
			struct host_spin *spin);

/* A call's ranges into shared memory, and back. */
void host_ranges_put(struct host_range *to,
		     const struct cusemu_user_ranges *from);
void host_ranges_get(struct cusemu_user_ranges *to,
		     const struct host_range *from, unsigned int count);

#endif
