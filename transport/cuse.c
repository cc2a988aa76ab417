/* SPDX-License-Identifier: MIT */
/*
 * The CUSE transport: one /dev/cuse connection per device, its node's
 * registration, number, owner and mode, and its end; cusemu_cuse_ops is
 * its table (transport.h), with its setting, the nodes' major. What a
 * request does on the device is node.c's.
 */
#define G_LOG_DOMAIN "cusemu-transport"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fuse-common.h"

#include <cuse_lowlevel.h>
#include <glib.h>

#include "device.h"
#include "dispatch.h"
#include "fuse-keys.h"
#include "node.h"
#include "sandbox.h"
#include "self.h"

#define CUSE_PATH "/dev/cuse"
/* The kernel's majors are below CHRDEV_MAJOR_MAX; 0 asks for a dynamic one. */
#define MAJOR_MAX 511
#define NODE_TIMEOUT_MS 10000
/* Descriptors besides one /dev/cuse per device: logs, the control socket
 * and its peers, the /proc helper, EEPROM saves, glib's wake-ups. */
#define FDS_BESIDES_DEVICES 128

struct cusemu_session {
	struct cusemu_fuse_conn fuse;	/* first: its /dev/cuse connection */
	struct cusemu_node node;	/* the device behind it */
	char *path;			/* /dev/NAME */

	GMutex lock;		/* guards init_sent */
	bool init_sent;		/* the CUSE_INIT reply went to the kernel */
};

struct cusemu_session_options {
	bool debug;			/* libfuse's request trace */
	unsigned int major, minor;	/* the node's number; major 0: dynamic */
};

/* Its table, at the end; the list of transports.c names it. */
extern const struct cusemu_transport_ops cusemu_cuse_ops;

/* Its settings: every node's major; 0: the first node's, dynamic. */
struct cuse_settings {
	unsigned int major;
};

/* The transport: every device's session. */
struct cuse {
	struct cusemu_transport pub;
	bool debug;		/* libfuse's trace, of added nodes too */
	const struct cusemu_sandbox *sandbox;
	/* The nodes' major once known, and the minor a node added at run
	 * time gets next. */
	unsigned int major, next_minor;
	GPtrArray *sessions;	/* struct cusemu_session */
};

/*
 * libfuse's requests, each turned into the node's (req.h) on the stack.
 * libfuse 3.14 hands the command over as an int.
 */
static void cuse_ioctl(fuse_req_t req, int cmd, void *arg,
		       struct fuse_file_info *fi, unsigned int flags,
		       const void *in_buf, size_t in_bufsz, size_t out_bufsz)
{
	struct cusemu_session *s = fuse_req_userdata(req);
	struct cusemu_fuse_req fr;

	cusemu_node_ioctl(&s->node,
			  cusemu_fuse_ioctl_req(&fr, req, fi, (unsigned int)cmd,
						arg, flags, in_buf, in_bufsz,
						out_bufsz));
}

static void cuse_open(fuse_req_t req, struct fuse_file_info *fi)
{
	struct cusemu_session *s = fuse_req_userdata(req);
	struct cusemu_fuse_req fr;

	cusemu_node_open(&s->node, cusemu_fuse_req(&fr, req, fi));
}

static void cuse_release(fuse_req_t req, struct fuse_file_info *fi)
{
	struct cusemu_session *s = fuse_req_userdata(req);
	struct cusemu_fuse_req fr;

	cusemu_node_release(&s->node, cusemu_fuse_req(&fr, req, fi));
}

static void cuse_read(fuse_req_t req, size_t size, off_t off,
		      struct fuse_file_info *fi)
{
	struct cusemu_session *s = fuse_req_userdata(req);
	struct cusemu_fuse_req fr;
	struct cusemu_req *r = cusemu_fuse_req(&fr, req, fi);

	r->size = size;
	cusemu_node_read(&s->node, r);
}

