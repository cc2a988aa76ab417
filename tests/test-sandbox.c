/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the sandbox: the allow-list against this architecture and
 * the tables of docs/security.md; capabilities dropped in every thread, the
 * user switch and the seccomp filter, each in a subprocess of its own (they
 * cannot be undone), and skipped where the test does not run as root.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>
#include <seccomp.h>

#include "proc.h"
#include "sandbox.h"

/* CAP_SYS_PTRACE, which the /proc helper keeps, as /proc shows it. */
#define PTRACE_ONLY "0000000000080000"
#define NONE "0000000000000000"

#if defined(__SANITIZE_ADDRESS__)
/*
 * A subprocess that passed ends with _exit(): AddressSanitizer's leak
 * check at exit works by ptrace, which the filter it installed refuses.
 */
static void end_quietly(void)
{
	_exit(0);
}
#endif

/*
 * TRUE in the subprocess that runs a test of what cannot be undone; the
 * parent runs it there and checks that it passed, or that it was killed
 * (FALSE). Root only.
 */
static gboolean in_subprocess(gboolean killed)
{
	if (geteuid() != 0) {
		g_test_skip("needs root to drop capabilities and switch users");
		return FALSE;
	}
	if (g_test_subprocess()) {
#if defined(__SANITIZE_ADDRESS__)
		atexit(end_quietly);
#endif
		return TRUE;
	}
	g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
	if (killed)
		g_test_trap_assert_failed();
	else
		g_test_trap_assert_passed();
	return FALSE;
}

static int seal_nothing(uint32_t arg)
{
	return 0;
}

/* A /proc helper in a child, asked from now on; its pid, its socket in
 * *sock. */
static pid_t fork_proc_helper(int *sock)
{
	int sv[2];
	pid_t helper;

	g_assert_cmpint(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0,
				   sv), ==, 0);
	helper = fork();
	g_assert_cmpint(helper, >=, 0);
	if (helper == 0) {
		close(sv[0]);
		cusemu_proc_serve(sv[1], seal_nothing);
	}
	close(sv[1]);
	cusemu_proc_use_helper(sv[0]);
	*sock = sv[0];
	return helper;
}

/*
 * The parent: runs the test in a subprocess and checks that it passed;
 * false. The subprocess: a /proc helper forked and asked from now on;
 * true, its pid and socket set.
 */
static bool with_proc_helper(pid_t *helper, int *sock)
{
	if (!g_test_subprocess()) {
		g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
		g_test_trap_assert_passed();
		return false;
	}
	*helper = fork_proc_helper(sock);
	return true;
}

/* The helper ends once its socket closes. */
static void end_proc_helper(pid_t helper, int sock)
{
	int status;

	close(sock);
	g_assert_cmpint(waitpid(helper, &status, 0), ==, helper);
}

/*
 * A helper that stops answering, as one stuck reading the program of a
 * client on a stalled file system (here stopped with SIGSTOP): the
 * question waits out the deadline and is unknown, the next ones are
 * unknown at once rather than queueing behind it, and once the helper
 * answers again (its late answer dropped), so do they.
 */
static void test_helper_deadline(void)
{
	int sock;
	pid_t helper;
	gint64 t;
	int got;

	if (!with_proc_helper(&helper, &sock))
		return;
	g_assert_cmpint(cusemu_proc_elf_class(getpid()), ==,
			sizeof(long) == 8 ? ELFCLASS64 : ELFCLASS32);

	g_assert_cmpint(kill(helper, SIGSTOP), ==, 0);
	t = g_get_monotonic_time();
	g_assert_cmpint(cusemu_proc_elf_class(getpid()), ==, -ETIMEDOUT);
	t = g_get_monotonic_time() - t;
	g_assert_cmpint(t, >=, 1900 * G_TIME_SPAN_MILLISECOND);
	g_assert_cmpint(t, <, 10 * G_TIME_SPAN_SECOND);
	t = g_get_monotonic_time();
	g_assert_cmpint(cusemu_proc_fd_of(getpid(), "/dev/null"), ==, -EAGAIN);
	g_assert_cmpint(g_get_monotonic_time() - t, <,
			250 * G_TIME_SPAN_MILLISECOND);

	g_assert_cmpint(kill(helper, SIGCONT), ==, 0);
	for (int i = 0; i < 100; i++) {
		got = cusemu_proc_elf_class(getpid());
		if (got != -EAGAIN)
			break;
		g_usleep(20 * 1000);
	}
	g_assert_cmpint(got, ==, sizeof(long) == 8 ? ELFCLASS64 : ELFCLASS32);
	end_proc_helper(helper, sock);
}

