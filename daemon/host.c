/* SPDX-License-Identifier: MIT */
/*
 * The daemon's side of a model host (host.h): the launcher, each host's
 * description turned into proxy models, the call channels the proxies'
 * trampolines forward calls on, and a host's end: its fault record (or its
 * exit status) as one oops report, its devices fenced, the daemon tainted.
 * The host is untrusted: every message is checked by type and size, every
 * string and count of its description validated, and what a call leaves in
 * shared memory copied before it is checked.
 */
#define G_LOG_DOMAIN "cusemu-host"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "call.h"
#include "cusemu/sched.h"
#include "device.h"
#include "handler.h"
#include "host.h"
#include "lock.h"
#include "oops.h"
#include "pool.h"
#include "proc.h"
#include "proto.h"
#include "ratelimit.h"
#include "request.h"
#include "self.h"
#include "stats.h"

#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

/* How long a host may take to describe its plugin, and to answer a call
 * made on the main thread (probe, control, sandboxed, remove). */
#define DESCRIBE_MS 10000
#define MAIN_CALL_MS 5000
/*
 * After a client gave up, how long its call's host has to answer: then the
 * daemon answers EINTR itself, so that a killed caller is gone within a
 * second whatever the model does.
 */
#define INTERRUPT_MS 800
/* How often a waiting thread looks at its client and its host. */
#define TICK_MS 50
/* How long a stuck thread has to send its backtrace. */
#define SAMPLE_MS 500
/* Distinct event names a host may count. */
#define EVENTS_MAX 64

struct host;

/* One socket pair and shared memory, for one call at a time. */
struct channel {
	struct host *host;
	int id;
	int sock;
	struct host_shm *shm;
	uint64_t seq;
	/* The call in flight, for a fault's or a lockup's report; under
	 * host->lock. */
	bool busy, abandoned;
	struct cusemu_device *dev;
	struct cusemu_oops_call call;
	gint64 since;			/* its last sign of life */
	uint64_t seen_sleeps;
	/* Its thread's time on a CPU at cpu_since (the reader's first look
	 * since then), to tell a spin from a block; cpu_since 0: not read. */
	int64_t cpu_at;
	gint64 cpu_since;
	uint64_t hung_seq;		/* the call reported hung, or 0 */
	/* How long the last call ran in the host, as it says: a hint of
	 * its thread's only. */
	uint32_t ran_ns;
	uint64_t took_ns;		/* when its last result was taken */
	struct host_spin spin;		/* for its calls' results */
};

/*
 * A host is shared: its set's pointer to the host new devices go to, each
 * device of it, and its reader thread hold a reference each; the last one
 * frees it, and everything of it goes then (its channels, its reader,
 * joined). Its set outlives it: a host holds a reference on its set.
 */
struct host {
	gint ref;
	struct cusemu_host_models *set;
	pid_t pid;
	int pidfd;
	int control;
	GMutex lock;		/* guards what follows */
	GCond cond;		/* pins gone, or done */
	GPtrArray *channels;	/* struct channel, by id; NULL when freed */
	GPtrArray *idle;
	GHashTable *devices;	/* struct cusemu_device * set */
	/*
	 * Devices the reader uses outside the lock (an event, a report): a
	 * device that leaves the host waits until none is, so that it is
	 * never freed under the reader.
	 */
	unsigned int pins;
	GHashTable *events;	/* names counted */
	GThread *reader;
	gint dead;		/* no call goes to it any more */
	bool closing;		/* we ended it: no report */
	char *kill_report;	/* the report that made us kill it */
	struct host_fault_msg fault;
	bool faulted;
	int exit_status;	/* from exit(), -1 if none */
	bool sample_ready;
	struct host_fault_msg sample;
	GArray *modules;	/* struct host_module_msg */
	/* Its log lines: a model in a loop must not fill the daemon's log. */
	struct cusemu_ratelimit log_limit;
	bool lockup_reported;
	bool stop_said;		/* it is stopped, and we said so */
	bool ended;		/* its end was handled: channels freed */
	bool ending;		/* the devices to fence are taken */
	bool done;		/* its end reported, its devices fenced */
};

/* One proxy model: the struct the rest of the daemon uses, first. */
struct proxy {
	struct cusemu_device_model m;
	struct cusemu_host_models *set;
	unsigned int index;
	struct cusemu_param *params;
	struct cusemu_ioctl *tables[2];
	/* Each row's handler in the plugin's file (host_row_msg). */
	uint64_t *handler_at[2];
};

/*
 * The loader holds a reference until it lets go of the file
 * (cusemu_host_models_free()), and each host of the set one: its reports
 * name the plugin and read its symbols from the image.
 */
struct cusemu_host_models {
	gint ref;
	gint users;		/* devices made from its proxies */
	char *origin;
	char *label;		/* its file name */
	int image;		/* the sealed copy: the set's own descriptor */
	unsigned int n;
	struct proxy *proxies;
	const struct cusemu_device_model **list;
	GMutex lock;		/* guards host */
	struct host *host;	/* the one new devices go to, or NULL */
};

/* The host set: one per process, as the launcher is, which is forked
 * once, before the sandbox. */
static struct {
	const char *program;	/* cusemu-host; NULL: the one installed */
	GMutex lock;		/* guards the launcher's socket and hosts */
	int launcher;
	bool configured, sealed;
	struct cusemu_host_settings settings;
	GPtrArray *hosts;	/* every host alive */
	GThread *stopper;
	GCond stop_cond;
	bool stopped;
	gint forwarding;	/* calls forwarded now: few, host threads may spin */
} hosts = { .launcher = -1 };

/* ---- messages */

/* Wait until fd is readable, up to ms: false on time out. */
static bool readable(int fd, int ms)
{
	struct pollfd p = { fd, POLLIN, 0 };
	int r;

	do
		r = poll(&p, 1, ms);
	while (r < 0 && errno == EINTR);
	return r > 0;
}

/* A string the host sent: NUL-terminated within its array. */
static bool terminated(const char *s, size_t size)
{
	return memchr(s, '\0', size) != NULL;
}

/* ---- the launcher */

static bool start_launcher(GError **error)
{
	int sv[2];
	pid_t pid;

	if (hosts.launcher >= 0)
		return true;
	if (hosts.sealed) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_PERM,
			    "no model host launcher: none was started before "
			    "the sandbox");
		return false;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
			    "a socket for the model host launcher: %s",
			    g_strerror(errno));
		return false;
	}
	pid = fork();
	if (pid == 0) {
		/* Async-signal-safe until the exec: threads may exist. */
		sigset_t none;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (dup2(sv[1], 3) == 3) {
			close_range(4, ~0u, 0);
			execl(hosts.program, "cusemu-host", "--launcher",
			      "3", (char *)NULL);
		}
		_exit(127);
	}
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
			    "cannot start the model host launcher: %s",
			    g_strerror(errno));
		return false;
	}
	hosts.launcher = sv[0];
	return true;
}

void cusemu_hosts_seal(void)
{
	g_mutex_lock(&hosts.lock);
	hosts.sealed = true;
	g_mutex_unlock(&hosts.lock);
}

/* The launcher's wait status of a host that ended, -1 if unknown. */
static int reap(pid_t pid)
{
	struct host_reap_msg m = { .type = HOST_MSG_REAP, .pid = pid,
				   .status = -1 };
	int fd;

	g_mutex_lock(&hosts.lock);
	if (hosts.launcher < 0 || !host_send_fds(hosts.launcher, &m, sizeof(m),
					    NULL, 0) ||
	    !readable(hosts.launcher, 2000) ||
	    host_recv_fds(hosts.launcher, &m, sizeof(m), &fd, 1, 0) != sizeof(m) ||
	    m.type != HOST_MSG_REAPED)
		m.status = -1;
	g_mutex_unlock(&hosts.lock);
	return m.status;
}

/*
 * The path from directory from to file to, both absolute: "../libexec/x"
 * from /usr/sbin to /usr/libexec/x.
 */
static char *relative_path(const char *from, const char *to)
{
	g_auto(GStrv) f = g_strsplit(from, "/", -1);
	g_auto(GStrv) t = g_strsplit(to, "/", -1);
	GString *rel = g_string_new(NULL);
	guint i = 0;

	while (f[i] && t[i] && t[i + 1] && !strcmp(f[i], t[i]))
		i++;
	for (guint j = i; f[j]; j++)
		if (*f[j])
			g_string_append(rel, "../");
	for (guint j = i; t[j]; j++)
		if (*t[j])
			g_string_append_printf(rel, "%s%s", t[j],
					       t[j + 1] ? "/" : "");
	return g_string_free(rel, FALSE);
}

/*
 * The model host beside this program as meson installs the two
 * (libexecdir seen from sbindir), so that a tree installed anywhere (a
 * package, meson install --destdir) runs its own host. Only a program of
 * the build tree without such a host beside it runs the build tree's.
 */
static const char *host_program(void)
{
	static char *program;
	g_autofree char *exe = NULL, *dir = NULL, *rel = NULL, *beside = NULL;
	char *real;

	if (program)
		return program;
	exe = g_file_read_link("/proc/self/exe", NULL);
	if (!exe)
		return program = g_strdup(CUSEMU_HOST_PROGRAM);
	dir = g_path_get_dirname(exe);
	rel = relative_path(CUSEMU_SBINDIR, CUSEMU_HOST_PROGRAM);
	beside = g_build_filename(dir, rel, NULL);
	if (g_str_has_prefix(exe, CUSEMU_BUILD_ROOT "/") &&
	    access(beside, X_OK))
		return program = g_strdup(CUSEMU_HOST_BUILT);
	/* Without the ../ for ps and the reports. */
	real = realpath(beside, NULL);
	program = g_strdup(real ? real : beside);
	free(real);
	return program;
}

static int launch(const char *label, int image, int control, pid_t *pid,
		  GError **error)
{
	struct host_launch_msg m = { .type = HOST_MSG_LAUNCH };
	struct host_launched_msg r;
	const struct cusemu_host_settings *s = &hosts.settings;
	int fds[2] = { control, image }, pidfd = -1;

	m.uid = hosts.configured ? s->uid : geteuid();
	m.gid = hosts.configured ? s->gid : getegid();
	m.n_groups = hosts.configured ? MIN(s->n_groups, 64) : 0;
	for (unsigned int i = 0; i < m.n_groups; i++)
		m.groups[i] = s->groups[i];
	m.memory = hosts.configured ? s->memory : 0;
	m.seccomp = hosts.configured ? s->seccomp : 0;
	g_strlcpy(m.label, label, sizeof(m.label));
	if (!hosts.program)
		hosts.program = host_program();
	g_mutex_lock(&hosts.lock);
	if (!start_launcher(error)) {
		g_mutex_unlock(&hosts.lock);
		return -1;
	}
	if (!host_send_fds(hosts.launcher, &m, sizeof(m), fds, 2) ||
	    !readable(hosts.launcher, DESCRIBE_MS) ||
	    host_recv_fds(hosts.launcher, &r, sizeof(r), &pidfd, 1, 0) !=
		    sizeof(r) ||
	    r.type != HOST_MSG_LAUNCHED || r.pid <= 0 || pidfd < 0) {
		g_mutex_unlock(&hosts.lock);
		if (pidfd >= 0)
			close(pidfd);
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
			    "the model host launcher did not start a host");
		return -1;
	}
	g_mutex_unlock(&hosts.lock);
	*pid = r.pid;
	return pidfd;
}

/* ---- proxies: the trampolines and the models built from a description */

static struct proxy *proxy_of(const struct cusemu_device_model *m)
{
	return (struct proxy *)m;
}

/* What a forwarded call needs and gives back. */
struct fwd {
	enum host_slot slot;
	enum cusemu_op op;
	struct cusemu_device *dev;
	struct cusemu_file *file;
	struct cusemu_call *call;	/* an ioctl's */
	unsigned int cmd;
	unsigned long arg;
	pid_t pid;
	const void *data;		/* into shm->data */
	size_t len;
	void *out;			/* read: the bytes */
	size_t out_size;
	char **why;			/* probe, sandboxed */
	GString *text;			/* control */
	bool main_thread;		/* a deadline of MAIN_CALL_MS */
};