static void cuse_write(fuse_req_t req, const char *buf, size_t size,
		       off_t off, struct fuse_file_info *fi)
{
	struct cusemu_session *s = fuse_req_userdata(req);
	struct cusemu_fuse_req fr;
	struct cusemu_req *r = cusemu_fuse_req(&fr, req, fi);

	r->buf = buf;
	r->size = size;
	cusemu_node_write(&s->node, r);
}

static void cuse_poll(fuse_req_t req, struct fuse_file_info *fi,
		      struct fuse_pollhandle *ph)
{
	struct cusemu_session *s = fuse_req_userdata(req);
	struct cusemu_fuse_req fr;
	struct cusemu_req *r = cusemu_fuse_req(&fr, req, fi);

	r->poll = ph;
	cusemu_node_poll(&s->node, r);
}

/* The kernel has handled the CUSE_INIT reply: the device is registered,
 * or its connection is aborted (a name another connection has). */
static void cuse_init_done(void *userdata)
{
	struct cusemu_session *s = userdata;

	g_mutex_lock(&s->lock);
	s->init_sent = true;
	g_mutex_unlock(&s->lock);
}

/* The kernel registered the session's device: its CUSE_INIT was taken and
 * the connection lives. False for the loser of a race for a node name. */
static bool cusemu_session_registered(struct cusemu_session *s)
{
	struct pollfd p = { .fd = fuse_session_fd(s->fuse.se),
			    .events = POLLIN };
	bool sent;

	g_mutex_lock(&s->lock);
	sent = s->init_sent;
	g_mutex_unlock(&s->lock);
	sent = sent && !cusemu_conn_done(&s->fuse.conn);
	/* An aborted FUSE connection polls as an error at once. */
	return sent && poll(&p, 1, 0) >= 0 &&
	       !(p.revents & (POLLERR | POLLHUP | POLLNVAL));
}

/* The kernel has answered the session's CUSE_INIT (or the session ended). */
static bool cusemu_session_init_sent(struct cusemu_session *s)
{
	bool sent;

	g_mutex_lock(&s->lock);
	sent = s->init_sent;
	g_mutex_unlock(&s->lock);
	return sent || cusemu_conn_done(&s->fuse.conn);
}

static const struct cuse_lowlevel_ops cuse_ops = {
	.init_done = cuse_init_done,
	.open = cuse_open,
	.release = cuse_release,
	.read = cuse_read,
	.write = cuse_write,
	.ioctl = cuse_ioctl,
	.poll = cuse_poll,
};

static void session_free_conn(struct cusemu_conn *c)
{
	struct cusemu_session *s = (struct cusemu_session *)c;

	g_mutex_clear(&s->lock);
	cusemu_node_clear(&s->node);
	g_free(s->path);
	g_free(s);
}

static void session_end_waits(struct cusemu_conn *c)
{
	struct cusemu_session *s = (struct cusemu_session *)c;

	cusemu_waiters_end(&s->node.waiters);
}

static void session_ended(struct cusemu_conn *c, int res)
{
	struct cusemu_session *s = (struct cusemu_session *)c;

	if (res < 0)
		g_message("%s: session ended (%s)", s->node.dev->name,
			  g_strerror(-res));
}

