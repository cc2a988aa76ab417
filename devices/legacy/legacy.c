/* SPDX-License-Identifier: MIT */
/*
 * legacy: a driver of the big kernel lock era. It has only ->ioctl, and its
 * counter and list are safe only because the big lock is held around it.
 */
#define G_LOG_DOMAIN "cusemu-legacy"

#include <glib.h>

#include "cusemu/abi/legacy.h"
#include "cusemu/device.h"
#include "cusemu/report.h"
#include "cusemu/sched.h"
#include "cusemu/uaccess.h"

/*
 * No walk goes further, whatever a race did to the list: without the lock
 * the count may come out wrong, but the call always ends.
 */
#define LEGACY_WALK_CAP 1000000u

struct legacy_node {
	struct legacy_node *next;	/* the list, as the driver sees it */
	struct legacy_node *all_next;	/* every node made, for freeing */
	__u32 value;
};

struct legacy {
	/* Only safe under the big lock, as the driver assumes. */
	long counter;
	struct legacy_node *head;

	/*
	 * Not the driver's: what keeps its races from becoming use after
	 * free when --lock=none takes the lock away. Every node sits on the
	 * `all` stack (so that nodes a race dropped from the list are freed
	 * too); RESET retires that stack and frees it only when no call is
	 * inside the list, else parks it in the graveyard until a later
	 * RESET or the device's removal.
	 */
	struct legacy_node *all;
	int walkers;
	GMutex retire_lock;
	GSList *graveyard;

	unsigned int max_nodes;
	unsigned int busy_window_us;
};

/* Spin, not sleep: sleeping lets go of the big lock, as schedule() did. */
static void legacy_busy_wait(unsigned int us)
{
	gint64 end = g_get_monotonic_time() + us;

	while (g_get_monotonic_time() < end)
		;
}

/*
 * Read, wait, write back: two callers inside the window write the same
 * value and one increment is lost. That race is what the big lock hid.
 * Relaxed atomics keep each access whole without making the update atomic.
 */
static void legacy_counter_inc(struct legacy *l)
{
	volatile long v = __atomic_load_n(&l->counter, __ATOMIC_RELAXED);

	legacy_busy_wait(l->busy_window_us);
	__atomic_store_n(&l->counter, v + 1, __ATOMIC_RELAXED);
}

static long legacy_counter_get(struct legacy *l)
{
	return __atomic_load_n(&l->counter, __ATOMIC_RELAXED);
}

static void legacy_walk_begin(struct legacy *l)
{
	g_atomic_int_inc(&l->walkers);
}

static void legacy_walk_end(struct legacy *l)
{
	g_atomic_int_add(&l->walkers, -1);
}

static void legacy_own(struct legacy *l, struct legacy_node *node)
{
	struct legacy_node *top;

	do {
		top = g_atomic_pointer_get(&l->all);
		node->all_next = top;
	} while (!g_atomic_pointer_compare_and_exchange(&l->all, top, node));
}

/*
 * Allocate, walk to the tail, link: no lock, as the driver relies on the
 * big lock. Two callers that find the same tail both link to it and one
 * node drops out. The full check rides on the walk, so it is bounded.
 */
static int legacy_list_append(struct legacy *l, __u32 value)
{
	struct legacy_node *n, *tail = NULL, *node;
	unsigned int count = 0;
	int ret = 0;

	legacy_walk_begin(l);
	for (n = g_atomic_pointer_get(&l->head); n;
	     n = g_atomic_pointer_get(&n->next)) {
		if (++count >= l->max_nodes) {
			ret = -ENOSPC;
			goto out;
		}
		tail = n;
	}
	node = g_new0(struct legacy_node, 1);
	node->value = value;
	legacy_own(l, node);
	legacy_busy_wait(l->busy_window_us);
	if (tail)
		g_atomic_pointer_set(&tail->next, node);
	else
		g_atomic_pointer_set(&l->head, node);
out:
	legacy_walk_end(l);
	return ret;
}