static long forward(struct fwd *f);

static struct host *host_of(const struct cusemu_device *dev)
{
	return dev->priv;
}

static long fwd_ioctl(enum host_slot slot, struct cusemu_device *dev,
		      struct cusemu_file *file, unsigned int cmd,
		      unsigned long arg)
{
	struct cusemu_call *call = cusemu_call_current();
	struct fwd f = { .slot = slot, .op = CUSEMU_OP_IOCTL, .dev = dev,
			 .file = file, .call = call, .cmd = cmd, .arg = arg,
			 .pid = call ? call->tid : 0 };

	return forward(&f);
}

#define TRAMPOLINE(fn, slot)                                              \
	static long fn(struct cusemu_device *dev, struct cusemu_file *file, \
		       unsigned int cmd, unsigned long arg)               \
	{                                                                 \
		return fwd_ioctl(slot, dev, file, cmd, arg);              \
	}
#define FETCH_TRAMPOLINE(fn, slot)                                        \
	static int fn(struct cusemu_device *dev, struct cusemu_file *file, \
		      unsigned int cmd, unsigned long arg)                \
	{                                                                 \
		return (int)fwd_ioctl(slot, dev, file, cmd, arg);         \
	}

TRAMPOLINE(tr_ioctl, HOST_SLOT_IOCTL)
TRAMPOLINE(tr_unlocked_ioctl, HOST_SLOT_UNLOCKED_IOCTL)
TRAMPOLINE(tr_compat_ioctl, HOST_SLOT_COMPAT_IOCTL)
TRAMPOLINE(tr_ioctl_native, HOST_SLOT_IOCTL_NATIVE)
TRAMPOLINE(tr_ioctl_compat, HOST_SLOT_IOCTL_COMPAT)
TRAMPOLINE(tr_native_row, HOST_SLOT_NATIVE_ROW)
TRAMPOLINE(tr_compat_row, HOST_SLOT_COMPAT_ROW)
FETCH_TRAMPOLINE(tr_ioctl_fetch, HOST_SLOT_IOCTL_FETCH)
FETCH_TRAMPOLINE(tr_native_fetch, HOST_SLOT_NATIVE_FETCH)
FETCH_TRAMPOLINE(tr_compat_fetch, HOST_SLOT_COMPAT_FETCH)

static int tr_open(struct cusemu_device *dev, struct cusemu_file *file)
{
	struct fwd f = { .slot = HOST_SLOT_OPEN, .op = CUSEMU_OP_OPEN,
			 .dev = dev, .file = file, .pid = file->opener };

	return (int)forward(&f);
}

static void tr_release(struct cusemu_device *dev, struct cusemu_file *file)
{
	struct fwd f = { .slot = HOST_SLOT_RELEASE, .op = CUSEMU_OP_RELEASE,
			 .dev = dev, .file = file };

	forward(&f);
}

static ssize_t tr_read(struct cusemu_device *dev, struct cusemu_file *file,
		       char *buf, size_t size)
{
	struct fwd f = { .slot = HOST_SLOT_READ, .op = CUSEMU_OP_READ,
			 .dev = dev, .file = file, .out = buf,
			 .out_size = MIN(size, HOST_DATA_MAX) };

	return forward(&f);
}

static ssize_t tr_write(struct cusemu_device *dev, struct cusemu_file *file,
			const char *buf, size_t size)
{
	struct fwd f = { .slot = HOST_SLOT_WRITE, .op = CUSEMU_OP_WRITE,
			 .dev = dev, .file = file, .data = buf,
			 .len = MIN(size, HOST_DATA_MAX) };

	return forward(&f);
}

static unsigned int tr_poll(struct cusemu_device *dev,
			    struct cusemu_file *file)
{
	struct fwd f = { .slot = HOST_SLOT_POLL, .op = CUSEMU_OP_POLL,
			 .dev = dev, .file = file };
	long r = forward(&f);

	return r < 0 ? POLLERR | POLLIN | POLLOUT : (unsigned int)r;
}

/* Words joined by NULs. */
static GString *joined(char *const *words)
{
	GString *s = g_string_new(NULL);

	for (char *const *w = words; w && *w; w++)
		g_string_append_len(s, *w, (gssize)strlen(*w) + 1);
	return s;
}

static int tr_control(struct cusemu_device *dev, char **argv, GString *out)
{
	g_autoptr(GString) words = joined(argv);
	struct fwd f = { .slot = HOST_SLOT_CONTROL, .op = CUSEMU_OP_CONTROL,
			 .dev = dev, .data = words->str, .len = words->len,
			 .text = out, .main_thread = true };

	return (int)forward(&f);
}

static int tr_sandboxed(struct cusemu_device *dev, char **why)
{
	struct fwd f = { .slot = HOST_SLOT_SANDBOXED,
			 .op = CUSEMU_OP_SANDBOXED, .dev = dev, .why = why,
			 .main_thread = true };

	return (int)forward(&f);
}

static struct host *host_for(struct cusemu_host_models *set,
			     struct cusemu_device *dev, GError **error);
static void host_put(struct host *h, struct cusemu_device *dev);

static int tr_probe(struct cusemu_device *dev, char **why)
{
	struct cusemu_instance *inst = cusemu_instance(dev);
	g_autoptr(GString) params = g_string_new(NULL);
	g_autoptr(GError) error = NULL;
	struct proxy *p = proxy_of(dev->model);
	struct host *h = host_for(p->set, dev, &error);
	struct fwd f = { .slot = HOST_SLOT_PROBE, .op = CUSEMU_OP_PROBE,
			 .dev = dev, .why = why, .main_thread = true };
	GHashTableIter it;
	gpointer key, value;
	long ret;

	if (!h) {
		*why = g_strdup(error->message);
		return -EIO;
	}
	/* The device holds h from here; host_put lets go of it. */
	dev->priv = h;
	/* Nothing of its model runs in the daemon: a fenced one can go. */
	inst->made.hosted = true;
	g_string_append_len(params, dev->name, (gssize)strlen(dev->name) + 1);
	g_string_append_len(params, cusemu_device_kernel_model(dev),
			    (gssize)strlen(cusemu_device_kernel_model(dev)) +
				    1);
	g_string_append_printf(params, "%u",
			       cusemu_device_kernel_version(dev));
	g_string_append_c(params, '\0');
	g_hash_table_iter_init(&it, inst->made.params);
	while (g_hash_table_iter_next(&it, &key, &value)) {
		g_string_append_len(params, key, (gssize)strlen(key) + 1);
		g_string_append_len(params, value, (gssize)strlen(value) + 1);
	}
	f.data = params->str;
	f.len = params->len;
	ret = forward(&f);
	if (ret < 0) {
		dev->priv = NULL;
		host_put(h, dev);
	}
	return (int)ret;
}

static void tr_remove(struct cusemu_device *dev)
{
	struct host *h = host_of(dev);
	struct fwd f = { .slot = HOST_SLOT_REMOVE, .op = CUSEMU_OP_REMOVE,
			 .dev = dev, .main_thread = true };

	/* A fenced model's code is not run again, in a host either. */
	if (!cusemu_device_fenced(dev))
		forward(&f);
	dev->priv = NULL;
	host_put(h, dev);
}

bool cusemu_host_model(const struct cusemu_device_model *m)
{
	return m && m->probe == tr_probe;
}

/* ---- descriptions */

static gboolean bad(GError **error, const char *format, ...)
	G_GNUC_PRINTF(2, 3);

static gboolean bad(GError **error, const char *format, ...)
{
	g_autofree char *why = NULL;
	va_list args;

	va_start(args, format);
	why = g_strdup_vprintf(format, args);
	va_end(args);
	g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_PERM,
		    "its model host %s", why);
	return FALSE;
}

/* One message of the description, its type and size checked. */
static ssize_t next_message(struct host *h, void *buf, size_t size,
			    gint64 deadline, GError **error)
{
	gint64 left = (deadline - g_get_monotonic_time()) / 1000;
	int fd;
	ssize_t n;

	if (left <= 0 || !readable(h->control, (int)left)) {
		bad(error, "did not describe the plugin's models within %d s",
		    DESCRIBE_MS / 1000);
		return -1;
	}
	n = host_recv_fds(h->control, buf, size, &fd, 1, 0);
	if (fd >= 0)
		close(fd);
	if (n <= 0) {
		bad(error, "ended while it loaded the plugin (its "
			   "constructors crashed or exited?)");
		return -1;
	}
	return n;
}

static void proxy_slots(struct proxy *p, unsigned int slots)
{
	struct cusemu_device_model *m = &p->m;

	/* Always: the host keeps a copy of each device and file. */
	m->probe = tr_probe;
	m->remove = tr_remove;
	m->open = tr_open;
	m->release = tr_release;
#define SLOT(bit, field, fn) m->field = slots & HOST_SLOT_BIT(bit) ? fn : NULL
	SLOT(HOST_SLOT_READ, read, tr_read);
	SLOT(HOST_SLOT_WRITE, write, tr_write);
	SLOT(HOST_SLOT_POLL, poll, tr_poll);
	SLOT(HOST_SLOT_CONTROL, control, tr_control);
	SLOT(HOST_SLOT_SANDBOXED, sandboxed, tr_sandboxed);
	SLOT(HOST_SLOT_IOCTL, ioctl, tr_ioctl);
	SLOT(HOST_SLOT_UNLOCKED_IOCTL, unlocked_ioctl, tr_unlocked_ioctl);
	SLOT(HOST_SLOT_COMPAT_IOCTL, compat_ioctl, tr_compat_ioctl);
	SLOT(HOST_SLOT_IOCTL_NATIVE, ioctl_native, tr_ioctl_native);
	SLOT(HOST_SLOT_IOCTL_COMPAT, ioctl_compat, tr_ioctl_compat);
	SLOT(HOST_SLOT_IOCTL_FETCH, ioctl_fetch, tr_ioctl_fetch);
#undef SLOT
}

static gboolean take_model(struct cusemu_host_models *set,
			   const struct host_model_msg *mm, GError **error)
{
	struct proxy *p;

	if (mm->index >= set->n || set->proxies[mm->index].m.name ||
	    !terminated(mm->name, sizeof(mm->name)) ||
	    !terminated(mm->summary, sizeof(mm->summary)) ||
	    !terminated(mm->node_prefix, sizeof(mm->node_prefix)) ||
	    mm->n_params > HOST_PARAMS_MAX ||
	    mm->n_rows[0] > HOST_ROWS_MAX || mm->n_rows[1] > HOST_ROWS_MAX)
		return bad(error, "sent a malformed model");
	p = &set->proxies[mm->index];
	p->set = set;
	p->index = mm->index;
	p->m.name = g_strdup(mm->has_name ? mm->name : "");
	p->m.summary = mm->has_summary ? g_strdup(mm->summary) : NULL;
	p->m.node_prefix = mm->has_node_prefix ? g_strdup(mm->node_prefix)
					       : NULL;
	p->m.compat_ptr_ioctl = mm->compat_ptr_ioctl != 0;
	proxy_slots(p, mm->slots);
	p->params = g_new0(struct cusemu_param, mm->n_params + 1);
	p->m.params = p->params;
	for (int t = 0; t < 2; t++) {
		if (!mm->has_table[t])
			continue;
		p->tables[t] = g_new0(struct cusemu_ioctl, mm->n_rows[t] + 1);
		p->handler_at[t] = g_new0(uint64_t, mm->n_rows[t] + 1);
	}
	p->m.native_table = p->tables[0];
	p->m.compat_table = p->tables[1];
	return TRUE;
}

static unsigned int filled_params(const struct proxy *p)
{
	unsigned int n = 0;

	while (p->params && p->params[n].key)
		n++;
	return n;
}

static unsigned int filled_rows(const struct cusemu_ioctl *t)
{
	unsigned int n = 0;

	while (t && t[n].name)
		n++;
	return n;
}