/* Open /dev/cuse for dev and start serving it; the node appears soon after. */
static struct cusemu_session *
cusemu_session_start(struct cusemu_device *dev,
		     const struct cusemu_session_options *opts, GError **error)
{
	g_autofree char *devname = g_strdup_printf("DEVNAME=%s", dev->name);
	const char *dev_info[] = { devname };
	struct cuse_info ci = {
		.dev_info_argc = 1,
		.dev_info_argv = dev_info,
		.dev_major = opts->major,
		.dev_minor = opts->minor,
		.flags = cusemu_node_cuse_ioctls(dev) == CUSEMU_NODE_RESTRICTED
				 ? 0
				 : CUSE_UNRESTRICTED_IOCTL,
	};
	char *argv[] = { "cusemud", "-f", opts->debug ? "-d" : NULL, NULL };
	struct cusemu_session *s = g_new0(struct cusemu_session, 1);
	int multithreaded;

	cusemu_node_init(&s->node, dev, cusemu_node_cuse_ioctls(dev));
	g_mutex_init(&s->lock);
	s->path = g_strconcat("/dev/", dev->name, NULL);
	s->fuse.conn.what = s->path;
	s->fuse.conn.end_waits = session_end_waits;
	s->fuse.conn.ended = session_ended;
	s->fuse.conn.free = session_free_conn;
	cusemu_fuse_log();
	cusemu_fuse_keys_share(true);
	s->fuse.se = cuse_lowlevel_setup(opts->debug ? 3 : 2, argv, &ci,
					 &cuse_ops, &multithreaded, s);
	cusemu_fuse_keys_share(false);
	if (!s->fuse.se) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
			    "cannot start the CUSE session of /dev/%s (see "
			    "the message above)",
			    dev->name);
		session_free_conn(&s->fuse.conn);
		return NULL;
	}
	/* libfuse's own handlers would end just one session: ours end all. */
	fuse_remove_signal_handlers(s->fuse.se);
	if (!cusemu_fuse_conn_serve(&s->fuse, error)) {
		fuse_session_destroy(s->fuse.se);
		s->fuse.se = NULL;
		cusemu_conn_release(&s->fuse.conn);
		return NULL;
	}
	return s;
}

/* True once the session loop has ended (the kernel dropped it, or stop). */
static bool cusemu_session_ended(struct cusemu_session *s)
{
	return cusemu_conn_done(&s->fuse.conn);
}

/*
 * End the loop, close /dev/cuse (the node goes away) and release what
 * clients left open. Safe with clients connected or blocked.
 */
static void cusemu_session_stop(struct cusemu_session *s)
{
	if (!cusemu_conn_stop(&s->fuse.conn))
		return;
	/*
	 * Closing /dev/cuse removes the node; clients get errors, not hangs.
	 * Not cuse_lowlevel_teardown(): it would remove libfuse's signal
	 * handlers again, and complain that the session has none.
	 */
	fuse_session_destroy(s->fuse.se);
	s->fuse.se = NULL;
	/* The kernel sends no release for files open at shutdown. */
	cusemu_node_close_files(&s->node);
}

/*
 * Free what is left, once the device's model has stopped its own threads
 * (they may still call cusemu_device_wake_up() until then).
 */
static void cusemu_session_free(struct cusemu_session *s)
{
	cusemu_conn_release(&s->fuse.conn);
}

/* No /dev/cuse: what to do, with the VM of the source tree for a build
 * tree's daemon. */
static void set_no_cuse_error(GError **error)
{
	g_autofree char *self = NULL;
	g_autofree char *vm = NULL;

	if (!cusemu_runs_installed(CUSEMU_SBINDIR)) {
		self = cusemu_self_command("cusemud", CUSEMU_SBINDIR);
		vm = g_strdup_printf(", or run cusemud in the VM of the source "
				     "tree: client-tests/vm-run -- %s "
				     "--foreground ...",
				     self);
	}
	g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NOENT,
		    CUSE_PATH " does not exist: this kernel has no CUSE "
		    "loaded. Run 'modprobe cuse' as root; on a kernel without "
		    "CUSE, serve files on a FUSE mount instead (--fuse DIR)%s",
		    vm ? vm : "");
}

