/* SPDX-License-Identifier: MIT */
/*
 * The portable surface of the model API as cusemud and its model host give
 * it: time, waits on a wait queue, timers (<cusemu/sched.h>), memory and
 * strings (<cusemu/memory.h>) and the log (<cusemu/log.h>). A module that
 * cusemu-kmod(1) writes maps the same calls onto the kernel's own (the
 * SDK's kernel/cusemu-kmod.c). Waits go through cusemu_cond_wait_until(),
 * which each process gives in its own way (lock.c, host/sdk.c).
 */
#define G_LOG_DOMAIN "cusemu-model"

#include <stdarg.h>
#include <string.h>
#include <time.h>

#include "cusemu/device.h"
#include "cusemu/log.h"
#include "cusemu/memory.h"
#include "cusemu/sched.h"

uint64_t cusemu_time_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void cusemu_waitq_init(struct cusemu_waitq *q)
{
	g_cond_init(&q->cond);
}

void cusemu_wake_up(struct cusemu_waitq *q)
{
	g_cond_broadcast(&q->cond);
}

int cusemu_wait_timeout(struct cusemu_waitq *q, struct cusemu_mutex *lock,
			unsigned int timeout_ms)
{
	gint64 end = g_get_monotonic_time() + (gint64)timeout_ms * 1000;

	if (cusemu_cond_wait_until(&q->cond, &lock->m, end))
		return 1;
	if (cusemu_signal_pending())
		return -EINTR;
	/* A wake-up that glib's wait did not report as one counts too. */
	return g_get_monotonic_time() < end ? 1 : 0;
}

/*
 * A timer is a thread that sleeps until the run due, made with the timer:
 * a model has few timers, a thread is what a work item of the kernel's
 * runs on, and a start cannot fail. It is named cusemu-timer.
 */
struct cusemu_timer {
	cusemu_timer_fn fn;
	void *data;
	GMutex lock;		/* all below */
	GCond changed;		/* due, running or quit changed */
	GThread *thread;
	uint64_t due;		/* cusemu_time_ns() of the next run; 0: none */
	unsigned int stopping;	/* stops waiting for a run: starts dropped */
	bool running;
	bool quit;
};

static gpointer timer_thread(gpointer data)
{
	struct cusemu_timer *t = data;

	g_mutex_lock(&t->lock);
	while (!t->quit) {
		uint64_t now = cusemu_time_ns();

		if (!t->due) {
			g_cond_wait(&t->changed, &t->lock);
			continue;
		}
		if (now < t->due) {
			g_cond_wait_until(&t->changed, &t->lock,
					  g_get_monotonic_time() +
						  (gint64)((t->due - now + 999) / 1000));
			continue;
		}
		t->due = 0;
		t->running = true;
		g_mutex_unlock(&t->lock);
		t->fn(t->data);
		g_mutex_lock(&t->lock);
		t->running = false;
		g_cond_broadcast(&t->changed);
	}
	g_mutex_unlock(&t->lock);
	return NULL;
}

struct cusemu_timer *cusemu_timer_new(cusemu_timer_fn fn, void *data)
{
	struct cusemu_timer *t = g_try_new0(struct cusemu_timer, 1);

	if (!t)
		return NULL;
	t->fn = fn;
	t->data = data;
	g_mutex_init(&t->lock);
	g_cond_init(&t->changed);
	t->thread = g_thread_try_new("cusemu-timer", timer_thread, t, NULL);
	if (!t->thread) {
		g_cond_clear(&t->changed);
		g_mutex_clear(&t->lock);
		g_free(t);
		return NULL;
	}
	return t;
}

void cusemu_timer_start(struct cusemu_timer *t, uint64_t delay_ns)
{
	g_mutex_lock(&t->lock);
	if (!t->stopping && !t->quit) {
		t->due = cusemu_time_ns() + delay_ns;
		if (!t->due)
			t->due = 1;
		g_cond_broadcast(&t->changed);
	}
	g_mutex_unlock(&t->lock);
}

void cusemu_timer_stop(struct cusemu_timer *t)
{
	g_mutex_lock(&t->lock);
	t->due = 0;
	if (g_thread_self() != t->thread) {
		t->stopping++;
		while (t->running)
			g_cond_wait(&t->changed, &t->lock);
		t->due = 0;
		t->stopping--;
	}
	g_cond_broadcast(&t->changed);
	g_mutex_unlock(&t->lock);
}

void cusemu_timer_free(struct cusemu_timer *t)
{
	if (!t)
		return;
	cusemu_timer_stop(t);
	g_mutex_lock(&t->lock);
	t->quit = true;
	g_cond_broadcast(&t->changed);
	g_mutex_unlock(&t->lock);
	g_thread_join(t->thread);
	g_cond_clear(&t->changed);
	g_mutex_clear(&t->lock);
	g_free(t);
}

void *cusemu_zalloc(size_t size)
{
	return g_try_malloc0(size ? size : 1);
}

void cusemu_free(void *ptr)
{
	g_free(ptr);
}

ssize_t cusemu_strscpy(char *dst, const char *src, size_t size)
{
	size_t len;

	if (!size)
		return -E2BIG;
	len = strnlen(src, size);
	if (len == size) {
		memcpy(dst, src, size - 1);
		dst[size - 1] = '\0';
		return -E2BIG;
	}
	memcpy(dst, src, len + 1);
	return (ssize_t)len;
}

int cusemu_snprintf(char *buf, size_t size, const char *format, ...)
{
	va_list ap;
	int n;

	va_start(ap, format);
	n = g_vsnprintf(buf, size, format, ap);
	va_end(ap);
	return n;
}

char *cusemu_strdup_printf(const char *format, ...)
{
	va_list ap;
	char *s;

	va_start(ap, format);
	s = g_strdup_vprintf(format, ap);
	va_end(ap);
	return s;
}

void cusemu_dev_log(const struct cusemu_device *dev,
		    enum cusemu_log_level level, const char *format, ...)
{
	static const GLogLevelFlags levels[] = {
		[CUSEMU_LOG_ERR] = G_LOG_LEVEL_CRITICAL,
		[CUSEMU_LOG_WARNING] = G_LOG_LEVEL_WARNING,
		[CUSEMU_LOG_INFO] = G_LOG_LEVEL_MESSAGE,
	};
	g_autofree char *text = NULL;
	char domain[80];
	va_list ap;

	va_start(ap, format);
	text = g_strdup_vprintf(format, ap);
	va_end(ap);
	/* The domain a built-in model's own G_LOG_DOMAIN has. */
	g_snprintf(domain, sizeof(domain), "cusemu-%s", dev->model->name);
	g_log(domain, level <= CUSEMU_LOG_INFO ? levels[level]
					       : G_LOG_LEVEL_MESSAGE,
	      "%s: %s", dev->name, text);
}
