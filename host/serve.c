/* SPDX-License-Identifier: MIT */
/*
 * The model host's call channels: one thread each, serving the calls the
 * daemon forwards, one at a time. A call is rebuilt from the channel's
 * memory (struct cusemu_call for an ioctl, with the user memory the daemon
 * holds so far) and runs the very uaccess code of the daemon
 * (runtime/call.c) on it; then what it named and wrote goes back.
 */
#define G_LOG_DOMAIN "cusemu-host"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "host.h"

/* The host's registry, one a process, shared by the channel threads and
 * main.c's loop, whose calls (host_serve_channel, host_interrupt) carry
 * no pointer of it. */
static struct {
	GMutex lock;
	GHashTable *devices;	/* daemon id -> struct host_dev */
	GHashTable *files;	/* daemon id -> struct cusemu_file */
	GPtrArray *channels;	/* struct host_channel, by id */
} registry;

/* The channel this thread serves: the SDK's calls the model makes carry
 * none, so they find it here. NULL in a thread of the model's own. */
static __thread struct host_channel *current;

struct host_channel *host_current_channel(void)
{
	return current;
}

struct host_dev *host_dev_of(const struct cusemu_device *dev)
{
	return (struct host_dev *)cusemu_instance(dev);
}

static void send_msg(int sock, const void *msg, size_t len)
{
	while (send(sock, msg, len, MSG_NOSIGNAL) < 0 && errno == EINTR)
		;
}

/*
 * How long a host thread spins for the daemon's answer to an ask, and for
 * the next call when the daemon says few are in flight: a wake-up costs
 * more than that, and the gap between two calls of one client is shorter.
 */
#define ANSWER_SPIN_NS 20000
#define NEXT_CALL_SPIN_NS 50000

int64_t host_ask(enum host_ask what, int64_t value)
{
	struct host_channel *ch = current;
	struct host_shm *shm = ch->shm;
	uint32_t v;

	shm->ask = (struct host_ask_msg){ HOST_MSG_ASK, what, ch->seq, value };
	host_chan_post(&shm->state, HOST_CHAN_ASK);
	/* The daemon gave up on this call: none answers. Taking the ask
	 * back fails if the daemon answered it meanwhile. */
	if (__atomic_load_n(&shm->abandoned, __ATOMIC_SEQ_CST) &&
	    host_chan_move(&shm->state, HOST_CHAN_ASK, HOST_CHAN_RUNNING))
		return -EIO;
	do
		v = host_chan_wait(&shm->state,
				   HOST_CHAN_BIT(HOST_CHAN_ANSWER) |
					   HOST_CHAN_BIT(HOST_CHAN_CLOSED),
				   HOST_CHAN_BIT(HOST_CHAN_ASK), ANSWER_SPIN_NS,
				   HOST_CHAN_HOST_WAITS, -1, NULL);
	while (HOST_CHAN_STATE(v) != HOST_CHAN_ANSWER &&
	       HOST_CHAN_STATE(v) != HOST_CHAN_CLOSED);
	if (HOST_CHAN_STATE(v) == HOST_CHAN_CLOSED)
		return -EIO;
	value = __atomic_load_n(&shm->ask.value, __ATOMIC_RELAXED);
	while (!host_chan_take(&shm->state, v, HOST_CHAN_RUNNING))
		v = __atomic_load_n(&shm->state, __ATOMIC_SEQ_CST);
	return value;
}

static struct host_dev *find_dev(uint64_t id)
{
	struct host_dev *d;

	g_mutex_lock(&registry.lock);
	d = registry.devices ? g_hash_table_lookup(registry.devices, &id)
			     : NULL;
	g_mutex_unlock(&registry.lock);
	return d;
}

static struct cusemu_file *find_file(uint64_t id)
{
	struct cusemu_file *f;

	g_mutex_lock(&registry.lock);
	f = registry.files ? g_hash_table_lookup(registry.files, &id) : NULL;
	g_mutex_unlock(&registry.lock);
	return f;
}