static gboolean cuse_check(const struct cusemu_transport_settings *settings,
			   GPtrArray *devices, GError **error)
{
	int fd = open(CUSE_PATH, O_RDWR | O_CLOEXEC);

	if (fd < 0 && errno == ENOENT) {
		set_no_cuse_error(error);
		return FALSE;
	}
	if (fd < 0) {
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
			    "cannot open " CUSE_PATH ": %s; cusemud must run "
			    "as root",
			    g_strerror(errno));
		return FALSE;
	}
	close(fd);
	for (guint i = 0; i < devices->len; i++) {
		const struct cusemu_device *dev = devices->pdata[i];
		g_autofree char *path = g_strdup_printf("/dev/%s", dev->name);

		if (g_file_test(path, G_FILE_TEST_EXISTS)) {
			g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_EXIST,
				    "%s already exists (another device, or "
				    "a cusemud still running); give the "
				    "device another name=",
				    path);
			return FALSE;
		}
	}
	return TRUE;
}

/*
 * Why the kernel dropped a session before its node appeared: CUSE logs
 * only "failed to register chrdev region" or a sysfs complaint. Major
 * 0 means a dynamic one was asked for.
 */
static void explain_refusal(const struct cusemu_device *dev,
			    unsigned int asked_major, unsigned int asked_minor,
			    GError **error)
{
	g_autofree char *sys = g_strdup_printf("/sys/class/cuse/%s", dev->name);
	struct stat st;
	const char *why;

	/* stat, not access(): a node added at run time is in the sandbox. */
	if (stat(sys, &st) == 0) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_EXIST,
			    "/dev/%s did not appear: another CUSE device is "
			    "named %s (%s exists); give this one another name=",
			    dev->name, dev->name, sys);
		return;
	}
	if (asked_major)
		why = "is taken, or is not a number the kernel lends (see "
		      "/proc/devices; dmesg says which); set major= to a major "
		      "no driver uses, or leave it out for a dynamic one";
	else
		why = "could not be had: the kernel's dynamic majors are all "
		      "taken (about 140, and every CUSE server without a fixed "
		      "number takes one; see /proc/devices); stop CUSE servers "
		      "that are not needed, or set major= to a free major";
	g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
		    "/dev/%s did not appear: the kernel refused its device "
		    "number: char-device %u:%u %s",
		    dev->name, asked_major, asked_minor, why);
}

/*
 * The node appears once the kernel has handled CUSE_INIT: wait for it,
 * and give it the device's owner and mode. *rdev is its device number.
 */
static gboolean wait_for_node(struct cusemu_device *dev,
			      struct cusemu_session *s,
			      unsigned int asked_major,
			      unsigned int asked_minor, dev_t *rdev,
			      GError **error)
{
	const char *path = s->path;
	const struct cusemu_instance *dp = cusemu_instance(dev);
	gint64 deadline = g_get_monotonic_time() +
			  NODE_TIMEOUT_MS * G_TIME_SPAN_MILLISECOND;
	struct stat st;

	/* The node may be another daemon's that won a race for the name:
	 * wait for the kernel's answer to this session's CUSE_INIT too. */
	while (stat(path, &st) || !S_ISCHR(st.st_mode) ||
	       !cusemu_session_init_sent(s)) {
		if (cusemu_session_ended(s)) {
			explain_refusal(dev, asked_major, asked_minor, error);
			return FALSE;
		}
		if (g_get_monotonic_time() > deadline) {
			g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
				    "%s did not appear within %d s of its "
				    "registration: is udev or devtmpfs "
				    "creating nodes in /dev?",
				    path, NODE_TIMEOUT_MS / 1000);
			return FALSE;
		}
		poll(NULL, 0, 5);	/* not nanosleep: off the sandbox's list */
	}
	if (!cusemu_session_registered(s)) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_EXIST,
			    "%s is another process's: the kernel gave the name "
			    "to a device registered at the same time (a second "
			    "cusemud?); its owner and mode were left alone; "
			    "give this device another name=",
			    path);
		return FALSE;
	}
	if (chown(path, dp->made.owner, dp->made.group) || chmod(path, dp->made.mode)) {
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
			    "cannot set owner and mode of %s: %s", path,
			    g_strerror(errno));
		return FALSE;
	}
	*rdev = st.st_rdev;
	return TRUE;
}