/*
 * A file at a path of length bytes under the temporary directory, made of
 * directories of 200-byte names; its descriptor, its path in *path.
 */
static int open_deep(size_t length, char **path)
{
	g_autofree char *top = g_dir_make_tmp("cusemu-deep-XXXXXX", NULL);
	GString *p = g_string_new(top);
	int fd;

	g_assert_nonnull(top);
	while (p->len + 1 + 200 < length) {
		g_string_append_c(p, '/');
		for (int i = 0; i < 200; i++)
			g_string_append_c(p, 'd');
		g_assert_cmpint(g_mkdir(p->str, 0700), ==, 0);
	}
	g_string_append_c(p, '/');
	while (p->len < length)
		g_string_append_c(p, 'f');
	fd = open(p->str, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	g_assert_cmpint(fd, >=, 0);
	*path = g_string_free(p, FALSE);
	return fd;
}

/* Take away what open_deep() made, from the file up to its top. */
static void remove_deep(char *path)
{
	size_t top = strlen(g_get_tmp_dir()) + strlen("/cusemu-deep-XXXXXX");
	char *slash;

	g_assert_cmpint(g_unlink(path), ==, 0);
	while ((slash = strrchr(path, '/')) && (size_t)(slash - path) >= top) {
		*slash = '\0';
		g_assert_cmpint(g_rmdir(path), ==, 0);
	}
}

/*
 * The helper finds a client's descriptor for a path of any length the
 * kernel gives: a node, or a file on a FUSE mount deep in a tree (the
 * ioctl32 log line names its fd).
 */
static void test_helper_long_path(void)
{
	static const size_t lengths[] = { 63, 64, 300, PATH_MAX - 1 };
	int sock;
	pid_t helper;

	if (!with_proc_helper(&helper, &sock))
		return;
	for (unsigned int i = 0; i < G_N_ELEMENTS(lengths); i++) {
		g_autofree char *path = NULL;
		int fd;

		if (strlen(g_get_tmp_dir()) + 40 > lengths[i])
			continue;
		fd = open_deep(lengths[i], &path);
		g_assert_cmpuint(strlen(path), ==, lengths[i]);
		g_assert_cmpint(cusemu_proc_fd_of(getpid(), path), ==, fd);
		close(fd);
		remove_deep(path);
	}
	end_proc_helper(helper, sock);
}

/* A thread that waits in read() on a pipe until it is written. */
static gpointer wait_in_read(gpointer data)
{
	int *fds = data;
	char c;

	fds[2] = (int)syscall(SYS_gettid);
	return GINT_TO_POINTER(read(fds[0], &c, 1));
}

/*
 * The helper reaches a process's memory only once the daemon allowed it
 * before the seal, and then only while the thread named waits in an ioctl
 * on the mount's device: not one that waits in read(), nor the asking
 * thread itself; after the seal, the daemon may not allow it any more.
 */
static void test_helper_reach_rules(void)
{
	int fds[3] = { -1, -1, 0 };
	uint64_t word = 42, got = 0;
	const struct iovec at = { &word, sizeof(word) };
	struct stat st;
	GThread *waiter;
	int sock;
	pid_t helper;

	if (!with_proc_helper(&helper, &sock))
		return;
	g_assert_false(cusemu_proc_reaches());
	g_assert_cmpint(cusemu_proc_reach((pid_t)syscall(SYS_gettid), &at, 1,
					  &got, sizeof(got), false), ==,
			-EPERM);

	g_assert_cmpint(pipe(fds), ==, 0);
	g_assert_cmpint(fstat(fds[0], &st), ==, 0);
	g_assert_cmpint(cusemu_proc_allow_reach(st.st_dev), ==, 0);
	g_assert_true(cusemu_proc_reaches());
	waiter = g_thread_new("reader", wait_in_read, fds);
	while (!g_atomic_int_get(&fds[2]))
		g_usleep(1000);
	g_usleep(50 * 1000);	/* in read() by now */
	/* On the very device it was allowed, but in read(), not ioctl(). */
	g_assert_cmpint(cusemu_proc_reach(fds[2], &at, 1, &got, sizeof(got),
					  false), ==, -EPERM);
	g_assert_cmpint(cusemu_proc_reach((pid_t)syscall(SYS_gettid), &at, 1,
					  &got, sizeof(got), false), ==,
			-EPERM);
	g_assert_cmpuint(got, ==, 0);
	g_assert_cmpint(write(fds[1], "x", 1), ==, 1);
	g_assert_cmpint(GPOINTER_TO_INT(g_thread_join(waiter)), ==, 1);

	g_assert_cmpint(cusemu_proc_seal(0), ==, 0);
	g_assert_cmpint(cusemu_proc_allow_reach(st.st_dev), ==, -EPERM);
	close(fds[0]);
	close(fds[1]);
	end_proc_helper(helper, sock);
}

static void test_seccomp_modes(void)
{
	enum cusemu_seccomp_mode mode;

	g_assert_true(cusemu_seccomp_mode_parse("enforce", &mode));
	g_assert_cmpint(mode, ==, CUSEMU_SECCOMP_ENFORCE);
	g_assert_true(cusemu_seccomp_mode_parse("log", &mode));
	g_assert_cmpstr(cusemu_seccomp_mode_name(mode), ==, "log");
	g_assert_true(cusemu_seccomp_mode_parse("off", &mode));
	g_assert_cmpstr(cusemu_seccomp_mode_name(mode), ==, "off");
	g_assert_false(cusemu_seccomp_mode_parse("kill", &mode));
	g_assert_false(cusemu_seccomp_mode_parse("", &mode));
}

/* Every entry names a call of this architecture once, with a reason. */
static void test_rules(void)
{
	g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);
	const struct cusemu_syscall_rule *r;

	for (r = cusemu_sandbox_rules; r->name; r++) {
		if (seccomp_arch_native() == SCMP_ARCH_X86_64 &&
		    seccomp_syscall_resolve_name(r->name) < 0)
			g_error("%s is no x86_64 system call", r->name);
		if (!g_hash_table_add(seen, (char *)r->name))
			g_error("%s is listed twice", r->name);
		g_assert_cmpuint(strlen(r->why), >, 10);
	}
	/* What the sandbox exists to refuse. */
	for (const char *const *no = (const char *const[]){
		     "execve", "execveat", "ptrace", "process_vm_readv",
		     "process_vm_writev", "fork", "vfork", "setuid", "capset",
		     "mount", "bpf", "init_module", "kill", NULL };
	     *no; no++)
		g_assert_false(g_hash_table_contains(seen, *no));
}