static void keep(GHashTable **table, uint64_t *id, void *what)
{
	g_mutex_lock(&registry.lock);
	if (!*table)
		*table = g_hash_table_new(g_int64_hash, g_int64_equal);
	g_hash_table_insert(*table, id, what);
	g_mutex_unlock(&registry.lock);
}

static void forget(GHashTable *table, uint64_t id)
{
	g_mutex_lock(&registry.lock);
	if (table)
		g_hash_table_remove(table, &id);
	g_mutex_unlock(&registry.lock);
}

/* "s\0s\0..." of len bytes, into a NULL-terminated vector. */
static char **split_words(const char *data, size_t len)
{
	GPtrArray *words = g_ptr_array_new();

	for (size_t at = 0; at < len;) {
		size_t n = strnlen(data + at, len - at);

		g_ptr_array_add(words, g_strndup(data + at, n));
		at += n + 1;
	}
	g_ptr_array_add(words, NULL);
	return (char **)g_ptr_array_free(words, FALSE);
}

static void put_text(struct host_shm *shm, const char *text)
{
	size_t n = text ? strnlen(text, sizeof(shm->data) - 1) : 0;

	if (n)
		memcpy(shm->data, text, n);
	shm->data[n] = '\0';
	shm->data_len = (uint32_t)n;
}

/* PROBE: data holds "name\0kernel\0version\0key\0value\0...". */
static long run_probe(struct host_shm *shm, const struct host_call_msg *c)
{
	g_auto(GStrv) words = NULL;
	struct host_dev *d;
	char *why = NULL;
	guint64 version;
	long ret = 0;

	if (c->model >= host_n_models || shm->data_len > sizeof(shm->data))
		return -EINVAL;
	words = split_words(shm->data, shm->data_len);
	if (!words[0] || !words[1] || !words[2] ||
	    !g_ascii_string_to_unsigned(words[2], 10, 0, G_MAXUINT, &version,
					NULL))
		return -EINVAL;
	d = g_new0(struct host_dev, 1);
	d->id = c->dev;
	d->inst.pub.model = host_models[c->model];
	d->inst.pub.name = g_strdup(words[0]);
	d->kernel = g_strdup(words[1]);
	d->kernel_version = (unsigned int)version;
	d->inst.made.params = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
					       g_free);
	for (char **w = words + 3; w[0] && w[1]; w += 2)
		g_hash_table_insert(d->inst.made.params, g_strdup(w[0]),
				    g_strdup(w[1]));
	cusemu_ratelimit_init(&d->inst.contract.bad_result);
	cusemu_ratelimit_init(&d->inst.contract.model_said);
	d->in_probe = true;
	if (d->inst.pub.model->probe)
		ret = d->inst.pub.model->probe(&d->inst.pub, &why);
	d->in_probe = false;
	shm->methods_set = d->methods_set;
	shm->methods = d->methods;
	g_strlcpy(shm->default_name, d->default_name ? d->default_name : "",
		  sizeof(shm->default_name));
	put_text(shm, why);
	g_free(why);
	if (ret < 0)
		return ret;	/* kept: the model may have started threads */
	keep(&registry.devices, &d->id, d);
	return ret;
}

static long run_remove(struct host_dev *d)
{
	if (d->inst.pub.model->remove)
		d->inst.pub.model->remove(&d->inst.pub);
	forget(registry.devices, d->id);
	/* The model's threads may still look at it: it stays allocated. */
	return 0;
}

static long run_control(struct host_dev *d, struct host_shm *shm)
{
	g_auto(GStrv) argv = NULL;
	g_autoptr(GString) out = g_string_new(NULL);
	long ret;

	if (!d->inst.pub.model->control)
		return -EOPNOTSUPP;
	argv = split_words(shm->data, MIN(shm->data_len, sizeof(shm->data)));
	ret = d->inst.pub.model->control(&d->inst.pub, argv, out);
	put_text(shm, out->str);
	return ret;
}