static gboolean take_param(struct cusemu_host_models *set,
			   const struct host_param_msg *pm,
			   const unsigned int *wanted, GError **error)
{
	struct proxy *p;
	struct cusemu_param *cp;
	unsigned int at;

	if (pm->model >= set->n || !set->proxies[pm->model].m.name ||
	    !terminated(pm->key, sizeof(pm->key)) || !pm->key[0] ||
	    !terminated(pm->default_value, sizeof(pm->default_value)) ||
	    !terminated(pm->help, sizeof(pm->help)) ||
	    pm->param_type > CUSEMU_PARAM_FILE)
		return bad(error, "sent a malformed key");
	p = &set->proxies[pm->model];
	at = filled_params(p);
	if (at >= wanted[pm->model])
		return bad(error, "sent more keys than it announced");
	cp = &p->params[at];
	cp->key = g_strdup(pm->key);
	cp->type = pm->param_type;
	cp->default_value = pm->has_default ? g_strdup(pm->default_value)
					    : NULL;
	cp->help = g_strdup(pm->help);
	cp->min = pm->min;
	cp->max = pm->max;
	return TRUE;
}

static gboolean take_row(struct cusemu_host_models *set,
			 const struct host_row_msg *rm,
			 const unsigned int (*wanted)[2], GError **error)
{
	struct proxy *p;
	struct cusemu_ioctl *row;
	unsigned int at;
	bool compat = rm->table == 1;

	if (rm->model >= set->n || !set->proxies[rm->model].m.name ||
	    rm->table > 1 || !terminated(rm->name, sizeof(rm->name)) ||
	    !rm->name[0] || rm->payload > CUSEMU_PAYLOAD_USER)
		return bad(error, "sent a malformed table row");
	p = &set->proxies[rm->model];
	if (!p->tables[rm->table])
		return bad(error, "sent a row of a table it has not");
	at = filled_rows(p->tables[rm->table]);
	if (at >= wanted[rm->model][rm->table])
		return bad(error, "sent more rows than it announced");
	if (!compat && !rm->has_handler)
		return bad(error, "sent a native row without a handler (%s)",
			   rm->name);
	row = &p->tables[rm->table][at];
	row->cmd = rm->cmd;
	row->name = g_strdup(rm->name);
	row->payload = rm->payload;
	row->handler = !rm->has_handler ? NULL
		       : compat	       ? tr_compat_row
					       : tr_native_row;
	row->fetch = !rm->has_fetch ? NULL
		     : compat	     ? tr_compat_fetch
				     : tr_native_fetch;
	p->handler_at[rm->table][at] = rm->handler_at;
	return TRUE;
}

/* Where a proxy row's handler is in the plugin (handler.h). */
static bool locate_row(const struct cusemu_device_model *m,
		       const struct cusemu_ioctl *row, GString *out)
{
	const struct proxy *p = proxy_of(m);
	struct cusemu_oops_module mod = { .fd = -1 };

	if (!cusemu_host_model(m))
		return false;
	if (!row) {
		/* Its methods' addresses stay in the host. */
		g_string_append_printf(out, " a method of %s", p->set->origin);
		return true;
	}
	for (int t = 0; t < 2; t++) {
		uintptr_t from = (uintptr_t)p->tables[t];
		size_t at = ((uintptr_t)row - from) / sizeof(*row);

		if (!from || (uintptr_t)row < from ||
		    at >= filled_rows(p->tables[t]))
			continue;
		if (!p->handler_at[t][at])
			break;
		mod.name = p->set->label;
		mod.path = p->set->origin;
		mod.fd = p->set->image;
		cusemu_oops_append_remote_where(out, &mod, 1,
						p->handler_at[t][at]);
		return true;
	}
	g_string_append(out, " (not in the plugin's file)");
	return true;
}

static gboolean take_module(struct host *h, struct host_module_msg *mm,
			    GError **error)
{
	if (!terminated(mm->path, sizeof(mm->path)) ||
	    (mm->path[0] && mm->path[0] != '/'))
		return bad(error, "sent a malformed module");
	if (h->modules->len >= HOST_MODULES_MAX)
		return TRUE;
	g_array_append_val(h->modules, *mm);
	return TRUE;
}

/* The proxies of a description nobody uses. */
static void proxies_free(struct cusemu_host_models *set)
{
	for (unsigned int i = 0; i < set->n; i++) {
		struct proxy *p = &set->proxies[i];

		g_free((char *)p->m.name);
		g_free((char *)p->m.summary);
		g_free((char *)p->m.node_prefix);
		for (unsigned int k = 0; p->params && p->params[k].key; k++) {
			g_free((char *)p->params[k].key);
			g_free((char *)p->params[k].default_value);
			g_free((char *)p->params[k].help);
		}
		g_free(p->params);
		for (int t = 0; t < 2; t++) {
			for (unsigned int k = 0; p->tables[t] && p->tables[t][k].name;
			     k++)
				g_free((char *)p->tables[t][k].name);
			g_free(p->tables[t]);
			g_free(p->handler_at[t]);
		}
	}
	g_free(set->proxies);
	set->proxies = NULL;
	set->n = 0;
}

/* The description a fresh host sends of set's plugin, into set's proxies
 * the first time, else checked against them. */
static gboolean read_description(struct host *h, struct cusemu_host_models *set,
				 bool fresh, GError **error)
{
	gint64 deadline = g_get_monotonic_time() +
			  (gint64)DESCRIBE_MS * G_TIME_SPAN_MILLISECOND;
	union {
		uint32_t type;
		struct host_hello_msg hello;
		struct host_text_msg text;
		struct host_model_msg model;
		struct host_param_msg param;
		struct host_row_msg row;
		struct host_module_msg module;
	} m;
	g_autofree unsigned int *params = NULL;
	g_autofree unsigned int (*rows)[2] = NULL;
	ssize_t n = next_message(h, &m, sizeof(m), deadline, error);
	struct cusemu_host_models scratch = { 0 };
	struct cusemu_host_models *into = fresh ? set : &scratch;

	if (n == sizeof(m.text) && m.type == HOST_MSG_REFUSED) {
		m.text.text[sizeof(m.text.text) - 1] = '\0';
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_PERM, "%s",
			    m.text.text);
		return FALSE;
	}
	if (n < 0)
		return FALSE;
	if (n != sizeof(m.hello) || m.type != HOST_MSG_HELLO ||
	    m.hello.version != HOST_PROTO_VERSION || !m.hello.n_models ||
	    m.hello.n_models > HOST_MODELS_MAX)
		return bad(error, "speaks another protocol (is cusemu-host of "
				  "another build?)");
	if (!fresh && m.hello.n_models != set->n)
		return bad(error, "described other models than the first host "
				  "of the same file");
	into->n = m.hello.n_models;
	into->proxies = g_new0(struct proxy, into->n);
	params = g_new0(unsigned int, into->n);
	rows = g_malloc0_n(into->n, sizeof(*rows));
	for (;;) {
		gboolean ok = TRUE;

		n = next_message(h, &m, sizeof(m), deadline, error);
		if (n < 0)
			break;
		if (n == sizeof(m.text) && m.type == HOST_MSG_REFUSED) {
			m.text.text[sizeof(m.text.text) - 1] = '\0';
			g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_PERM,
				    "%s", m.text.text);
			ok = FALSE;
		} else if (n == sizeof(m.model) && m.type == HOST_MSG_MODEL) {
			ok = take_model(into, &m.model, error);
			if (ok) {
				params[m.model.index] = m.model.n_params;
				rows[m.model.index][0] = m.model.n_rows[0];
				rows[m.model.index][1] = m.model.n_rows[1];
			}
		} else if (n == sizeof(m.param) && m.type == HOST_MSG_PARAM) {
			ok = take_param(into, &m.param, params, error);
		} else if (n == sizeof(m.row) && m.type == HOST_MSG_ROW) {
			ok = take_row(into, &m.row, rows, error);
		} else if (n == sizeof(m.module) &&
			   m.type == HOST_MSG_MODULE) {
			ok = take_module(h, &m.module, error);
		} else if (n == sizeof(uint32_t) && m.type == HOST_MSG_READY) {
			break;
		} else if (m.type != HOST_MSG_LOG) {
			ok = bad(error, "sent a message out of place");
		}
		if (!ok) {
			n = -1;
			break;
		}
	}
	for (unsigned int i = 0; n >= 0 && i < into->n; i++) {
		const struct proxy *p = &into->proxies[i];

		if (!p->m.name || filled_params(p) != params[i] ||
		    filled_rows(p->tables[0]) != rows[i][0] ||
		    filled_rows(p->tables[1]) != rows[i][1])
			n = bad(error, "described its models in part") - 1;
		else if (!fresh && strcmp(p->m.name, set->proxies[i].m.name))
			n = bad(error, "described other models than the first "
				       "host of the same file") - 1;
	}
	if (!fresh)
		proxies_free(&scratch);
	return n >= 0;
}

gboolean cusemu_host_check_description(int sock, GError **error)
{
	struct cusemu_host_models set = { .origin = (char *)"test",
					  .label = (char *)"test" };
	struct host h = { .control = sock, .set = &set };
	gboolean ok;

	h.modules = g_array_new(FALSE, TRUE, sizeof(struct host_module_msg));
	ok = read_description(&h, &set, true, error);
	g_array_unref(h.modules);
	proxies_free(&set);
	return ok;
}

/* ---- hosts */

static void channel_free(struct channel *ch);

/* Its channels no call is in; a call's own is freed by its thread once
 * h->ended (channel_put). Under h->lock. */
static void host_free_channels(struct host *h)
{
	for (guint i = 0; h->channels && i < h->channels->len; i++) {
		struct channel *ch = h->channels->pdata[i];

		if (!ch || ch->busy)
			continue;	/* its thread frees it (h->ended) */
		channel_free(ch);
		h->channels->pdata[i] = NULL;
	}
	g_ptr_array_set_size(h->idle, 0);
}

static struct cusemu_host_models *set_ref(struct cusemu_host_models *set)
{
	g_atomic_int_inc(&set->ref);
	return set;
}

/* A set that neither the loader nor a host refers to any more. */
static void set_free(struct cusemu_host_models *set)
{
	proxies_free(set);
	g_free(set->list);
	g_free(set->origin);
	g_free(set->label);
	if (set->image >= 0)
		close(set->image);
	g_mutex_clear(&set->lock);
	g_free(set);
}

static void set_unref(struct cusemu_host_models *set)
{
	if (set && g_atomic_int_dec_and_test(&set->ref))
		set_free(set);
}

static struct host *host_ref(struct host *h)
{
	g_atomic_int_inc(&h->ref);
	return h;
}

/*
 * The last reference went: no device and no call is in h, its reader has
 * returned or returns now, its process is reaped (or was never ours to
 * reap). A thread cannot join itself: when the reader lets go last, its
 * GThread goes unjoined, and the thread's resources go as it returns.
 */
static void host_free(struct host *h)
{
	g_mutex_lock(&hosts.lock);
	if (hosts.hosts)
		g_ptr_array_remove(hosts.hosts, h);
	g_mutex_unlock(&hosts.lock);
	if (h->reader && h->reader == g_thread_self())
		g_thread_unref(h->reader);
	else if (h->reader)
		g_thread_join(h->reader);
	for (guint i = 0; i < h->channels->len; i++)
		if (h->channels->pdata[i])
			channel_free(h->channels->pdata[i]);
	if (h->control >= 0)
		close(h->control);
	if (h->pidfd >= 0)
		close(h->pidfd);
	g_ptr_array_unref(h->channels);
	g_ptr_array_unref(h->idle);
	g_hash_table_unref(h->devices);
	g_hash_table_unref(h->events);
	g_array_unref(h->modules);
	g_free(h->kill_report);
	cusemu_ratelimit_clear(&h->log_limit);
	g_cond_clear(&h->cond);
	g_mutex_clear(&h->lock);
	set_unref(h->set);
	g_free(h);
}

static void host_unref(struct host *h)
{
	if (h && g_atomic_int_dec_and_test(&h->ref))
		host_free(h);
}

/* A new host of set, one reference the caller's. */
/*
 * SIGKILL to a host. A root daemon's host runs as a uid of its own, which the
 * daemon, without CAP_KILL, may not signal: its launcher (root) does, and
 * answers nothing, so that no lock is needed to ask it.
 */
