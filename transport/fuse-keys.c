/* SPDX-License-Identifier: MIT */
/*
 * libfuse gives every session a pthread key (fuse_session_new()) for the
 * per-thread pipe of splice transfers. A CUSE session never splices: its
 * CUSE_INIT leaves conn.want without FUSE_CAP_SPLICE_*, and only the
 * splice paths set the key. glibc has PTHREAD_KEYS_MAX (1024) keys per
 * process, so a key per session would end the daemon near its 1018th
 * device. While a session is made, the key it asks for is one shared by
 * all sessions, and deleting that key drops a reference.
 *
 * This interposes pthread_key_create() and pthread_key_delete() for the
 * whole process; every other caller gets glibc's own behaviour.
 */
#include <dlfcn.h>
#include <pthread.h>

#include "fuse-keys.h"

/* glibc's own, exported beside pthread_key_create (no dlsym(), which
 * may make a key itself, in the way of the first creation). */
extern int __pthread_key_create(pthread_key_t *key, void (*destr)(void *));

/* Whether this thread is making a session: pthread_key_create() is
 * called by libfuse, with nothing of ours to carry it. */
static __thread bool sharing;
/* The one key shared by every session of the process, as the key table
 * it spares is the process's. */
static struct {
	pthread_mutex_t lock;
	pthread_key_t key;
	unsigned long refs;	/* sessions holding key */
} shared = { .lock = PTHREAD_MUTEX_INITIALIZER };

void cusemu_fuse_keys_share(bool on)
{
	sharing = on;
}

int pthread_key_create(pthread_key_t *key, void (*destr)(void *))
{
	int err = 0;

	if (!sharing)
		return __pthread_key_create(key, destr);
	pthread_mutex_lock(&shared.lock);
	if (!shared.refs)
		err = __pthread_key_create(&shared.key, destr);
	if (!err) {
		shared.refs++;
		*key = shared.key;
	}
	pthread_mutex_unlock(&shared.lock);
	return err;
}

int pthread_key_delete(pthread_key_t key)
{
	static int (*real_delete)(pthread_key_t);
	bool last = true;

	pthread_mutex_lock(&shared.lock);
	if (shared.refs && key == shared.key)
		last = --shared.refs == 0;
	pthread_mutex_unlock(&shared.lock);
	if (!last)
		return 0;
	if (!real_delete)
		real_delete = (int (*)(pthread_key_t))dlsym(RTLD_NEXT,
							    "pthread_key_delete");
	return real_delete ? real_delete(key) : 0;
}