static long run_open(struct host_dev *d, const struct host_call_msg *c)
{
	struct {
		struct cusemu_file file;
		uint64_t id;
	} *f = g_new0(typeof(*f), 1);
	long ret = 0;

	f->file.dev = &d->inst.pub;
	f->file.flags = c->flags;
	f->file.opener = c->pid;
	f->id = c->file;
	if (d->inst.pub.model->open)
		ret = d->inst.pub.model->open(&d->inst.pub, &f->file);
	if (ret < 0)
		g_free(f);
	else
		keep(&registry.files, &f->id, &f->file);
	return ret;
}

/* The call as the daemon holds it, for the uaccess helpers. */
static void load_call(struct host_channel *ch, struct host_dev *d,
		      struct cusemu_file *file, const struct host_call_msg *c)
{
	struct host_shm *shm = ch->shm;
	struct cusemu_call *call = &ch->call;

	cusemu_call_init(call, &d->inst.pub, file, c->cmd, c->arg,
			 shm->compat, c->pid);
	host_ranges_get(&call->in, shm->in,
			MIN(shm->in_count, CUSEMU_USER_MAX_RANGES));
	host_ranges_get(&call->out, shm->out,
			MIN(shm->out_count, CUSEMU_USER_MAX_RANGES));
	call->in.bytes = shm->in_bytes;
	call->out.bytes = shm->out_bytes;
	call->in_data = shm->in_data;
	call->in_avail = MIN(shm->in_avail, CUSEMU_USER_MAX_BYTES);
	call->out_data = shm->out_data;
	call->out_avail = MIN(shm->out_avail, CUSEMU_USER_MAX_BYTES);
	call->phase = shm->phase;
	call->method = shm->method;
	shm->step[sizeof(shm->step) - 1] = '\0';
	call->step = shm->step[0] ? shm->step : NULL;
	ch->lock_depth = shm->lock_depth;
	if (file)
		file->flags = c->flags;
}

static void store_call(struct host_shm *shm, const struct cusemu_call *call)
{
	shm->in_count = call->in.count;
	shm->out_count = call->out.count;
	host_ranges_put(shm->in, &call->in);
	host_ranges_put(shm->out, &call->out);
	shm->in_bytes = call->in.bytes;
	shm->out_bytes = call->out.bytes;
	shm->out_used = call->out_used;
	shm->error = call->error;
	shm->pending = call->pending;
	shm->named_out = call->named_out;
}

/* The row the daemon's trampoline stands for, found by the command. */
static long run_row(struct cusemu_call *call, enum host_slot slot)
{
	const struct cusemu_device_model *m = call->dev->model;
	bool compat = slot == HOST_SLOT_COMPAT_ROW ||
		      slot == HOST_SLOT_COMPAT_FETCH;
	const struct cusemu_ioctl *row = cusemu_ioctl_lookup(
		compat ? m->compat_table : m->native_table, call->cmd);

	if (slot == HOST_SLOT_NATIVE_ROW || slot == HOST_SLOT_COMPAT_ROW)
		return row && row->handler ? row->handler(call->dev, call->file,
							  call->cmd, call->arg)
					   : -ENOIOCTLCMD;
	return row && row->fetch ? row->fetch(call->dev, call->file,
					      call->cmd, call->arg)
				 : -ENOIOCTLCMD;
}

static long run_method(struct cusemu_call *call, enum host_slot slot)
{
	const struct cusemu_device_model *m = call->dev->model;
	cusemu_ioctl_fn fn = NULL;

	switch (slot) {
	case HOST_SLOT_IOCTL: fn = m->ioctl; break;
	case HOST_SLOT_UNLOCKED_IOCTL: fn = m->unlocked_ioctl; break;
	case HOST_SLOT_COMPAT_IOCTL: fn = m->compat_ioctl; break;
	case HOST_SLOT_IOCTL_NATIVE: fn = m->ioctl_native; break;
	case HOST_SLOT_IOCTL_COMPAT: fn = m->ioctl_compat; break;
	case HOST_SLOT_IOCTL_FETCH:
		return m->ioctl_fetch ? m->ioctl_fetch(call->dev, call->file,
						       call->cmd, call->arg)
				      : -ENOIOCTLCMD;
	default:
		return run_row(call, slot);
	}
	return fn ? fn(call->dev, call->file, call->cmd, call->arg)
		  : -ENOIOCTLCMD;
}