static __u32 legacy_list_len(struct legacy *l)
{
	struct legacy_node *n;
	__u32 count = 0;

	legacy_walk_begin(l);
	for (n = g_atomic_pointer_get(&l->head); n && count < LEGACY_WALK_CAP;
	     n = g_atomic_pointer_get(&n->next))
		count++;
	legacy_walk_end(l);
	return count;
}

static void legacy_free_chain(gpointer chain)
{
	struct legacy_node *n = chain, *next;

	for (; n; n = next) {
		next = n->all_next;
		g_free(n);
	}
}

/*
 * Retire every node made so far. Any call that could still hold one of
 * them counted itself in `walkers` before it touched the list, so none is
 * left once `walkers` reads 0 after the swap. Under the big lock that is
 * always so, and the list is freed at once.
 */
static void legacy_reset(struct legacy *l)
{
	struct legacy_node *chain;
	GSList *dead = NULL;

	__atomic_store_n(&l->counter, 0, __ATOMIC_RELAXED);
	g_mutex_lock(&l->retire_lock);
	chain = g_atomic_pointer_exchange(&l->all, NULL);
	g_atomic_pointer_exchange(&l->head, NULL);
	if (chain)
		l->graveyard = g_slist_prepend(l->graveyard, chain);
	if (!g_atomic_int_get(&l->walkers)) {
		dead = l->graveyard;
		l->graveyard = NULL;
	}
	g_mutex_unlock(&l->retire_lock);
	g_slist_free_full(dead, legacy_free_chain);
}

/* The handlers, one per command; the switch and the tables share them. */

static long legacy_inc(struct cusemu_device *dev, struct cusemu_file *file,
		       unsigned int cmd, unsigned long arg)
{
	legacy_counter_inc(dev->priv);
	return 0;
}

static long legacy_get(struct cusemu_device *dev, struct cusemu_file *file,
		       unsigned int cmd, unsigned long arg)
{
	long v = legacy_counter_get(dev->priv);

	return cusemu_put_user(v, arg);
}

/* The ioctl32 handler of LEGACY_GET: an i386 long is 32 bits wide. */
static long legacy_get32(struct cusemu_device *dev, struct cusemu_file *file,
			 unsigned int cmd, unsigned long arg)
{
	long v = legacy_counter_get(dev->priv);

	if (v < 0 || v > (long)UINT32_MAX)
		return -EOVERFLOW;
	return cusemu_put_user((__u32)v, cusemu_compat_ptr((uint32_t)arg));
}

static long legacy_list_add(struct cusemu_device *dev,
			    struct cusemu_file *file, unsigned int cmd,
			    unsigned long arg)
{
	__u32 value;

	if (cusemu_get_user(value, arg))
		return -EFAULT;
	return legacy_list_append(dev->priv, value);
}

static long legacy_list_count(struct cusemu_device *dev,
			      struct cusemu_file *file, unsigned int cmd,
			      unsigned long arg)
{
	return cusemu_put_user(legacy_list_len(dev->priv), arg);
}

static long legacy_do_reset(struct cusemu_device *dev,
			    struct cusemu_file *file, unsigned int cmd,
			    unsigned long arg)
{
	legacy_reset(dev->priv);
	return 0;
}

static long legacy_report(struct cusemu_device *dev, struct cusemu_file *file,
			  unsigned int cmd, unsigned long arg)
{
	return cusemu_put_report(arg);
}

/*
 * The driver's one method, as a 2.6 driver wrote it, counting on the big
 * lock around it. A command it does not know is -ENOTTY: sys_ioctl of the
 * time passed a driver's answer straight to the caller.
 */