/* Whether the kernel copies ioctl payloads itself (see cuse_ioctl()). */
static const char *cuse_ioctls(const struct cusemu_device *dev)
{
	return cusemu_node_cuse_ioctls_name(dev);
}

/*
 * One /dev/cuse descriptor per device: 1024 devices meet the usual soft
 * limit. Raise it to what this run needs, the hard limit too when root
 * may (CAP_SYS_RESOURCE); say so when the system will not.
 */
static void raise_fd_limit(unsigned int devices)
{
	rlim_t need = (rlim_t)devices + FDS_BESIDES_DEVICES;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= need)
		return;
	if (rl.rlim_max < need) {
		struct rlimit more = { need, need };

		if (!setrlimit(RLIMIT_NOFILE, &more)) {
			g_message("open files: limit raised to %ju for %u "
				  "devices", (uintmax_t)need, devices);
			return;
		}
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) == 0)
			g_warning("open files: %u devices need %ju descriptors "
				  "and the hard limit is %ju, which only root may "
				  "raise: later devices will fail (raise it with "
				  "ulimit -Hn or LimitNOFILE=)",
				  devices, (uintmax_t)need, (uintmax_t)rl.rlim_max);
		return;
	}
	rl.rlim_cur = need;
	if (setrlimit(RLIMIT_NOFILE, &rl) == 0)
		g_message("open files: limit raised to %ju for %u devices",
			  (uintmax_t)need, devices);
}

/* Wait for session i's node, and say that it serves. */
static gboolean serve_node(struct cuse *c, guint i, unsigned int asked_major,
			   unsigned int asked_minor, dev_t *rdev,
			   GError **error)
{
	struct cusemu_session *s = c->sessions->pdata[i];
	struct cusemu_device *dev = s->node.dev;

	if (!wait_for_node(dev, s, asked_major, asked_minor, rdev, error))
		return FALSE;
	g_message("serving /dev/%s (%u:%u): %s, kernel model %s, mode %04o, "
		  "%s ioctls",
		  dev->name, major(*rdev), minor(*rdev), dev->model->name,
		  cusemu_instance(dev)->dispatch.kmodel->name,
		  (unsigned int)cusemu_instance(dev)->made.mode, cuse_ioctls(dev));
	return TRUE;
}

/*
 * Every device shares one char-device major, the next minor each: a
 * dynamic major per device would end at the kernel's ~140. Without a
 * configured major, the first device takes a dynamic one and the others
 * follow it once its node shows which.
 */
static gboolean start_sessions(struct cuse *c, GPtrArray *devices,
			       unsigned int asked_major, GError **error)
{
	struct cusemu_session_options so = {
		.debug = c->debug,
		.major = asked_major,
	};
	unsigned int first_minor = 0;
	guint waited = 0;
	dev_t rdev;

	raise_fd_limit(devices->len);
	for (guint i = 0; i < devices->len; i++) {
		struct cusemu_device *dev = devices->pdata[i];
		struct cusemu_session *s;

		so.minor = so.major ? first_minor + i : 0;
		s = cusemu_session_start(dev, &so, error);
		if (!s)
			return FALSE;
		g_ptr_array_add(c->sessions, s);
		if (!so.major) {
			if (!serve_node(c, i, 0, 0, &rdev, error))
				return FALSE;
			so.major = major(rdev);
			first_minor = minor(rdev) - i;
			waited = i + 1;
		}
	}
	for (guint i = waited; i < devices->len; i++)
		if (!serve_node(c, i, so.major, first_minor + i, &rdev, error))
			return FALSE;
	c->major = so.major;
	c->next_minor = first_minor + devices->len;
	return TRUE;
}