static void kill_pid(pid_t pid, int pidfd)
{
	struct host_reap_msg m = { .type = HOST_MSG_KILL, .pid = pid };
	int launcher = g_atomic_int_get(&hosts.launcher);

	if (syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0) &&
	    errno == EPERM && launcher >= 0)
		host_send_fds(launcher, &m, sizeof(m), NULL, 0);
}

static struct host *host_start(struct cusemu_host_models *set, bool fresh,
			       GError **error)
{
	struct host *h = g_new0(struct host, 1);
	int sv[2];

	h->ref = 1;
	h->control = h->pidfd = -1;
	h->exit_status = -1;
	cusemu_ratelimit_init(&h->log_limit);
	g_mutex_init(&h->lock);
	g_cond_init(&h->cond);
	h->set = set_ref(set);
	h->channels = g_ptr_array_new();
	h->idle = g_ptr_array_new();
	h->devices = g_hash_table_new(NULL, NULL);
	h->events = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
					  NULL);
	h->modules = g_array_new(FALSE, TRUE, sizeof(struct host_module_msg));
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
			    "a socket for its model host: %s",
			    g_strerror(errno));
		goto fail;
	}
	h->control = sv[0];
	h->pidfd = launch(set->label, set->image, sv[1], &h->pid, error);
	close(sv[1]);
	if (h->pidfd < 0 || !read_description(h, set, fresh, error))
		goto fail;
	g_mutex_lock(&hosts.lock);
	if (!hosts.hosts)
		hosts.hosts = g_ptr_array_new();
	g_ptr_array_add(hosts.hosts, h);
	g_mutex_unlock(&hosts.lock);
	g_debug("model host of %s: pid %d", set->origin, (int)h->pid);
	return h;

fail:
	if (h->pidfd >= 0) {
		kill_pid(h->pid, h->pidfd);
		reap(h->pid);
	}
	host_unref(h);
	return NULL;
}

static void channels_wake(struct host *h);

static void kill_host(struct host *h)
{
	g_atomic_int_set(&h->dead, 1);
	g_mutex_lock(&h->lock);
	/* Once ended, its descriptors are closed and their numbers reused. */
	if (!h->ended && h->pidfd >= 0)
		kill_pid(h->pid, h->pidfd);
	channels_wake(h);
	g_mutex_unlock(&h->lock);
}

/* A message on h's control socket, unless h has ended. */
static bool control_send(struct host *h, const void *msg, size_t len,
			 const int *fds, int n_fds)
{
	bool sent = false;

	g_mutex_lock(&h->lock);
	if (!h->ended)
		sent = host_send_fds(h->control, msg, len, fds, n_fds);
	g_mutex_unlock(&h->lock);
	return sent;
}

/*
 * Ours no more (its devices are gone, or it only described the plugin):
 * it gets EOF and exits. Its reader, if any, does the rest; the caller
 * lets go of its reference.
 */
static void host_close(struct host *h)
{
	g_mutex_lock(&h->lock);
	h->closing = true;
	g_mutex_unlock(&h->lock);
	/* Its models have nothing left to save: no need to wait for it. */
	kill_host(h);
	g_mutex_lock(&h->lock);
	if (!h->ended)
		shutdown(h->control, SHUT_RDWR);
	g_mutex_unlock(&h->lock);
	if (h->reader)
		return;
	/* Never served: nothing of it is in use. */
	reap(h->pid);
	g_mutex_lock(&hosts.lock);
	if (hosts.hosts)
		g_ptr_array_remove(hosts.hosts, h);
	g_mutex_unlock(&hosts.lock);
	g_mutex_lock(&h->lock);
	h->ended = h->done = true;
	close(h->control);
	close(h->pidfd);
	h->control = h->pidfd = -1;
	host_free_channels(h);
	g_mutex_unlock(&h->lock);
}

/*
 * New devices of h's set no longer go to h: true if they did, and the
 * caller lets go of the set's reference.
 */
static bool unset_host(struct host *h)
{
	bool was;

	g_mutex_lock(&h->set->lock);
	was = h->set->host == h;
	if (was)
		h->set->host = NULL;
	g_mutex_unlock(&h->set->lock);
	return was;
}

/* h serves no new device and ends; the set's reference to it goes. */
static void host_retire(struct host *h)
{
	bool was_sets = unset_host(h);

	host_close(h);
	if (was_sets)
		host_unref(h);
}

/*
 * dev's device takes h (a reference), unless h is dying or ours no more.
 * Under set->lock, so that host_put's last device and a new one do not
 * cross.
 */
static bool host_take(struct host *h, struct cusemu_device *dev)
{
	bool taken;

	g_mutex_lock(&h->lock);
	taken = !g_atomic_int_get(&h->dead) && !h->closing;
	if (taken) {
		g_hash_table_add(h->devices, dev);
		host_ref(h);
		g_atomic_int_inc(&h->set->users);
	}
	g_mutex_unlock(&h->lock);
	return taken;
}

/*
 * How long a device that leaves a host that died waits for the host's
 * report, which names and fences it: a loaded machine symbolizes slowly.
 */
#define REPORT_WAIT_MS 10000

/*
 * dev leaves h, and lets go of its reference. A host that died reports
 * first (its reader fences the devices it names after letting go of
 * h->lock: dev must outlive that), and the reader uses dev no more once
 * it left; the last device ends the host.
 */
static void host_put(struct host *h, struct cusemu_device *dev)
{
	gint64 until = g_get_monotonic_time() +
		       (gint64)REPORT_WAIT_MS * G_TIME_SPAN_MILLISECOND;
	struct cusemu_host_models *set;
	bool last;

	if (!h)
		return;
	set = h->set;
	g_mutex_lock(&h->lock);
	while (h->reader && g_atomic_int_get(&h->dead) && !h->done) {
		if (h->ending)
			g_cond_wait(&h->cond, &h->lock);
		else if (!g_cond_wait_until(&h->cond, &h->lock, until))
			break;
	}
	g_hash_table_remove(h->devices, dev);
	for (guint i = 0; i < h->channels->len; i++) {
		struct channel *ch = h->channels->pdata[i];

		if (ch && ch->dev == dev)
			ch->dev = NULL;
	}
	while (h->pins)
		g_cond_wait(&h->cond, &h->lock);
	last = !g_hash_table_size(h->devices) && !h->closing;
	/* No device comes to it any more (host_take). */
	if (last)
		h->closing = true;
	g_mutex_unlock(&h->lock);
	g_atomic_int_add(&set->users, -1);
	if (last)
		host_retire(h);
	host_unref(h);
}

void cusemu_hosts_set_program(const char *path)
{
	hosts.program = path;
}

void cusemu_hosts_configure(const struct cusemu_host_settings *s)
{
	g_autoptr(GPtrArray) early = g_ptr_array_new();

	g_mutex_lock(&hosts.lock);
	hosts.settings = *s;
	hosts.configured = true;
	for (guint i = 0; hosts.hosts && i < hosts.hosts->len; i++)
		g_ptr_array_add(early, host_ref(hosts.hosts->pdata[i]));
	g_mutex_unlock(&hosts.lock);
	/* They ran as the launcher's user, unbounded: end them. */
	for (guint i = 0; i < early->len; i++) {
		host_retire(early->pdata[i]);
		host_unref(early->pdata[i]);
	}
}

struct cusemu_host_models *
cusemu_host_describe(const char *origin, int image,
		     const struct cusemu_device_model *const **models,
		     GError **error)
{
	struct cusemu_host_models *set = g_new0(struct cusemu_host_models, 1);

	set->ref = 1;
	set->origin = g_strdup(origin);
	set->label = g_path_get_basename(origin);
	g_mutex_init(&set->lock);
	/* Its own: its hosts' reports may outlive the loader's. */
	set->image = fcntl(image, F_DUPFD_CLOEXEC, 0);
	if (set->image < 0) {
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
			    "a descriptor of its image: %s", g_strerror(errno));
		cusemu_host_models_free(set);
		return NULL;
	}
	cusemu_handler_set_locator(locate_row);
	set->host = host_start(set, true, error);
	if (!set->host) {
		cusemu_host_models_free(set);
		return NULL;
	}
	set->list = g_new0(const struct cusemu_device_model *, set->n + 1);
	for (unsigned int i = 0; i < set->n; i++)
		set->list[i] = &set->proxies[i].m;
	*models = set->list;
	return set;
}

bool cusemu_host_models_used(struct cusemu_host_models *set)
{
	return g_atomic_int_get(&set->users) > 0;
}

void cusemu_host_models_free(struct cusemu_host_models *set)
{
	struct host *h;

	if (!set)
		return;
	/* No device has its models: a host it has ends (never served, or
	 * idle). The set goes with the last of its hosts. */
	g_mutex_lock(&set->lock);
	h = g_steal_pointer(&set->host);
	g_mutex_unlock(&set->lock);
	if (h) {
		host_close(h);
		host_unref(h);
	}
	set_unref(set);
}

static gpointer reader_main(gpointer data);

/*
 * The host dev goes to (its reference taken): the current one of set, or
 * a fresh one.
 */
static struct host *host_for(struct cusemu_host_models *set,
			     struct cusemu_device *dev, GError **error)
{
	struct host *h, *gone = NULL;

	g_mutex_lock(&set->lock);
	h = set->host;
	if (h && !h->reader && readable(h->pidfd, 0)) {
		/* It ended before it served: a quiet end, then a new one. */
		set->host = NULL;
		g_mutex_unlock(&set->lock);
		host_close(h);
		host_unref(h);
		g_mutex_lock(&set->lock);
		h = set->host;
	}
	if (h && !host_take(h, dev)) {
		/* Dying: its reader reports its end; new devices go to a
		 * fresh one. */
		gone = g_steal_pointer(&set->host);
		h = NULL;
	}
	if (!h) {
		h = host_start(set, false, error);
		if (h && !host_take(h, dev)) {
			host_close(h);
			host_unref(h);
			h = NULL;
			g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
				    "its model host ended as it started");
		}
		if (h)
			set->host = h;
		else
			g_prefix_error(error, "%s: ", set->origin);
	}
	if (h && !h->reader)
		h->reader = g_thread_new("cusemu-host-reader", reader_main,
					 host_ref(h));
	g_mutex_unlock(&set->lock);
	host_unref(gone);
	return h;
}

/* ---- channels */

/*
 * The shared memory of a channel, its size sealed: the host gets the
 * descriptor, and a host that could shrink it would have the daemon's next
 * access past the new end raise SIGBUS in the daemon. -1 on failure.
 */