/*
 * The "| `call` |" rows of the index-th table (from 0) of the section
 * "The allow-lists" of docs/security.md.
 */
static GHashTable *readme_calls(guint index)
{
	const char *path = g_getenv("CUSEMU_SECURITY_DOC");
	GHashTable *calls = g_hash_table_new_full(g_str_hash, g_str_equal,
						  g_free, NULL);
	g_autofree char *text = NULL;
	g_auto(GStrv) lines = NULL;
	gboolean in_section = FALSE, in_table = FALSE;
	guint table = 0;

	if (!path || !g_file_get_contents(path, &text, NULL, NULL))
		g_error("set CUSEMU_SECURITY_DOC to the docs/security.md to check");
	lines = g_strsplit(text, "\n", -1);
	for (char **l = lines; *l; l++) {
		if (g_str_has_prefix(*l, "## "))
			in_section = !strcmp(*l, "## The allow-lists");
		if (!in_section)
			continue;
		if (in_table && !g_str_has_prefix(*l, "|"))
			table++;
		in_table = g_str_has_prefix(*l, "|");
		if (table == index && g_str_has_prefix(*l, "| `"))
			g_hash_table_add(calls,
					 g_strndup(*l + 3,
						   strcspn(*l + 3, "`")));
	}
	return calls;
}

static void assert_readme_table(guint index,
				const struct cusemu_syscall_rule *rules)
{
	g_autoptr(GHashTable) calls = readme_calls(index);
	guint n = 0;

	g_autoptr(GHashTable) names = g_hash_table_new(g_str_hash,
						       g_str_equal);

	/* A call may have a row per architecture. */
	for (const struct cusemu_syscall_rule *r = rules; r->name; r++) {
		if (!g_hash_table_contains(calls, r->name))
			g_error("docs/security.md's allow-list table %u lacks %s",
				index + 1, r->name);
		g_hash_table_add(names, (char *)r->name);
	}
	n = g_hash_table_size(names);
	g_assert_cmpuint(g_hash_table_size(calls), ==, n);
}