static long run_ioctl(struct host_channel *ch, struct host_dev *d,
		      struct cusemu_file *file, const struct host_call_msg *c)
{
	long ret;

	load_call(ch, d, file, c);
	ch->req.call = &ch->call;
	ret = run_method(&ch->call, c->slot);
	ch->req.call = NULL;
	store_call(ch->shm, &ch->call);
	return ret;
}

static long run_call(struct host_channel *ch, const struct host_call_msg *c)
{
	struct host_shm *shm = ch->shm;
	struct host_dev *d;
	struct cusemu_file *file = NULL;
	const struct cusemu_device_model *m;
	size_t size;

	/* What the daemon's thread holds for this call, whatever the last
	 * one of the channel left: the daemon lets go of a lock a call left
	 * held when the call ends. */
	ch->lock_depth = shm->lock_depth;
	if (c->slot == HOST_SLOT_PROBE)
		return run_probe(shm, c);
	d = find_dev(c->dev);
	if (!d)
		return -ENODEV;
	m = d->inst.pub.model;
	if (c->slot != HOST_SLOT_OPEN && c->file) {
		file = find_file(c->file);
		if (!file)
			return -EBADF;
		file->flags = c->flags;
	}
	switch (c->slot) {
	case HOST_SLOT_REMOVE:
		return run_remove(d);
	case HOST_SLOT_SANDBOXED: {
		char *why = NULL;
		long ret = m->sandboxed ? m->sandboxed(&d->inst.pub, &why) : 0;

		put_text(shm, why);
		g_free(why);
		return ret;
	}
	case HOST_SLOT_CONTROL:
		return run_control(d, shm);
	case HOST_SLOT_OPEN:
		return run_open(d, c);
	case HOST_SLOT_RELEASE:
		if (file && m->release)
			m->release(&d->inst.pub, file);
		forget(registry.files, c->file);
		g_free(file);
		return 0;
	case HOST_SLOT_READ:
		if (!file || !m->read)
			return -EINVAL;
		size = MIN(c->size, sizeof(shm->data));
		return m->read(&d->inst.pub, file, shm->data, size);
	case HOST_SLOT_WRITE:
		if (!file || !m->write)
			return -EINVAL;
		size = MIN(c->size, sizeof(shm->data));
		return m->write(&d->inst.pub, file, shm->data, size);
	case HOST_SLOT_POLL:
		return file && m->poll ? (long)m->poll(&d->inst.pub, file)
				       : -EINVAL;
	default:
		if (c->slot >= HOST_SLOTS)
			return -EINVAL;
		return run_ioctl(ch, d, file, c);
	}
}

/* The next call's message, or false when the channel is closed. */
static bool next_call(struct host_channel *ch, struct host_call_msg *c)
{
	struct host_shm *shm = ch->shm;
	uint32_t want = HOST_CHAN_BIT(HOST_CHAN_CALL) |
			HOST_CHAN_BIT(HOST_CHAN_CLOSED);
	/* A spin pays while the daemon has CPUs to spare and its calls come
	 * closer together than the spin lasts. */
	uint64_t spin = ch->spin_next &&
				__atomic_load_n(&shm->spin, __ATOMIC_RELAXED)
				? NEXT_CALL_SPIN_NS
				: 0;
	uint32_t v;

	for (;;) {
		v = host_chan_wait(&shm->state, want,
				   HOST_CHAN_BIT(HOST_CHAN_DONE) |
					   HOST_CHAN_BIT(HOST_CHAN_IDLE),
				   spin, HOST_CHAN_HOST_WAITS, -1, &ch->spin);
		if (HOST_CHAN_STATE(v) == HOST_CHAN_CLOSED)
			return false;
		if (HOST_CHAN_STATE(v) != HOST_CHAN_CALL)
			continue;
		*c = shm->call;
		/* Not over a CLOSED that came meanwhile. */
		if (host_chan_take(&shm->state, v, HOST_CHAN_RUNNING))
			break;
	}
	/* Not the time since its own DONE: a daemon thread that slept
	 * through it, as it does after a call the host slept for, would
	 * keep the host asleep for every call after it. */
	ch->spin_next = c->idle_ns < NEXT_CALL_SPIN_NS;
	return true;
}