static int channel_memory(void)
{
	int mem = memfd_create("cusemu-call", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (mem >= 0 && (ftruncate(mem, sizeof(struct host_shm)) ||
			 fcntl(mem, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW |
							F_SEAL_SEAL) < 0)) {
		close(mem);
		mem = -1;
	}
	return mem;
}

static struct channel *channel_new(struct host *h)
{
	struct channel *ch = g_new0(struct channel, 1);
	struct host_channel_msg m = { .type = HOST_MSG_CHANNEL };
	int sv[2] = { -1, -1 }, mem = channel_memory();
	int fds[2];

	ch->host = h;
	ch->sock = -1;
	if (mem < 0 || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		goto fail;
	ch->shm = mmap(NULL, sizeof(struct host_shm), PROT_READ | PROT_WRITE,
		       MAP_SHARED, mem, 0);
	if (ch->shm == MAP_FAILED)
		goto fail;
	g_mutex_lock(&h->lock);
	ch->id = (int)h->channels->len;
	g_ptr_array_add(h->channels, ch);
	g_mutex_unlock(&h->lock);
	m.channel = ch->id;
	fds[0] = sv[1];
	fds[1] = mem;
	ch->sock = sv[0];
	if (!control_send(h, &m, sizeof(m), fds, 2)) {
		close(sv[1]);
		close(mem);
		g_mutex_lock(&h->lock);
		h->channels->pdata[ch->id] = NULL;
		g_mutex_unlock(&h->lock);
		close(ch->sock);
		munmap(ch->shm, sizeof(*ch->shm));
		g_free(ch);
		return NULL;
	}
	close(sv[1]);
	close(mem);
	return ch;

fail:
	if (mem >= 0)
		close(mem);
	if (sv[0] >= 0) {
		close(sv[0]);
		close(sv[1]);
	}
	g_free(ch);
	return NULL;
}

/* The call ch starts, for a report that names it. Under h->lock. */
static void channel_busy(struct channel *ch, struct fwd *f)
{
	ch->busy = true;
	ch->dev = f->dev;
	ch->call = (struct cusemu_oops_call){
		.op = f->op, .cmd = f->cmd, .pid = f->pid,
		.compat = f->call && f->call->compat,
		.command = f->call ? (f->call->step ? f->call->step
						    : f->call->stats.name)
				   : NULL,
	};
	ch->since = g_get_monotonic_time();
	ch->seen_sleeps = __atomic_load_n(&ch->shm->sleeps, __ATOMIC_RELAXED);
	ch->cpu_since = 0;
}

/*
 * An idle channel of h, or a new one, marked busy; NULL if dead. One hold
 * of h->lock when an idle one is there: every call of the host's devices
 * passes here.
 */
static struct channel *channel_get(struct host *h, struct fwd *f)
{
	struct channel *ch = NULL;

	g_mutex_lock(&h->lock);
	if (!g_atomic_int_get(&h->dead) && h->idle->len) {
		ch = g_ptr_array_steal_index(h->idle, h->idle->len - 1);
		channel_busy(ch, f);
	}
	g_mutex_unlock(&h->lock);
	if (ch || g_atomic_int_get(&h->dead))
		return ch;
	ch = channel_new(h);
	if (!ch)
		return NULL;
	g_mutex_lock(&h->lock);
	channel_busy(ch, f);
	g_mutex_unlock(&h->lock);
	return ch;
}

/* The threads that wait for h's calls see it dead at once. Under h->lock. */
static void channels_wake(struct host *h)
{
	for (guint i = 0; h->channels && i < h->channels->len; i++) {
		struct channel *ch = h->channels->pdata[i];

		if (ch && ch->busy)
			host_chan_wake(&ch->shm->state);
	}
}

static void channel_free(struct channel *ch)
{
	/* Its host thread, if it waits for a call, ends. */
	host_chan_post(&ch->shm->state, HOST_CHAN_CLOSED);
	if (ch->sock >= 0)
		close(ch->sock);
	munmap(ch->shm, sizeof(*ch->shm));
	g_free(ch);
}

/*
 * The call is over: the channel serves the next one, or goes. One whose
 * host is dead stays for the host's report (its call is what a fault
 * record names) until the host's end frees it; an abandoned one stays for
 * the reader, which waits for its late answer.
 */
static void channel_put(struct host *h, struct channel *ch, bool reusable)
{
	g_mutex_lock(&h->lock);
	ch->busy = false;
	if (ch->abandoned) {
		g_mutex_unlock(&h->lock);
		return;
	}
	if (reusable && !g_atomic_int_get(&h->dead)) {
		g_ptr_array_add(h->idle, ch);
		g_mutex_unlock(&h->lock);
		return;
	}
	if (g_atomic_int_get(&h->dead) && !h->ended) {
		g_mutex_unlock(&h->lock);
		return;
	}
	h->channels->pdata[ch->id] = NULL;
	g_mutex_unlock(&h->lock);
	channel_free(ch);
}

/* ---- a call */

static void snapshot_call(struct host_shm *shm, const struct cusemu_call *c)
{
	shm->compat = c->compat;
	shm->method = c->method;
	shm->phase = c->phase;
	g_strlcpy(shm->step, c->step ? c->step : "", sizeof(shm->step));
	shm->in_count = c->in.count;
	shm->out_count = c->out.count;
	host_ranges_put(shm->in, &c->in);
	host_ranges_put(shm->out, &c->out);
	shm->in_bytes = c->in.bytes;
	shm->out_bytes = c->out.bytes;
	shm->in_avail = c->in_avail;
	shm->out_avail = c->out_avail;
	if (c->in_avail)
		memcpy(shm->in_data, c->in_data, c->in_avail);
	if (c->out_avail)
		memcpy(shm->out_data, c->out_data, c->out_avail);
	shm->out_used = c->out_used;
	shm->error = 0;
	shm->pending = 0;
	shm->named_out = 0;
}

/* What the host left, copied before it is checked. */
struct results {
	uint32_t in_count, out_count, out_used, pending, data_len, named_out;
	uint32_t methods_set, methods;
	int32_t error;
	char default_name[HOST_NAME_MAX + 8];
	struct host_range in[CUSEMU_USER_MAX_RANGES];
	struct host_range out[CUSEMU_USER_MAX_RANGES];
};

static void copy_results(struct results *r, const struct host_shm *shm)
{
	r->in_count = MIN(shm->in_count, CUSEMU_USER_MAX_RANGES);
	r->out_count = MIN(shm->out_count, CUSEMU_USER_MAX_RANGES);
	r->out_used = shm->out_used;
	r->pending = shm->pending;
	r->named_out = shm->named_out;
	r->data_len = shm->data_len;
	r->methods_set = shm->methods_set;
	r->methods = shm->methods;
	r->error = shm->error;
	memcpy(r->default_name, shm->default_name, sizeof(r->default_name));
	r->default_name[sizeof(r->default_name) - 1] = '\0';
	memcpy(r->in, shm->in, r->in_count * sizeof(r->in[0]));
	memcpy(r->out, shm->out, r->out_count * sizeof(r->out[0]));
}

/*
 * The ranges the host named, replayed on our own call through the same
 * uaccess code (it checks reach, limits and the phase); the bytes the
 * handler wrote; its error and pending. False if the host's answer does
 * not fit the call it was given.
 */
static bool apply_call(struct cusemu_call *call, const struct results *r,
		       const struct host_shm *shm)
{
	unsigned int had_in = call->in.count, had_out = call->out.count;

	if (r->in_count < had_in || r->out_count < had_out)
		return false;
	for (unsigned int i = 0; i < had_in; i++)
		if (r->in[i].addr != call->in.r[i].addr ||
		    r->in[i].len != call->in.r[i].len)
			return false;
	for (unsigned int i = 0; i < had_out; i++)
		if (r->out[i].addr != call->out.r[i].addr ||
		    r->out[i].len != call->out.r[i].len)
			return false;
	for (unsigned int i = had_in; i < r->in_count; i++)
		cusemu_user_want_read(r->in[i].addr, r->in[i].len);
	for (unsigned int i = had_out; i < r->out_count; i++)
		cusemu_user_want_write(r->out[i].addr, r->out[i].len);
	if (r->out_used > call->out_avail)
		return false;
	if (r->out_used > call->out_used) {
		memcpy(call->out_data, shm->out_data, r->out_used);
		call->out_used = r->out_used;
	}
	if (r->pending)
		call->pending = true;
	if (r->named_out)
		call->named_out = true;
	if (r->error < 0 && r->error >= -4095 && !call->error)
		call->error = r->error;
	return true;
}

/* The requests of the host thread while the call runs. */
struct asked {
	unsigned int taken;		/* big lock holds taken for it */
	bool asleep;
	struct cusemu_lock_dropped dropped;
};

static int64_t answer(const struct host_ask_msg *a, struct asked *s)
{
	switch (a->what) {
	case HOST_ASK_LOCK_KERNEL:
		if (s->asleep)
			return -EINVAL;
		cusemu_lock_acquire(&cusemu_big_lock);
		s->taken++;
		return 0;
	case HOST_ASK_UNLOCK_KERNEL:
		if (s->asleep || !cusemu_lock_depth(&cusemu_big_lock))
			return -EINVAL;
		cusemu_lock_release(&cusemu_big_lock);
		s->taken -= s->taken > 0;
		return 0;
	case HOST_ASK_SLEEP_BEGIN:
		if (s->asleep)
			return -EINVAL;
		cusemu_lock_drop_all(&s->dropped);
		cusemu_pool_will_wait();
		s->asleep = true;
		return 0;
	case HOST_ASK_SLEEP_END:
		if (!s->asleep)
			return -EINVAL;
		cusemu_lock_retake_all(&s->dropped);
		s->asleep = false;
		return 0;
	case HOST_ASK_IS_32BIT:
		return a->value > 0 && cusemu_process_is_32bit((pid_t)a->value);
	}
	return -EINVAL;
}

/* What ended the wait for a call's result. LATE: done, as the daemon gave
 * up on it; the host may have sent it on the socket too: the channel goes. */
enum waited { WAITED_DONE, WAITED_LATE, WAITED_DEAD, WAITED_GAVE_UP };

/*
 * How long a daemon thread spins for its call's answer while the host
 * thread has the call, before it sleeps: two wake-ups across processes cost
 * more than a short call does.
 */
#define CALL_SPIN_NS 20000

/* A spinning thread of each side per call in flight: only while there are
 * CPUs enough for them. */
static bool spin_for(int calls)
{
	static gint cpus;	/* once per process: the CPUs stay */
	int n = g_atomic_int_get(&cpus);

	if (!n) {
		n = (int)g_get_num_processors();
		g_atomic_int_set(&cpus, n);
	}
	return calls * 2 <= n;
}

static bool client_gave_up(void)
{
	return cusemu_signal_pending();
}

/*
 * Whether ch's host is gone: its end of the channel closed. The reader
 * wakes the waiting threads when it sees a host end (kill_host()); a look
 * each tick is for a host whose end it has not seen yet.
 */
static bool host_gone(struct channel *ch)
{
	struct pollfd p = { ch->sock, POLLIN, 0 };
	char junk[64];

	if (poll(&p, 1, 0) <= 0)
		return false;
	if (p.revents & (POLLHUP | POLLERR | POLLNVAL))
		return true;
	/* Nothing comes on it during a call: what a host sends is dropped. */
	return recv(ch->sock, junk, sizeof(junk), MSG_DONTWAIT) == 0;
}

/* Ends h for its fault, which why (freed here) says in the log and, as
 * the first reason given, in the report of its end. */
static void end_host(struct host *h, char *why)
{
	g_warning("%s; it is ended", why);
	g_mutex_lock(&h->lock);
	if (!h->kill_report)
		h->kill_report = g_steal_pointer(&why);
	g_mutex_unlock(&h->lock);
	g_free(why);
	kill_host(h);
}

/* The host's channel is not as the protocol has it: no call of it can be
 * trusted any more. */
static enum waited broken(struct host *h, struct fwd *f, uint32_t state)
{
	char *why = g_strdup_printf("the model host of %s left %s's %s in a "
				    "state no call has (%#x)",
				    h->set->origin, f->dev->name,
				    cusemu_op_name(f->op), state);

	end_host(h, why);
	return WAITED_DEAD;
}

/* The client gave up long ago: the call is left to its host thread. */
static enum waited give_up(struct channel *ch, int64_t *result)
{
	struct host_shm *shm = ch->shm;
	uint32_t v;

	__atomic_store_n(&shm->abandoned, 1, __ATOMIC_SEQ_CST);
	v = __atomic_load_n(&shm->state, __ATOMIC_SEQ_CST);
	if (HOST_CHAN_STATE(v) == HOST_CHAN_DONE &&
	    __atomic_load_n(&shm->done.seq, __ATOMIC_RELAXED) == ch->seq) {
		*result = __atomic_load_n(&shm->done.result, __ATOMIC_RELAXED);
		return WAITED_LATE;
	}
	if (HOST_CHAN_STATE(v) == HOST_CHAN_ASK) {
		shm->ask.value = -EIO;
		host_chan_move(&shm->state, v, HOST_CHAN_ANSWER);
	}
	return WAITED_GAVE_UP;
}

/*
 * The states a daemon thread spins in for its call's end: while the host
 * thread runs it (or takes an answer), if its calls are short; while the
 * call waits for that thread too, if it spins for calls (it slept on none
 * when the call came) and there are CPUs to spare (spin).
 */
static uint32_t spin_states(const struct channel *ch, bool spin,
			    uint32_t posted_over)
{
	/* On one CPU the host thread runs only once this one sleeps. */
	if (ch->ran_ns >= CALL_SPIN_NS || !spin_for(1))
		return 0;
	return HOST_CHAN_BIT(HOST_CHAN_RUNNING) |
	       HOST_CHAN_BIT(HOST_CHAN_ANSWER) |
	       (spin && !(posted_over & HOST_CHAN_HOST_WAITS)
			? HOST_CHAN_BIT(HOST_CHAN_CALL)
			: 0);
}

static enum waited wait_done(struct host *h, struct channel *ch,
			     struct fwd *f, uint32_t running, int64_t *result,
			     struct asked *s)
{
	struct host_shm *shm = ch->shm;
	gint64 start = g_get_monotonic_time(), told = 0, looked = start;
	gint64 deadline = f->main_thread
				  ? start + (gint64)MAIN_CALL_MS * 1000
				  : 0;
	bool shared = false;

	for (;;) {
		uint32_t v = host_chan_wait(
			&shm->state,
			HOST_CHAN_BIT(HOST_CHAN_ASK) |
				HOST_CHAN_BIT(HOST_CHAN_DONE),
			running, CALL_SPIN_NS, HOST_CHAN_DAEMON_WAITS, TICK_MS,
			&ch->spin);
		gint64 now;

		switch (HOST_CHAN_VALID(v) ? HOST_CHAN_STATE(v)
					   : HOST_CHAN_STATES) {
		case HOST_CHAN_DONE: {
			struct host_done_msg done = shm->done;

			if (done.seq != ch->seq)
				return broken(h, f, v);
			ch->ran_ns = done.ran_ns;
			ch->took_ns = host_now_ns();
			*result = done.result;
			return WAITED_DONE;
		}
		case HOST_CHAN_ASK: {
			struct host_ask_msg ask = shm->ask;

			shm->ask.value = answer(&ask, s);
			host_chan_post(&shm->state, HOST_CHAN_ANSWER);
			break;
		}
		case HOST_CHAN_CALL:
		case HOST_CHAN_RUNNING:
		case HOST_CHAN_ANSWER:
			break;
		default:
			return broken(h, f, v);
		}
		if (g_atomic_int_get(&h->dead))
			return WAITED_DEAD;
		now = g_get_monotonic_time();
		if (now - looked >= TICK_MS * 1000) {
			looked = now;
			if (host_gone(ch))
				return WAITED_DEAD;
		}
		if (!shared && now - start >= TICK_MS * 1000) {
			/* A long call: the node's next requests go to
			 * other workers meanwhile. */
			cusemu_pool_will_wait();
			shared = true;
		}
		if (!told && client_gave_up()) {
			struct host_channel_msg in = {
				.type = HOST_MSG_INTERRUPT, .channel = ch->id,
				.seq = ch->seq };

			control_send(h, &in, sizeof(in), NULL, 0);
			told = now;
		}
		if (told && now - told >= (gint64)INTERRUPT_MS * 1000)
			return give_up(ch, result);
		if (deadline && now >= deadline) {
			g_warning("the model host of %s did not answer %s's %s "
				  "within %d s; it is ended",
				  h->set->origin, f->dev->name,
				  cusemu_op_name(f->op), MAIN_CALL_MS / 1000);
			g_mutex_lock(&h->lock);
			if (!h->kill_report)
				h->kill_report = g_strdup_printf(
					"the model host of %s did not answer "
					"%s's %s within %d s",
					h->set->origin, f->dev->name,
					cusemu_op_name(f->op),
					MAIN_CALL_MS / 1000);
			g_mutex_unlock(&h->lock);
			kill_host(h);
			return WAITED_DEAD;
		}
	}
}

/* A call that did not end well lets go of what it took for the host. */
static void undo_asked(struct asked *s)
{
	if (s->asleep)
		cusemu_lock_retake_all(&s->dropped);
	while (s->taken--)
		cusemu_lock_release(&cusemu_big_lock);
}

static long fail(struct fwd *f, long err)
{
	if (f->call && !f->call->error)
		f->call->error = (int)err;
	if (f->why && !*f->why)
		*f->why = g_strdup("its model host ended (the report is "
				   "above)");
	if (f->text)
		g_string_append(f->text, "the model host of this device "
					 "ended; see the daemon's log\n");
	return err;
}

static void put_data(struct host_shm *shm, const void *data, size_t len)
{
	len = MIN(len, sizeof(shm->data));
	if (len)
		memcpy(shm->data, data, len);
	shm->data_len = (uint32_t)len;
}

static long apply(struct fwd *f, struct host_shm *shm, int64_t result)
{
	struct results results, *r = &results;
	long ret = (long)result;

	copy_results(r, shm);
	if (r->data_len > sizeof(shm->data))
		r->data_len = 0;
	if (f->call && !apply_call(f->call, r, shm)) {
		g_warning("the model host of %s answered %s's ioctl with "
			  "ranges that do not fit the call; the caller gets "
			  "EIO",
			  host_of(f->dev)->set->origin, f->dev->name);
		ret = fail(f, -EIO);
	}
	if (f->slot == HOST_SLOT_READ && ret > 0) {
		ret = MIN((size_t)ret, f->out_size);
		memcpy(f->out, shm->data, (size_t)ret);
	}
	if ((f->why || f->text) && r->data_len) {
		g_autofree char *text = g_strndup(shm->data, r->data_len);

		if (f->why && ret < 0)
			*f->why = g_steal_pointer(&text);
		else if (f->text)
			g_string_append(f->text, text);
	}
	if (f->slot == HOST_SLOT_PROBE && ret >= 0) {
		if (r->methods_set)
			cusemu_device_set_methods(f->dev, r->methods);
		if (r->default_name[0] &&
		    cusemu_device_default_name(f->dev, r->default_name)) {
			*f->why = g_strdup_printf("its probe named its node "
						  "'%s', not a node name",
						  r->default_name);
			ret = -EINVAL;
		}
	}
	return ret;
}

static long forward(struct fwd *f)
{
	struct host *h = host_of(f->dev);
	struct asked s = { 0 };
	struct channel *ch;
	struct host_shm *shm;
	enum waited how;
	int64_t result = 0;
	uint32_t running;
	bool spin;
	long ret;

	if (!h || g_atomic_int_get(&h->dead))
		return fail(f, -EIO);
	ch = channel_get(h, f);
	if (!ch)
		return fail(f, -EIO);
	shm = ch->shm;
	shm->cmd = f->cmd;
	shm->arg = f->arg;
	shm->lock_depth = cusemu_kernel_lock_depth();
	shm->locks_held = cusemu_lock_held();
	shm->data_len = 0;
	shm->methods_set = 0;
	shm->default_name[0] = '\0';
	if (f->call)
		snapshot_call(shm, f->call);
	else
		shm->in_count = shm->out_count = 0;
	put_data(shm, f->data, f->len);
	shm->call = (struct host_call_msg){
		.type = HOST_MSG_CALL,
		.slot = f->slot,
		.seq = ++ch->seq,
		.dev = (uintptr_t)f->dev,
		.file = (uintptr_t)f->file,
		.model = f->slot == HOST_SLOT_PROBE
				 ? proxy_of(f->dev->model)->index
				 : 0,
		.cmd = f->cmd,
		.arg = f->arg,
		.pid = f->pid,
		.flags = f->file ? f->file->flags : 0,
		.size = f->slot == HOST_SLOT_READ ? f->out_size : f->len,
	};
	if (ch->took_ns)
		shm->call.idle_ns = host_now_ns() - ch->took_ns;
	spin = spin_for(g_atomic_int_add(&hosts.forwarding, 1) + 1);
	shm->spin = spin;
	running = spin_states(ch, spin,
			      host_chan_post(&shm->state, HOST_CHAN_CALL));
	/* The watchdog of oops.c: asleep; the reader watches the host. */
	cusemu_request_sleep_begin();
	cusemu_oops_away_begin();
	how = wait_done(h, ch, f, running, &result, &s);
	cusemu_oops_away_end();
	cusemu_request_sleep_end();
	g_atomic_int_add(&hosts.forwarding, -1);
	switch (how) {
	case WAITED_DONE:
	case WAITED_LATE:
		ret = apply(f, shm, result);
		if (s.asleep)
			cusemu_lock_retake_all(&s.dropped);
		channel_put(h, ch, how == WAITED_DONE);
		return ret;
	case WAITED_GAVE_UP:
		/* The host has not answered: its thread goes on alone. */
		undo_asked(&s);
		g_mutex_lock(&h->lock);
		ch->abandoned = true;
		g_mutex_unlock(&h->lock);
		channel_put(h, ch, false);
		if (f->call && !f->call->error)
			f->call->error = -EINTR;
		return -EINTR;
	case WAITED_DEAD:
		break;
	}
	undo_asked(&s);
	kill_host(h);
	channel_put(h, ch, false);
	return fail(f, -EIO);
}

/* ---- the reader: a host's messages, its lockups, its end */

/* dev, pinned (host_put waits until unpin()), if it is one of h's; under
 * h->lock. */
static struct cusemu_device *pin_locked(struct host *h,
					struct cusemu_device *dev)
{
	if (!dev || !g_hash_table_contains(h->devices, dev))
		return NULL;
	h->pins++;
	return dev;
}

static void unpin(struct host *h)
{
	g_mutex_lock(&h->lock);
	if (!--h->pins)
		g_cond_broadcast(&h->cond);
	g_mutex_unlock(&h->lock);
}

/* The device the host names by id, pinned, or NULL. */
static struct cusemu_device *device_of(struct host *h, uint64_t id)
{
	struct cusemu_device *dev;

	g_mutex_lock(&h->lock);
	dev = pin_locked(h, (struct cusemu_device *)(uintptr_t)id);
	g_mutex_unlock(&h->lock);
	return dev;
}

static void on_event(struct host *h, struct host_event_msg *m)
{
	struct cusemu_device *dev = device_of(h, m->dev);
	bool known;

	if (!dev)
		return;
	if (m->type == HOST_MSG_WAKE_UP) {
		cusemu_device_wake_up(dev);
		unpin(h);
		return;
	}
	if (!terminated(m->event, sizeof(m->event))) {
		unpin(h);
		return;
	}
	g_mutex_lock(&h->lock);
	known = g_hash_table_contains(h->events, m->event);
	if (!known && g_hash_table_size(h->events) < EVENTS_MAX) {
		g_hash_table_add(h->events, g_strdup(m->event));
		known = true;
	}
	g_mutex_unlock(&h->lock);
	if (known)
		cusemu_device_count_event(dev, m->event);
	unpin(h);
}

static void on_text(struct host *h, struct host_text_msg *m)
{
	char note[CUSEMU_RATELIMIT_NOTE];
	struct cusemu_device *dev;

	m->text[sizeof(m->text) - 1] = '\0';
	if (m->type == HOST_MSG_LOST) {
		dev = device_of(h, m->dev);
		if (dev) {
			cusemu_device_lost(dev, "%s", m->text);
			unpin(h);
		}
		return;
	}
	/* A burst, then a line now and then with the count held back, as
	 * the kernel's printk_ratelimit(): one host's lines, all levels. */
	if (!cusemu_ratelimit(&h->log_limit, note))
		return;
	/* Never G_LOG_LEVEL_ERROR: that would end the daemon. */
	g_log(G_LOG_DOMAIN,
	      m->level & (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL)
		      ? G_LOG_LEVEL_CRITICAL
	      : m->level & G_LOG_LEVEL_WARNING ? G_LOG_LEVEL_WARNING
	      : m->level & G_LOG_LEVEL_DEBUG   ? G_LOG_LEVEL_DEBUG
					       : G_LOG_LEVEL_MESSAGE,
	      "%s: %s%s", h->set->label, m->text, note);
}

/* The objects of h, for libdw; names and descriptors borrowed. */
static GArray *modules_of(struct host *h, GPtrArray *names)
{
	GArray *mods = g_array_new(FALSE, TRUE,
				   sizeof(struct cusemu_oops_module));

	for (guint i = 0; i < h->modules->len; i++) {
		const struct host_module_msg *mm =
			&g_array_index(h->modules, struct host_module_msg, i);
		struct cusemu_oops_module om = { .fd = -1, .base = mm->base };
		const char *path = mm->plugin ? h->set->origin
				   : mm->path[0] ? mm->path
						 : hosts.program;
		char *name = g_path_get_basename(path);

		g_ptr_array_add(names, name);
		om.name = name;
		om.path = path;
		if (mm->plugin)
			om.fd = h->set->image;
		g_array_append_val(mods, om);
	}
	return mods;
}

/*
 * What glibc's allocator keeps of freed memory goes back to the system.
 * Under AddressSanitizer malloc is not glibc's, and a first malloc_trim()
 * would set glibc's allocator up in the sandbox (getrandom(2) for its
 * thread caches, off the allow-list).
 */
static void give_back_memory(void)
{
#ifndef __SANITIZE_ADDRESS__
	malloc_trim(0);
#endif
}

/*
 * The symbols of the hosts' backtraces are read on one thread of the
 * daemon's life. A trace takes megabytes (the debug information of the
 * host's objects, the C library's compressed), which glibc keeps, once
 * freed, in the arena of the thread that took them, and hands back only
 * in part: each reader comes and goes with its host, and readers that
 * overlap make glibc a new arena, which would keep its megabyte. One
 * thread uses one arena, and its memory goes back after each trace.
 */
static struct {
	GMutex lock;
	GCond cond;
	GThread *thread;
	GQueue jobs;		/* struct trace_job */
} symbolizer;

struct trace_job {
	GString *out;
	struct host *h;
	const struct host_fault_msg *f;
	bool rip, done;
};

static void symbolize(struct trace_job *job)
{
	g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GArray) mods = modules_of(job->h, names);
	g_autoptr(GString) trace = g_string_new(NULL);

	cusemu_oops_append_remote_trace(trace, (void *)mods->data,
					(int)mods->len, &job->f->trace,
					job->rip);
	job->out = g_steal_pointer(&trace);
}

static gpointer symbolizer_main(gpointer data)
{
	(void)data;
	g_mutex_lock(&symbolizer.lock);
	for (;;) {
		struct trace_job *job = g_queue_pop_head(&symbolizer.jobs);

		if (!job) {
			g_cond_wait(&symbolizer.cond, &symbolizer.lock);
			continue;
		}
		g_mutex_unlock(&symbolizer.lock);
		symbolize(job);
		give_back_memory();
		g_mutex_lock(&symbolizer.lock);
		job->done = true;
		g_cond_broadcast(&symbolizer.cond);
	}
	return NULL;
}

/* f's backtrace, its frames named against h's objects, appended to r. */
static void append_trace(GString *r, struct host *h,
			 const struct host_fault_msg *f, bool rip)
{
	struct trace_job job = { .h = h, .f = f, .rip = rip };

	g_mutex_lock(&symbolizer.lock);
	if (!symbolizer.thread)
		symbolizer.thread = g_thread_new("cusemu-symbols",
						 symbolizer_main, NULL);
	g_queue_push_tail(&symbolizer.jobs, &job);
	g_cond_broadcast(&symbolizer.cond);
	while (!job.done)
		g_cond_wait(&symbolizer.cond, &symbolizer.lock);
	g_mutex_unlock(&symbolizer.lock);
	g_string_append_len(r, job.out->str, (gssize)job.out->len);
	g_string_free(job.out, TRUE);
}

/* "bug0, spin0" */
static char *device_names(struct host *h)
{
	GString *s = g_string_new(NULL);
	GHashTableIter it;
	gpointer dev;

	g_hash_table_iter_init(&it, h->devices);
	while (g_hash_table_iter_next(&it, &dev, NULL))
		g_string_append_printf(s, "%s%s", s->len ? ", " : "",
				       ((struct cusemu_device *)dev)->name);
	return g_string_free(s, FALSE);
}

static const struct channel *channel_at(struct host *h, int id)
{
	if (id < 0 || (guint)id >= h->channels->len)
		return NULL;
	return h->channels->pdata[id];
}

/* The report of a host that faulted, under h->lock. */
static char *fault_report(struct host *h, const char *names)
{
	const struct host_fault_msg *f = &h->fault;
	const struct channel *ch = channel_at(h, f->channel);
	GString *r = g_string_new(NULL);
	g_autofree char *where = NULL;
	struct cusemu_oops_call c;

	if (ch && ch->dev)
		where = g_strdup_printf("%s's %s", ch->dev->model->name,
					cusemu_op_name(ch->call.op));
	else
		where = g_strdup_printf("thread %d, which the model of %s "
					"started",
					(int)f->tid, h->set->origin);
	if (f->stack_low)
		cusemu_oops_append_stack_fault(r, f->signo,
					       (void *)(uintptr_t)f->addr,
					       f->stack_low, f->stack_high,
					       cusemu_oops_next(), where);
	else
		cusemu_oops_append_fault(r, f->signo, f->code,
					 (void *)(uintptr_t)f->addr,
					 cusemu_oops_next(), where);
	if (ch && ch->dev) {
		c = ch->call;
		c.tid = f->tid;
		c.thread = "cusemu-host";
		cusemu_oops_append_context(r, ch->dev, &c);
	} else {
		g_string_append_printf(r, "Tainted: %s\n", cusemu_oops_taint());
	}
	append_trace(r, h, f, true);
	g_string_append_printf(r, "The model host of %s (pid %d) ended; %s "
				  "fenced: every call on them fails with EIO "
				  "until 'cusemuctl reload NODE'\n"
				  "---[ end trace ]---",
			       h->set->origin, (int)h->pid,
			       *names ? names : "no device is");
	return g_string_free(r, FALSE);
}

/* The report of a host that ended without a fault record. */
static char *end_report(struct host *h, int status, const char *names)
{
	GString *r = g_string_new(NULL);

	cusemu_oops_next();
	g_string_append_printf(r, "BUG: the model host of %s (pid %d) ",
			       h->set->origin, (int)h->pid);
	if (h->exit_status >= 0)
		g_string_append_printf(r, "exited with status %d (the model "
					  "called exit())",
				       h->exit_status);
	else if (status >= 0 && WIFEXITED(status))
		g_string_append_printf(r, "exited with status %d",
				       WEXITSTATUS(status));
	else if (status >= 0 && WIFSIGNALED(status))
		g_string_append_printf(r, "was killed by signal %d (%s)",
				       WTERMSIG(status),
				       strsignal(WTERMSIG(status)));
	else
		g_string_append(r, "ended");
	g_string_append_printf(r, "\nTainted: %s\n%s fenced: every call on "
				  "them fails with EIO until 'cusemuctl "
				  "reload NODE'\n---[ end trace ]---",
			       cusemu_oops_taint(),
			       *names ? names : "no device is");
	return g_string_free(r, FALSE);
}

/* h is gone: one report, its devices fenced, the daemon tainted. */
static void host_ended(struct host *h)
{
	g_autofree char *report = NULL;
	g_autofree char *names = NULL;
	g_autoptr(GPtrArray) devs = g_ptr_array_new();
	GHashTableIter it;
	gpointer dev;
	bool quiet;
	int status;

	kill_host(h);
	readable(h->pidfd, 1000);
	status = reap(h->pid);
	g_mutex_lock(&hosts.lock);
	if (hosts.hosts)
		g_ptr_array_remove(hosts.hosts, h);
	g_mutex_unlock(&hosts.lock);
	if (unset_host(h))
		host_unref(h);	/* the set's; the reader holds its own */
	g_mutex_lock(&h->lock);
	quiet = h->closing;
	names = device_names(h);
	if (quiet)
		;
	else if (h->faulted)
		report = fault_report(h, names);
	else if (h->kill_report)
		report = g_strdup_printf("%s\nThe model host of %s (pid %d) "
					 "was ended; %s fenced until "
					 "'cusemuctl reload NODE'",
					 h->kill_report, h->set->origin,
					 (int)h->pid,
					 *names ? names : "no device is");
	else
		report = end_report(h, status, names);
	/* A device that leaves from now on waits for done (host_put). */
	g_hash_table_iter_init(&it, h->devices);
	while (g_hash_table_iter_next(&it, &dev, NULL))
		g_ptr_array_add(devs, dev);
	h->ending = true;
	host_free_channels(h);
	h->ended = true;
	/* Nothing reads them any more; the pid is reaped. */
	close(h->control);
	close(h->pidfd);
	h->control = h->pidfd = -1;
	g_mutex_unlock(&h->lock);
	if (!quiet && (!h->kill_report || h->faulted))
		cusemu_oops_log(report);
	if (!quiet && cusemu_oops_panics()) {
		g_message("panic_on_oops: the daemon ends; its nodes go with it");
		_exit(3);
	}
	for (guint i = 0; !quiet && i < devs->len; i++)
		cusemu_oops_fence(devs->pdata[i], report);
	g_mutex_lock(&h->lock);
	h->done = true;
	g_cond_broadcast(&h->cond);
	g_mutex_unlock(&h->lock);
}

static bool read_control(struct host *h);

/* A thread's backtrace, asked of the host; false if it did not come. The
 * host's other messages meanwhile are taken as they come. */
static bool sample(struct host *h, int channel, struct host_fault_msg *out)
{
	struct host_channel_msg ask = { .type = HOST_MSG_SAMPLE_ASK,
					.channel = channel };
	gint64 end = g_get_monotonic_time() + SAMPLE_MS * 1000;

	h->sample_ready = false;
	send(h->control, &ask, sizeof(ask), MSG_NOSIGNAL);
	while (!h->sample_ready && g_get_monotonic_time() < end) {
		if (readable(h->control, 50) && !read_control(h))
			return false;
	}
	if (!h->sample_ready || h->sample.channel != channel)
		return false;
	*out = h->sample;
	return true;
}

static void report_lockup(struct host *h, struct channel *ch, gint64 us)
{
	GString *r;
	struct host_fault_msg f;
	struct cusemu_oops_call c;
	struct cusemu_device *dev;
	bool sampled;

	g_mutex_lock(&h->lock);
	c = ch->call;
	dev = pin_locked(h, ch->dev);
	g_mutex_unlock(&h->lock);
	if (!dev) {
		/* An abandoned call of a device gone: it spins all the same. */
		g_warning("the model host of %s (pid %d) spins in a call of a "
			  "device removed since; it is ended",
			  h->set->origin, (int)h->pid);
		kill_host(h);
		return;
	}
	r = g_string_new(NULL);
	cusemu_oops_append_lockup(r, dev, c.op, us, c.pid ? c.pid : h->pid,
				  NULL);
	c.thread = "cusemu-host";
	sampled = sample(h, ch->id, &f);
	/* Its calls fail now, not once the report is symbolized, which
	 * takes seconds on a loaded machine: the trace needs the sample and
	 * the daemon's own copy of the host's objects, not the host. */
	kill_host(h);
	c.tid = sampled ? f.tid : 0;
	cusemu_oops_append_context(r, dev, &c);
	if (sampled)
		append_trace(r, h, &f, true);
	else
		g_string_append(r, "Call Trace: (the host did not answer)\n");
	unpin(h);
	g_string_append_printf(r, "The daemon ends the model host of %s (pid "
				  "%d): the call cannot be taken back from "
				  "it; its calls fail with EIO\n"
				  "---[ end trace ]---",
			       h->set->origin, (int)h->pid);
	cusemu_oops_log(r->str);
	g_mutex_lock(&h->lock);
	if (!h->kill_report)
		h->kill_report = g_string_free(r, FALSE);
	else
		g_string_free(r, TRUE);
	g_mutex_unlock(&h->lock);
}

/* A call stuck beyond a threshold, as the reader found it. */
struct stuck {
	struct channel *ch;
	uint64_t seq;
	bool hung;		/* a hung task, else a soft lockup */
	bool asleep;		/* in the helpers of <cusemu/sched.h> */
	gint64 us;
	uint64_t ran_ns;	/* its thread's time on a CPU meanwhile */
};

/*
 * A hung task: reported, and the host goes on, as the kernel leaves a
 * hung task. Its caller may still give up (the call is answered within a
 * second), and a reload ends the host.
 */
static void report_hung(struct host *h, const struct stuck *st)
{
	GString *r;
	struct channel *ch = st->ch;
	struct cusemu_device *dev;
	struct host_fault_msg f;
	struct cusemu_oops_call c;
	bool sampled;

	g_mutex_lock(&h->lock);
	c = ch->call;
	dev = pin_locked(h, ch->dev);
	g_mutex_unlock(&h->lock);
	if (!dev)
		return;		/* the device went; so did its report */
	sampled = sample(h, ch->id, &f);
	g_mutex_lock(&h->lock);
	/* The call ended meanwhile: not hung. */
	if (ch->seq != st->seq || (!ch->busy && !ch->abandoned)) {
		g_mutex_unlock(&h->lock);
		unpin(h);
		return;
	}
	g_mutex_unlock(&h->lock);
	r = g_string_new(NULL);
	cusemu_oops_append_hung(r, c.pid ? c.pid : h->pid);
	c.tid = sampled ? f.tid : 0;
	c.thread = "cusemu-host";
	cusemu_oops_append_context(r, dev, &c);
	if (sampled)
		append_trace(r, h, &f, false);
	else
		g_string_append(r, "Call Trace: (the host did not answer)\n");
	cusemu_oops_append_hung_state(r, st->asleep, st->us, st->ran_ns);
	g_string_append_printf(r, "The call and the model host of %s (pid %d) "
				  "go on: %s; a caller that gives up is "
				  "answered within a second, and 'cusemuctl "
				  "reload NODE' ends the host\n"
				  "---[ end trace ]---",
			       h->set->origin, (int)h->pid,
			       st->asleep ? "a wake-up ends the call"
					  : "only the model can end the call");
	unpin(h);
	cusemu_oops_log(r->str);
	g_string_free(r, TRUE);
}

/* The time on a CPU of ch's host thread, in ns; -1 when unknown. */
static int64_t channel_cpu(struct host *h, struct channel *ch)
{
	pid_t tid = __atomic_load_n(&ch->shm->tid, __ATOMIC_RELAXED);
	int64_t ns = cusemu_proc_thread_cpu_ns(h->pid, tid);

	return ns < 0 ? -1 : ns;
}

/*
 * Whether ch's call, stuck for st->us without a sleep beginning or ending,
 * is blocked rather than spinning: asleep in the helpers, or its thread
 * off the CPU since the reader first looked (a lock of the model's own).
 * Not knowing, it spins. Under h->lock.
 */
static bool blocked(struct host *h, struct channel *ch, gint64 now,
		    struct stuck *st)
{
	int64_t cpu;

	st->asleep = ch->seen_sleeps & 1;
	st->ran_ns = 0;
	if (st->asleep)
		return true;
	cpu = channel_cpu(h, ch);
	if (!ch->cpu_since) {
		ch->cpu_at = cpu;
		ch->cpu_since = now;
	}
	if (cpu < 0 || ch->cpu_at < 0 || cpu < ch->cpu_at)
		return false;
	st->ran_ns = (uint64_t)(cpu - ch->cpu_at);
	return !cusemu_oops_spinning(now - ch->cpu_since, st->ran_ns);
}

/*
 * A stopped host (SIGSTOP, a terminal's stop, a tracer) runs no call:
 * what its calls wait for is no soft lockup and no hung task, as the
 * kernel counts neither for a stopped task. Said once per stop; the times
 * of its calls start again, so that they count from when it goes on.
 * Under h->lock.
 */
static bool host_stopped(struct host *h, gint64 now)
{
	int state = cusemu_proc_state(h->pid);

	if (state != 'T' && state != 't') {
		h->stop_said = false;
		return false;
	}
	for (guint i = 0; i < h->channels->len; i++) {
		struct channel *ch = h->channels->pdata[i];

		if (ch) {
			ch->since = now;
			ch->cpu_since = 0;
		}
	}
	if (!h->stop_said)
		g_message("the model host of %s (pid %d) is stopped (%s): "
			  "its calls wait until it goes on (SIGCONT), and "
			  "are no soft lockup nor hung task; a caller that "
			  "gives up is answered within a second",
			  h->set->origin, (int)h->pid,
			  state == 't' ? "by a tracer" : "SIGSTOP");
	h->stop_said = true;
	return true;
}

/*
 * A call that runs without sleeping beyond the soft-lockup threshold, or
 * is blocked beyond the hung-task threshold, of a host that is not
 * stopped: into st.
 */
static bool find_stuck(struct host *h, gint64 now, struct stuck *st)
{
	gint64 lockup = (gint64)cusemu_oops_lockup_secs() * G_USEC_PER_SEC;
	gint64 hung = (gint64)cusemu_oops_hung_secs() * G_USEC_PER_SEC;
	bool found = false;

	if (!lockup && !hung)
		return false;
	g_mutex_lock(&h->lock);
	for (guint i = 0; i < h->channels->len && !found; i++) {
		struct channel *ch = h->channels->pdata[i];
		uint64_t sleeps;

		if (!ch || (!ch->busy && !ch->abandoned))
			continue;
		sleeps = __atomic_load_n(&ch->shm->sleeps, __ATOMIC_RELAXED);
		if (sleeps != ch->seen_sleeps) {
			ch->seen_sleeps = sleeps;
			ch->since = now;
			ch->cpu_since = 0;
			continue;
		}
		st->ch = ch;
		st->seq = ch->seq;
		st->us = now - ch->since;
		st->hung = blocked(h, ch, now, st);
		if (st->hung)
			found = hung && st->us >= hung &&
				ch->hung_seq != ch->seq;
		else
			found = lockup && st->us >= lockup &&
				!h->lockup_reported;
	}
	if (found && host_stopped(h, now))
		found = false;
	g_mutex_unlock(&h->lock);
	return found;
}

/* An abandoned channel's late answer (or its host's end): it goes. */
static void drain_abandoned(struct host *h, struct channel *ch)
{
	struct host_done_msg done;
	ssize_t n = recv(ch->sock, &done, sizeof(done), MSG_DONTWAIT);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	g_mutex_lock(&h->lock);
	h->channels->pdata[ch->id] = NULL;
	g_mutex_unlock(&h->lock);
	channel_free(ch);
}

static bool read_control(struct host *h)
{
	union {
		uint32_t type;
		struct host_fault_msg fault;
		struct host_event_msg event;
		struct host_text_msg text;
	} m;
	int fd;
	ssize_t n = host_recv_fds(h->control, &m, sizeof(m), &fd, 1, MSG_DONTWAIT);

	if (fd >= 0)
		close(fd);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR;
	if (n == 0)
		return false;
	if (n == sizeof(m.fault) && m.type == HOST_MSG_FAULT && !h->faulted) {
		h->fault = m.fault;
		h->faulted = true;
	} else if (n == sizeof(m.fault) && m.type == HOST_MSG_SAMPLE) {
		h->sample = m.fault;
		h->sample_ready = true;
	} else if (n == sizeof(m.event) && m.type == HOST_MSG_EXIT) {
		h->exit_status = m.event.status & 0xff;
	} else if (n == sizeof(m.event) && (m.type == HOST_MSG_WAKE_UP ||
					    m.type == HOST_MSG_EVENT)) {
		on_event(h, &m.event);
	} else if (n == sizeof(m.text) && (m.type == HOST_MSG_LOG ||
					   m.type == HOST_MSG_LOST)) {
		on_text(h, &m.text);
	}
	return true;
}

/*
 * Whether ch, polled for its hangup alone, is still h's channel and its
 * host's end of it closed. Under h->lock, so that it is not freed.
 */
static bool hung_up(struct host *h, struct channel *ch, guint id)
{
	struct pollfd p;

	if (id >= h->channels->len || h->channels->pdata[id] != ch)
		return false;
	p = (struct pollfd){ ch->sock, 0, 0 };
	return poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR));
}