/* The daemon's allow-list, the /proc helper's, the FUSE unmounter's, what
 * a passthrough device and a user namespace of its own add to the first,
 * and a model host's. */
static void test_readme_table(void)
{
	assert_readme_table(0, cusemu_sandbox_rules);
	assert_readme_table(1, cusemu_sandbox_helper_rules);
	assert_readme_table(2, cusemu_sandbox_unmounter_rules);
	assert_readme_table(3, cusemu_sandbox_passthrough_rules);
	assert_readme_table(4, cusemu_sandbox_reach_rules);
	assert_readme_table(5, cusemu_sandbox_host_rules);
}

/* ---- in subprocesses */

/* Threads that exist before the sandbox, each waiting its own way. */
struct waiters {
	int pipe[2];
	GMutex lock;
	GCond cond;
	gboolean done;
	GThread *reader, *sleeper, *cond_waiter;
};

static gpointer read_until_written(gpointer data)
{
	struct waiters *w = data;
	char c;

	g_assert_cmpint(read(w->pipe[0], &c, 1), ==, 1);
	return NULL;
}

static gpointer sleep_until_done(gpointer data)
{
	struct waiters *w = data;

	/* poll(), not g_usleep(): the daemon's filter has no nanosleep. */
	while (!g_atomic_int_get(&w->done))
		poll(NULL, 0, 1);
	return NULL;
}

static gpointer wait_until_done(gpointer data)
{
	struct waiters *w = data;

	g_mutex_lock(&w->lock);
	while (!w->done)
		g_cond_wait(&w->cond, &w->lock);
	g_mutex_unlock(&w->lock);
	return NULL;
}

static void waiters_start(struct waiters *w)
{
	g_assert_cmpint(pipe(w->pipe), ==, 0);
	g_mutex_init(&w->lock);
	g_cond_init(&w->cond);
	w->reader = g_thread_new("reader", read_until_written, w);
	w->sleeper = g_thread_new("sleeper", sleep_until_done, w);
	w->cond_waiter = g_thread_new("cond-waiter", wait_until_done, w);
}

static void waiters_stop(struct waiters *w)
{
	g_assert_cmpint(write(w->pipe[1], "x", 1), ==, 1);
	g_mutex_lock(&w->lock);
	g_atomic_int_set(&w->done, TRUE);
	g_cond_broadcast(&w->cond);
	g_mutex_unlock(&w->lock);
	g_thread_join(w->reader);
	g_thread_join(w->sleeper);
	g_thread_join(w->cond_waiter);
}

/* A field of a status file ("Field:\tvalue") starts with value. */
static void assert_field(const char *who, const char *status,
			 const char *field, const char *value)
{
	g_autofree char *key = g_strdup_printf("\n%s:\t", field);
	const char *at = strstr(status, key);

	/* The first line has no newline before it. */
	if (g_str_has_prefix(status, key + 1))
		at = status + strlen(key + 1);
	else if (at)
		at += strlen(key);
	else
		g_error("%s: no %s", who, field);
	if (strncmp(at, value, strlen(value)))
		g_error("%s: %s %.*s, not %s", who, field,
			(int)strcspn(at, "\n"), at, value);
}

/*
 * This process's threads, listed while /proc/self/task may still be read:
 * the daemon's filter has no getdents64.
 */
static GArray *thread_ids(void)
{
	GArray *tids = g_array_new(FALSE, FALSE, sizeof(int));
	g_autoptr(GDir) dir = g_dir_open("/proc/self/task", 0, NULL);
	const char *name;

	g_assert_nonnull(dir);
	while ((name = g_dir_read_name(dir))) {
		int tid = atoi(name);

		g_array_append_val(tids, tid);
	}
	g_assert_cmpuint(tids->len, >, 1);
	return tids;
}

/* A field of each thread's status is value; one that ended holds nothing. */
static void assert_threads(GArray *tids, const char *field, const char *value)
{
	for (guint i = 0; i < tids->len; i++) {
		int tid = g_array_index(tids, int, i);
		g_autofree char *path =
			g_strdup_printf("/proc/self/task/%d/status", tid);
		g_autofree char *who = g_strdup_printf("thread %d", tid);
		g_autofree char *status = NULL;

		if (g_file_get_contents(path, &status, NULL, NULL))
			assert_field(who, status, field, value);
	}
}