static gboolean cuse_start(const struct cusemu_transport_settings *settings,
			   GPtrArray *devices, struct cusemu_transport **t,
			   GError **error)
{
	struct cuse *c = g_new0(struct cuse, 1);

	c->pub.ops = &cusemu_cuse_ops;
	c->debug = settings->debug;
	c->sandbox = settings->sandbox;
	c->sessions = g_ptr_array_new();
	*t = &c->pub;
	return start_sessions(c, devices,
			      ((struct cuse_settings *)settings->own)->major,
			      error);
}

/*
 * A node added at run time needs /dev/cuse, root's: say why it cannot be
 * opened in terms of the daemon's settings.
 */
static gboolean check_cuse_openable(const struct cuse *c, GError **error)
{
	int fd = open(CUSE_PATH, O_RDWR | O_CLOEXEC);

	if (fd >= 0) {
		close(fd);
		return TRUE;
	}
	if ((errno == EACCES || errno == EPERM) && c->sandbox->user) {
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
			    "cannot open " CUSE_PATH ": %s: since start-up "
			    "cusemud runs as user %s (user=), and a new CUSE "
			    "node needs " CUSE_PATH ", which is root's. Give "
			    "the device at start-up instead (--device, or a "
			    "[device NAME] group of the configuration), or run "
			    "cusemud without user= (it then stays root, with no "
			    "capability), or serve files on a FUSE mount "
			    "(--fuse DIR), where add needs no " CUSE_PATH,
			    g_strerror(errno), c->sandbox->user);
		return FALSE;
	}
	if (errno == ENOENT) {
		set_no_cuse_error(error);
		return FALSE;
	}
	g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
		    "cannot open " CUSE_PATH ": %s", g_strerror(errno));
	return FALSE;
}

/*
 * The node's owner and group are set by the daemon, which dropped
 * CAP_CHOWN after start-up: root's node (what devtmpfs makes) is all it
 * can give. Its mode it can.
 */
static gboolean check_owner(const struct cusemu_device *dev, GError **error)
{
	const struct cusemu_instance *dp = cusemu_instance(dev);

	if (dp->made.owner == 0 && dp->made.group == 0)
		return TRUE;
	g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_PERM,
		    "/dev/%s: owner= and group= other than root need "
		    "CAP_CHOWN, which cusemud dropped once it started (see "
		    "docs/security.md); give the node a mode= instead (e.g. "
		    "mode=0666), or the device at start-up (--device, or the "
		    "configuration file)",
		    dev->name);
	return FALSE;
}

/* A new CUSE session: the next minor of the nodes' major, as at start-up. */
static gboolean cuse_serve(struct cusemu_transport *t,
			   struct cusemu_device *dev, GError **error)
{
	struct cuse *c = (struct cuse *)t;
	g_autofree char *path = g_strdup_printf("/dev/%s", dev->name);
	struct cusemu_session_options so = {
		.debug = c->debug,
		.major = c->major,
		.minor = c->major ? c->next_minor : 0,
	};
	struct cusemu_session *s;
	struct stat st;
	dev_t rdev;

	if (stat(path, &st) == 0) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_EXIST,
			    "%s already exists (another driver's node, or a "
			    "CUSE server's); give the device another name=",
			    path);
		return FALSE;
	}
	if (!check_owner(dev, error) || !check_cuse_openable(c, error))
		return FALSE;
	s = cusemu_session_start(dev, &so, error);
	if (!s)
		return FALSE;
	if (!wait_for_node(dev, s, so.major, so.minor, &rdev, error)) {
		cusemu_session_stop(s);
		cusemu_session_free(s);
		return FALSE;
	}
	g_ptr_array_add(c->sessions, s);
	if (!c->major)
		c->major = major(rdev);
	if (major(rdev) == c->major)
		c->next_minor = MAX(c->next_minor, minor(rdev) + 1);
	g_message("serving /dev/%s (%u:%u): %s, kernel model %s, mode %04o, "
		  "%s ioctls; added",
		  dev->name, major(rdev), minor(rdev), dev->model->name,
		  cusemu_instance(dev)->dispatch.kmodel->name,
		  (unsigned int)cusemu_instance(dev)->made.mode, cuse_ioctls(dev));
	return TRUE;
}