static gpointer channel_thread(gpointer data)
{
	struct host_channel *ch = data;
	struct host_shm *shm = ch->shm;

	current = ch;
	ch->tid = (pid_t)syscall(SYS_gettid);
	__atomic_store_n(&shm->tid, ch->tid, __ATOMIC_RELAXED);
	host_fault_thread_init();
	host_fault_set_channel(ch->id);
	for (;;) {
		struct host_call_msg c;
		struct host_done_msg done = { .type = HOST_MSG_DONE };
		uint64_t start;

		if (!next_call(ch, &c))
			break;
		start = host_now_ns();
		g_mutex_lock(&ch->lock);
		cusemu_request_init(&ch->req, NULL, NULL);
		ch->seq = c.seq;
		g_mutex_unlock(&ch->lock);
		cusemu_request_set_current(&ch->req);
		done.seq = c.seq;
		done.result = run_call(ch, &c);
		cusemu_request_set_current(NULL);
		g_mutex_lock(&ch->lock);
		ch->seq = 0;
		cusemu_request_clear(&ch->req);
		g_mutex_unlock(&ch->lock);
		done.ran_ns = (uint32_t)MIN(host_now_ns() - start, UINT32_MAX);
		shm->done = done;
		host_chan_post(&shm->state, HOST_CHAN_DONE);
		/* No daemon thread waits for it any more: the reader takes it
		 * from the socket, and the channel goes. */
		if (__atomic_load_n(&shm->abandoned, __ATOMIC_SEQ_CST)) {
			send_msg(ch->sock, &done, sizeof(done));
			break;
		}
	}
	/* The daemon closed it, or gave up on its call; or the daemon's end. */
	close(ch->sock);
	ch->sock = -1;
	return NULL;
}

void host_serve_channel(int sock, int memfd, int id)
{
	struct host_channel *ch;
	void *shm = mmap(NULL, sizeof(struct host_shm), PROT_READ | PROT_WRITE,
			 MAP_SHARED, memfd, 0);

	close(memfd);
	if (shm == MAP_FAILED || id < 0 || id > 65535) {
		close(sock);
		return;
	}
	ch = g_new0(struct host_channel, 1);
	ch->id = id;
	ch->sock = sock;
	ch->shm = shm;
	g_mutex_init(&ch->lock);
	g_mutex_lock(&registry.lock);
	if (!registry.channels)
		registry.channels = g_ptr_array_new();
	if (registry.channels->len <= (guint)id)
		g_ptr_array_set_size(registry.channels, id + 1);
	registry.channels->pdata[id] = ch;
	g_mutex_unlock(&registry.lock);
	g_thread_unref(g_thread_new("cusemu-host-call", channel_thread, ch));
}

static struct host_channel *channel(int id)
{
	struct host_channel *ch = NULL;

	g_mutex_lock(&registry.lock);
	if (registry.channels && id >= 0 && (guint)id < registry.channels->len)
		ch = registry.channels->pdata[id];
	g_mutex_unlock(&registry.lock);
	return ch;
}

void host_interrupt(int id, uint64_t seq)
{
	struct host_channel *ch = channel(id);

	if (!ch)
		return;
	g_mutex_lock(&ch->lock);
	if (ch->seq && ch->seq == seq)
		cusemu_wait_ctx_interrupt(&ch->req.wait);
	g_mutex_unlock(&ch->lock);
}

void host_sample(int id)
{
	struct host_channel *ch = channel(id);

	if (ch && ch->tid)
		host_fault_sample(ch->tid, id);
}