static void assert_caps_of(GArray *tids, const char *kept)
{
	assert_threads(tids, "CapPrm", kept);
	assert_threads(tids, "CapEff", kept);
	assert_threads(tids, "CapInh", NONE);
	assert_threads(tids, "CapBnd", NONE);
	assert_threads(tids, "NoNewPrivs", "1");
}

static void assert_caps(const char *kept)
{
	g_autoptr(GArray) tids = thread_ids();

	assert_caps_of(tids, kept);
}

/*
 * A thread as libfuse makes its workers: it reads its own status (there
 * is no listing it from outside under the filter), then waits for the pipe.
 */
struct later {
	int pipe[2];
	char *status;
};

static void *read_one(void *data)
{
	struct later *l = data;
	char c;

	g_assert_true(g_file_get_contents("/proc/thread-self/status",
					  &l->status, NULL, NULL));
	g_assert_cmpint(read(l->pipe[0], &c, 1), ==, 1);
	return NULL;
}

/* The helper first, before the threads, as cusemud does. */
static void start_helper(struct cusemu_sandbox *sb)
{
	g_autoptr(GError) error = NULL;

	g_assert_true(cusemu_sandbox_start_helper(sb, &error));
	g_assert_no_error(error);
	g_assert_cmpint(sb->helper_pid, >, 0);
}

static void apply(struct cusemu_sandbox *sb)
{
	g_autoptr(GError) error = NULL;

	if (!sb->helper_pid)
		start_helper(sb);
	g_assert_true(cusemu_sandbox_apply(sb, &error));
	g_assert_no_error(error);
}

/* A field of /proc/PID/status starts with value. */
static void assert_status(pid_t pid, const char *field, const char *value)
{
	g_autofree char *path = g_strdup_printf("/proc/%d/status", (int)pid);
	g_autofree char *who = g_strdup_printf("pid %d", (int)pid);
	g_autofree char *status = NULL;

	g_assert_true(g_file_get_contents(path, &status, NULL, NULL));
	assert_field(who, status, field, value);
}

/*
 * The sealed helper: CAP_SYS_PTRACE alone, under its own filter (seccomp
 * "2", or "0" for off), and it answers for the sandboxed caller.
 */
static void assert_helper(const struct cusemu_sandbox *sb,
			  const char *seccomp)
{
	/* In /tmp: the caller may have become another user, whom $TMPDIR
	 * (a package build's, in its tree) does not let in. */
	g_autofree char *name = g_strdup("/tmp/cusemu-sandbox-XXXXXX");
	int fd = g_mkstemp(name);

	g_assert_cmpint(fd, >=, 0);
	assert_status(sb->helper_pid, "Name", "cusemud-proc");
	assert_status(sb->helper_pid, "CapPrm", PTRACE_ONLY);
	assert_status(sb->helper_pid, "CapEff", PTRACE_ONLY);
	assert_status(sb->helper_pid, "CapInh", NONE);
	assert_status(sb->helper_pid, "CapBnd", NONE);
	assert_status(sb->helper_pid, "NoNewPrivs", "1");
	assert_status(sb->helper_pid, "Seccomp", seccomp);
	g_assert_cmpint(cusemu_proc_elf_class(getpid()), ==,
			sizeof(long) == 8 ? ELFCLASS64 : ELFCLASS32);
	g_assert_cmpint(cusemu_proc_fd_of(getpid(), name), ==, fd);
	g_assert_cmpint(cusemu_proc_fd_of(getpid(), "/no/such/file"), ==,
			-ENOENT);
	g_assert_cmpint(cusemu_proc_elf_class(-1), ==, -EINVAL);
	unlink(name);
	close(fd);
}

/*
 * Root keeps no capability, in any thread, and neither do new threads; the
 * /proc helper keeps CAP_SYS_PTRACE alone.
 */