static long legacy_ioctl(struct cusemu_device *dev, struct cusemu_file *file,
			 unsigned int cmd, unsigned long arg)
{
	/* The global table's "no handler" rows send 32-bit callers here. */
	if (cusemu_in_compat_syscall())
		arg = cusemu_compat_ptr((uint32_t)arg);

	switch (cmd) {
	case LEGACY_INC:
		return legacy_inc(dev, file, cmd, arg);
	case LEGACY_GET:
		return legacy_get(dev, file, cmd, arg);
	case LEGACY_LIST_ADD:
		return legacy_list_add(dev, file, cmd, arg);
	case LEGACY_LIST_LEN:
		return legacy_list_count(dev, file, cmd, arg);
	case LEGACY_RESET:
		return legacy_do_reset(dev, file, cmd, arg);
	case LEGACY_REPORT:
		return legacy_report(dev, file, cmd, arg);
	default:
		return -ENOTTY;
	}
}

static int legacy_probe(struct cusemu_device *dev, char **why)
{
	struct legacy *l = g_new0(struct legacy, 1);

	g_mutex_init(&l->retire_lock);
	l->max_nodes = cusemu_device_param_u64(dev, "max_nodes");
	l->busy_window_us = cusemu_device_param_u64(dev, "busy_window_us");
	dev->priv = l;
	return 0;
}

static void legacy_remove(struct cusemu_device *dev)
{
	struct legacy *l = dev->priv;

	legacy_free_chain(l->all);
	g_slist_free_full(l->graveyard, legacy_free_chain);
	g_mutex_clear(&l->retire_lock);
	g_free(l);
}

/*
 * ->ioctl is the method; this table is what the compatible rows below
 * resolve to, with the handlers the switch calls.
 */
static const struct cusemu_ioctl legacy_native[] = {
	CUSEMU_IOCTL_NONE(LEGACY_INC, legacy_inc),
	CUSEMU_IOCTL_IOC(LEGACY_GET, legacy_get),
	CUSEMU_IOCTL_IOC(LEGACY_LIST_ADD, legacy_list_add),
	CUSEMU_IOCTL_IOC(LEGACY_LIST_LEN, legacy_list_count),
	CUSEMU_IOCTL_NONE(LEGACY_RESET, legacy_do_reset),
	CUSEMU_IOCTL_IOC(LEGACY_REPORT, legacy_report),
	CUSEMU_IOCTL_END
};

/* What the driver registers in the global ioctl32 table. */
static const struct cusemu_ioctl legacy_compat[] = {
	CUSEMU_IOCTL_IOC(LEGACY_GET32, legacy_get32),
	CUSEMU_COMPAT_SAME(LEGACY_INC),
	CUSEMU_COMPAT_SAME(LEGACY_LIST_ADD),
	CUSEMU_COMPAT_SAME(LEGACY_LIST_LEN),
	CUSEMU_COMPAT_SAME(LEGACY_RESET),
	CUSEMU_COMPAT_SAME(LEGACY_REPORT),
	CUSEMU_IOCTL_END
};

static const struct cusemu_param legacy_params[] = {
	{ .key = "max_nodes", .type = CUSEMU_PARAM_UINT,
	  .default_value = "100000",
	  .help = "most nodes LEGACY_LIST_ADD makes the list hold",
	  .min = 1, .max = LEGACY_WALK_CAP },
	{ .key = "busy_window_us", .type = CUSEMU_PARAM_UINT,
	  .default_value = "3",
	  .help = "microseconds between read and write of an update",
	  .min = 0, .max = 1000 },
	CUSEMU_PARAM_END
};

const struct cusemu_device_model cusemu_model_legacy = {
	.name = "legacy",
	.summary = "a BKL-era driver with only ->ioctl, whose state is safe "
		   "only under the big lock (LEGACY_*)",
	.node_prefix = "legacy",
	.params = legacy_params,
	.probe = legacy_probe,
	.remove = legacy_remove,
	.ioctl = legacy_ioctl,
	.native_table = legacy_native,
	.compat_table = legacy_compat,
};