/*
 * The host closed its end of a call channel while it runs: a model that
 * closed every descriptor of its process (the calls go on over the shared
 * memory, and its control socket stays open while a thread of its own
 * waits on it). A host that dies closes them too: it is the end the
 * control socket tells, with its fault or its status, unless the host is
 * alive a moment later. Its fault, and the host is ended.
 */
static void channel_hung_up(struct host *h)
{
	char *why;

	if (g_atomic_int_get(&h->dead) || readable(h->pidfd, 500) ||
	    h->faulted)
		return;
	why = g_strdup_printf("the model host of %s (pid %d) closed its end "
			      "of its call channels to the daemon, while it "
			      "runs (a model that closes descriptors it was "
			      "not given)",
			      h->set->origin, (int)h->pid);
	end_host(h, why);
}

static gpointer reader_main(gpointer data)
{
	struct host *h = data;
	bool hung = false;	/* a hangup seen: not polled for again */

	for (;;) {
		struct pollfd p[1 + 64];
		struct channel *ab[64];
		guint ids[64];
		unsigned int n = 1;
		bool hangup = false;
		struct stuck st;

		p[0] = (struct pollfd){ h->control, POLLIN, 0 };
		g_mutex_lock(&h->lock);
		for (guint i = 0; i < h->channels->len && n < G_N_ELEMENTS(p);
		     i++) {
			struct channel *ch = h->channels->pdata[i];
			bool drain = ch && ch->abandoned && !ch->busy;

			/* The others for their hangup alone. */
			if (ch && (drain || !hung)) {
				ab[n - 1] = ch;
				ids[n - 1] = i;
				p[n++] = (struct pollfd){ ch->sock,
							  drain ? POLLIN : 0,
							  0 };
			}
		}
		g_mutex_unlock(&h->lock);
		if (poll(p, n, 250) > 0) {
			if (p[0].revents && !read_control(h))
				break;
			for (unsigned int i = 1; i < n; i++) {
				if (!p[i].revents)
					continue;
				if (p[i].events) {
					drain_abandoned(h, ab[i - 1]);
					continue;
				}
				g_mutex_lock(&h->lock);
				hangup = hangup ||
					 hung_up(h, ab[i - 1], ids[i - 1]);
				g_mutex_unlock(&h->lock);
			}
			if (hangup) {
				hung = true;
				channel_hung_up(h);
			}
		}
		if (!find_stuck(h, g_get_monotonic_time(), &st))
			continue;
		if (st.hung) {
			report_hung(h, &st);
			g_mutex_lock(&h->lock);
			st.ch->hung_seq = st.seq;
			g_mutex_unlock(&h->lock);
		} else {
			h->lockup_reported = true;
			report_lockup(h, st.ch, st.us);
		}
	}
	host_ended(h);
	host_unref(h);	/* the reader's */
	return NULL;
}