static void test_caps_every_thread(void)
{
	struct cusemu_sandbox sb = { .seccomp = CUSEMU_SECCOMP_ENFORCE };
	struct waiters w = { 0 };
	struct later l = { 0 };
	g_autoptr(GArray) tids = NULL;
	pthread_t later;

	if (!in_subprocess(FALSE))
		return;
	start_helper(&sb);
	waiters_start(&w);
	g_assert_cmpint(pipe(l.pipe), ==, 0);
	tids = thread_ids();
	apply(&sb);
	assert_caps_of(tids, NONE);
	assert_threads(tids, "Seccomp", "2");
	assert_helper(&sb, "2");
	/*
	 * A thread made now (clone, after clone3's ENOSYS) inherits it all.
	 * Made with pthread_create, as libfuse makes its workers:
	 * g_thread_new() would also name it, with a prctl the filter does
	 * not allow.
	 */
	g_assert_cmpint(pthread_create(&later, NULL, read_one, &l), ==, 0);
	g_assert_cmpint(write(l.pipe[1], "x", 1), ==, 1);
	g_assert_cmpint(pthread_join(later, NULL), ==, 0);
	assert_field("the later thread", l.status, "CapPrm", NONE);
	assert_field("the later thread", l.status, "CapEff", NONE);
	assert_field("the later thread", l.status, "CapBnd", NONE);
	assert_field("the later thread", l.status, "NoNewPrivs", "1");
	assert_field("the later thread", l.status, "Seccomp", "2");
	g_free(l.status);
	waiters_stop(&w);
}

static void test_user(void)
{
	struct cusemu_sandbox sb = { .seccomp = CUSEMU_SECCOMP_OFF };
	g_autoptr(GError) error = NULL;
	struct waiters w = { 0 };
	uid_t ruid, euid, suid;

	if (!in_subprocess(FALSE))
		return;
	g_assert_false(cusemu_sandbox_set_user(&sb, "no-such-user-here",
					       "--user", &error));
	g_assert_true(g_str_has_prefix(error->message, "--user: unknown user "
						       "'no-such-user-here'"));
	g_assert_true(cusemu_sandbox_set_user(&sb, "nobody", "--user", NULL));
	start_helper(&sb);
	waiters_start(&w);
	apply(&sb);
	assert_caps(NONE);
	/* The helper stays root and unfiltered (off), and serves the user. */
	assert_status(sb.helper_pid, "Uid", "0\t0\t0\t0");
	assert_helper(&sb, "0");
	g_assert_cmpint(getresuid(&ruid, &euid, &suid), ==, 0);
	g_assert_cmpuint(ruid, ==, sb.uid);
	g_assert_cmpuint(euid, ==, sb.uid);
	g_assert_cmpuint(suid, ==, sb.uid);
	g_assert_cmpuint(getegid(), ==, sb.gid);
	waiters_stop(&w);
	cusemu_sandbox_clear(&sb);
}

/* A forbidden call, after the sandbox of mode, in a subprocess. */
static void forbidden_call(enum cusemu_seccomp_mode mode, const char *call)
{
	struct cusemu_sandbox sb = { .seccomp = mode };
	int fd;

	apply(&sb);
	if (!strcmp(call, "fork")) {
		pid_t pid = fork();

		if (pid == 0)
			_exit(0);
		g_assert_cmpint(pid, >, 0);
		g_assert_cmpint(waitpid(pid, NULL, 0), ==, pid);
		return;
	}
	/* Allowed: the one family syslog uses. */
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	g_assert_cmpint(fd, >=, 0);
	close(fd);
	if (!strcmp(call, "socket")) {
		fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		g_assert_cmpint(fd, >=, 0);
		close(fd);
	}
}

static void test_forbidden(gconstpointer data)
{
	const char *call = data;
	gboolean log = g_str_has_prefix(g_test_get_path(), "/sandbox/log/");

	/* Under enforce, a forbidden call is killed by SIGSYS. */
	if (in_subprocess(!log && *call))
		forbidden_call(log ? CUSEMU_SECCOMP_LOG
				   : CUSEMU_SECCOMP_ENFORCE,
			       call);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/sandbox/seccomp-modes", test_seccomp_modes);
	g_test_add_func("/sandbox/helper-deadline", test_helper_deadline);
	g_test_add_func("/sandbox/helper-long-path", test_helper_long_path);
	g_test_add_func("/sandbox/helper-reach-rules", test_helper_reach_rules);
	g_test_add_func("/sandbox/rules", test_rules);
	g_test_add_func("/sandbox/readme-table", test_readme_table);
	g_test_add_func("/sandbox/caps-every-thread", test_caps_every_thread);
	g_test_add_func("/sandbox/user", test_user);
	g_test_add_data_func("/sandbox/enforce/allowed", "", test_forbidden);
	g_test_add_data_func("/sandbox/enforce/socket-inet", "socket",
			     test_forbidden);
	g_test_add_data_func("/sandbox/enforce/fork", "fork", test_forbidden);
	g_test_add_data_func("/sandbox/log/socket-inet", "socket",
			     test_forbidden);
	return g_test_run();
}