/* The session ends (the node goes; the kernel fails its open files). */
static bool cuse_unserve(struct cusemu_transport *t, struct cusemu_device *dev)
{
	struct cuse *c = (struct cuse *)t;

	for (guint i = 0; i < c->sessions->len; i++) {
		struct cusemu_session *s = c->sessions->pdata[i];

		if (s->node.dev != dev)
			continue;
		cusemu_session_stop(s);
		if (!cusemu_session_ended(s))
			return false;
		g_ptr_array_remove_index(c->sessions, i);
		cusemu_session_free(s);
		return true;
	}
	return true;
}

static char *cuse_path(const struct cusemu_transport *t,
		       const struct cusemu_device *dev)
{
	return g_strconcat("/dev/", dev->name, NULL);
}

static const char *cuse_name(const struct cusemu_transport *t,
			     const char *path)
{
	return g_str_has_prefix(path, "/dev/") ? path + strlen("/dev/") : path;
}

/* A session whose loop ended by itself lost its node. */
static char *cuse_lost(struct cusemu_transport *t)
{
	struct cuse *c = (struct cuse *)t;

	for (guint i = 0; i < c->sessions->len; i++) {
		struct cusemu_session *s = c->sessions->pdata[i];

		if (cusemu_session_ended(s))
			return g_strdup_printf("the kernel closed the session "
					       "of /dev/%s",
					       s->node.dev->name);
	}
	return NULL;
}

static char *cuse_stopping(const struct cusemu_transport *t, unsigned int n)
{
	return g_strdup_printf("removing %u node(s)", n);
}

static void cuse_stop(struct cusemu_transport *t)
{
	struct cuse *c = (struct cuse *)t;

	for (guint i = 0; i < c->sessions->len; i++)
		cusemu_session_stop(c->sessions->pdata[i]);
}

static void cuse_free(struct cusemu_transport *t)
{
	struct cuse *c = (struct cuse *)t;

	for (guint i = 0; i < c->sessions->len; i++)
		cusemu_session_free(c->sessions->pdata[i]);
	g_ptr_array_unref(c->sessions);
	g_free(c);
}

static const struct cusemu_transport_key cuse_keys[] = {
	{ .key = "major", .option = "major", .arg = "N",
	  .help = "Char-device major of every node, their minors 0, 1, ... "
		  "(default: a dynamic major, the first node's)" },
	{ NULL }
};

/* CUSE serves when no other transport is asked for: always configured. */
static gboolean cuse_configure(const struct cusemu_transport_settings *s,
			       const struct cusemu_transport_value *values,
			       void **own, GError **error)
{
	struct cuse_settings *cs;
	guint64 major = 0;

	if (!cusemu_setting_count(values[0].value, values[0].origin, "major",
				  MAJOR_MAX,
				  "pick one that /proc/devices does not list, "
				  "or leave it out for a dynamic one",
				  &major, error))
		return FALSE;
	cs = g_new0(struct cuse_settings, 1);
	cs->major = (unsigned int)major;
	*own = cs;
	return TRUE;
}

const struct cusemu_transport_ops cusemu_cuse_ops = {
	.kind = "cuse",
	.keys = cuse_keys,
	.configure = cuse_configure,
	.settings_free = g_free,
	.check = cuse_check,
	.start = cuse_start,
	.serve = cuse_serve,
	.unserve = cuse_unserve,
	.path = cuse_path,
	.ioctls = cuse_ioctls,
	.name = cuse_name,
	.lost = cuse_lost,
	.stopping = cuse_stopping,
	.stop = cuse_stop,
	.free = cuse_free,
};