/* ---- the daemon's end */

static void kill_all(void)
{
	g_mutex_lock(&hosts.lock);
	for (guint i = 0; hosts.hosts && i < hosts.hosts->len; i++) {
		struct host *h = hosts.hosts->pdata[i];

		g_mutex_lock(&h->lock);
		h->closing = true;
		g_mutex_unlock(&h->lock);
		kill_host(h);
	}
	g_mutex_unlock(&hosts.lock);
}

static gpointer stopper_main(gpointer data)
{
	gint64 end = g_get_monotonic_time() +
		     (gint64)GPOINTER_TO_UINT(data) * 1000;

	g_mutex_lock(&hosts.lock);
	while (!hosts.stopped &&
	       g_cond_wait_until(&hosts.stop_cond, &hosts.lock, end))
		;
	g_mutex_unlock(&hosts.lock);
	kill_all();
	return NULL;
}

void cusemu_hosts_stop_begin(unsigned int ms)
{
	g_mutex_lock(&hosts.lock);
	hosts.stopped = false;
	if (!hosts.stopper && hosts.hosts && hosts.hosts->len)
		hosts.stopper = g_thread_new("cusemu-host-stop", stopper_main,
					     GUINT_TO_POINTER(ms));
	g_mutex_unlock(&hosts.lock);
}

void cusemu_hosts_stop_end(void)
{
	GThread *t;

	g_mutex_lock(&hosts.lock);
	hosts.stopped = true;
	g_cond_broadcast(&hosts.stop_cond);
	t = g_steal_pointer(&hosts.stopper);
	g_mutex_unlock(&hosts.lock);
	if (t)
		g_thread_join(t);
	else
		kill_all();
}
