/* SPDX-License-Identifier: MIT */
/*
 * The device-model API: what a model of devices/ or a plugin fills in. A
 * model is one const struct cusemu_device_model; its ioctl handlers sit in a
 * native and a compat table, and the daemon dispatches through them as a
 * kernel would.
 */
#ifndef CUSEMU_DEVICE_H
#define CUSEMU_DEVICE_H

#ifdef __KERNEL__
/* In a module that cusemu-kmod(1) builds: the kernel's own types. */
#include <linux/compiler.h>
#include <linux/errno.h>
#include <linux/types.h>

typedef struct _GString GString;	/* ->control: a module has no cusemuctl */
#define CUSEMU_PRINTF(format_arg, first_arg) __printf(format_arg, first_arg)
#else
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <glib.h>

/* printf-style arguments, checked by the compiler. */
#define CUSEMU_PRINTF(format_arg, first_arg) G_GNUC_PRINTF(format_arg, first_arg)
#endif

/*
 * "Not mine": a method returns it for a command it does not know, and the
 * kernel model decides what the caller sees (Linux's value, never returned
 * to user space as is).
 */
#ifndef ENOIOCTLCMD
#define ENOIOCTLCMD 515
#endif

struct cusemu_device;
struct cusemu_file;

/*
 * One error convention for every callback of a model: >= 0 (0, or a count)
 * for success, -errno for failure, as in the kernel: -1 to -511, the errors
 * a reply to the kernel carries. -ERESTARTSYS (512) and its kin reach the
 * caller as EINTR (a FUSE server cannot restart a system call); any other
 * value below -511, or an ioctl result above INT_MAX, as EIO with a
 * warning in the log. Callbacks whose
 * failure a person reads (probe, sandboxed, control) also say why in words:
 * a message in *why (g_strdup'd; the daemon frees it) or appended to out.
 */

/*
 * An ioctl handler, shaped like a kernel one: the device instance, the open
 * file, the command and its argument (a user address, or a value). Returns
 * >= 0 on success, -errno on failure, -ENOIOCTLCMD for "not mine".
 *
 * The handler contract. Over CUSE a client's memory arrives by retries
 * (FUSE_IOCTL_RETRY), so an ioctl is served in two steps. The fetch step
 * (cusemu_fetch_fn) names the user memory the call needs, given what has
 * arrived so far: it reads what is there with cusemu_copy_from_user() and
 * names the rest with cusemu_user_want_read()/_write(). It must have no side
 * effect, since it runs again from the start after every retry. The handler
 * runs once per ioctl, when the fetch step has asked for nothing more; it
 * can copy only memory the fetch step named (anything else fails the call
 * with -EIO and a log line), so it cannot act before all its memory is
 * there. _IOC-encoded rows (CUSEMU_IOCTL_IOC) need no fetch step of their
 * own: the dispatcher names the payload the command's bits describe.
 */
typedef long (*cusemu_ioctl_fn)(struct cusemu_device *dev,
				struct cusemu_file *file, unsigned int cmd,
				unsigned long arg);

/*
 * The fetch step of the contract above: 0 when every range it needs is
 * named (whether or not it has arrived yet), -errno to fail the call
 * before anything is done. A -EFAULT while a named range is still on its
 * way is not final: the call is retried and the step runs again.
 */
typedef int (*cusemu_fetch_fn)(struct cusemu_device *dev,
			       struct cusemu_file *file, unsigned int cmd,
			       unsigned long arg);

/*
 * A fetch step that names the payload the _IOC direction and size bits of
 * cmd describe: what the kernel itself copies for a correctly encoded
 * command.
 */
int cusemu_fetch_ioc(struct cusemu_device *dev, struct cusemu_file *file,
		     unsigned int cmd, unsigned long arg);

/*
 * For fetch steps: name read_len bytes at addr to read from the caller and
 * write_len bytes to write back (either may be 0), in one round trip.
 * Returns 0 whether or not they have arrived, -EFAULT or -ENOMEM when they
 * never can.
 */
int cusemu_fetch_range(uint64_t addr, size_t read_len, size_t write_len);

/* The methods of the kernel generations, as bits of a mask. */
enum cusemu_method {
	CUSEMU_METHOD_IOCTL = 1u << 0,		/* legacy, under the big lock */
	CUSEMU_METHOD_UNLOCKED_IOCTL = 1u << 1,
	CUSEMU_METHOD_COMPAT_IOCTL = 1u << 2,
	CUSEMU_METHOD_IOCTL_NATIVE = 1u << 3,	/* the split proposal */
	CUSEMU_METHOD_IOCTL_COMPAT = 1u << 4,
	/* Not a method: a handler of the global ioctl32 table. */
	CUSEMU_METHOD_IOCTL32_HANDLER = 1u << 5,
};

#define CUSEMU_METHODS_ALL                                               \
	(CUSEMU_METHOD_IOCTL | CUSEMU_METHOD_UNLOCKED_IOCTL |            \
	 CUSEMU_METHOD_COMPAT_IOCTL | CUSEMU_METHOD_IOCTL_NATIVE |       \
	 CUSEMU_METHOD_IOCTL_COMPAT)

/* The method, or ioctl32 handler, the current call reached its handler
 * through; 0 outside a call. */
enum cusemu_method cusemu_current_method(void);

/* Its name: "ioctl", "unlocked_ioctl", ..., "ioctl32 handler". */
const char *cusemu_method_name(enum cusemu_method method);

/* How the user memory of a table row is reached. */
enum cusemu_payload {
	/* arg is a plain value, or the command takes nothing. */
	CUSEMU_PAYLOAD_NONE,
	/*
	 * arg points to the payload that the _IOC direction and size bits of
	 * the command describe; the dispatcher fetches it before the handler
	 * runs, in one round trip.
	 */
	CUSEMU_PAYLOAD_IOC,
	/*
	 * The row's fetch step names the memory (pointers inside, or a
	 * command whose _IOC bits do not describe its payload).
	 */
	CUSEMU_PAYLOAD_USER,
};

/*
 * One row of a native or compat table. In a compat table a row with a NULL
 * handler is "compatible": the layout is the same on both ABIs and the
 * native row of the same command serves it, with arg passed through
 * compat_ptr() (what the kernel's compat_ptr_ioctl() does).
 */
struct cusemu_ioctl {
	unsigned int cmd;
	const char *name;
	cusemu_ioctl_fn handler;
	enum cusemu_payload payload;
	cusemu_fetch_fn fetch;		/* CUSEMU_PAYLOAD_USER only */
};

/* Rows, named by their pattern. Tables end with CUSEMU_IOCTL_END. */
#define CUSEMU_IOCTL_NONE(c, fn) { (c), #c, (fn), CUSEMU_PAYLOAD_NONE, NULL }
#define CUSEMU_IOCTL_IOC(c, fn) { (c), #c, (fn), CUSEMU_PAYLOAD_IOC, NULL }
#define CUSEMU_IOCTL_USER(c, fetch_fn, fn)                               \
	{ (c), #c, (fn), CUSEMU_PAYLOAD_USER, (fetch_fn) }
#define CUSEMU_COMPAT_SAME(c) { (c), #c, NULL, CUSEMU_PAYLOAD_NONE, NULL }
#define CUSEMU_IOCTL_END { 0, NULL, NULL, CUSEMU_PAYLOAD_NONE, NULL }

/* A configuration key a model accepts, besides the common ones. */
enum cusemu_param_type {
	CUSEMU_PARAM_UINT,	/* decimal, 0x hex or 0 octal */
	CUSEMU_PARAM_SIZE,	/* a byte count, with an optional K, M or G */
	CUSEMU_PARAM_BOOL,	/* true/false, yes/no, 1/0 */
	CUSEMU_PARAM_STRING,
	/*
	 * A file the model opens, as the daemon's user (root, often): a
	 * string, which a control client other than root and the daemon's
	 * own user may not give to cusemuctl add, since the daemon would
	 * reach the file with rights the client lacks. Every key that names
	 * a file or a node is of this type.
	 */
	CUSEMU_PARAM_PATH,
	/*
	 * A string of options that may name files inside it, as i2c's
	 * chips= does (eeprom@0x50:file=PATH+lm75@0x48): options are
	 * separated by '+', ':', ',' or ';', and each option file=PATH, or
	 * NAME_file=PATH, names a file the model opens. Every such path is
	 * held to the rules of CUSEMU_PARAM_PATH; a value without one is
	 * anyone's. Every key whose value can hold a path is of this type.
	 * A control client that is not root hands these files over, opened
	 * with its own rights, and the model opens each path through
	 * cusemu_device_param_fd() first.
	 */
	CUSEMU_PARAM_PATHS,
	/*
	 * A file the model opens through cusemu_device_param_fd() first, and
	 * by its path only when that gives none: a control client that is
	 * not root hands it over, opened for reading and writing with its
	 * own rights (cusemuctl does so for keys named NAME_file). i2c's
	 * eeprom_file= is one.
	 */
	CUSEMU_PARAM_FILE,
};

struct cusemu_param {
	const char *key;
	enum cusemu_param_type type;
	const char *default_value;
	const char *help;
	/* For numbers: the accepted range, inclusive. 0, 0 means any. */
	uint64_t min, max;
};

#define CUSEMU_PARAM_END { .key = NULL }

/*
 * A file of the device's directory in /sys, as the kernel's struct
 * device_attribute is: cusemu-run(1) shows it at
 * /sys/class/CLASS/NAME/PATH, read when a program reads it.
 */
struct cusemu_attr {
	/* Its path in the device's directory: "time", or under a directory
	 * of its own, "device/id/vendor"; required. */
	const char *path;
	/*
	 * Writes the file's text into buf, at most size bytes (a page, 4096,
	 * as sysfs gives its show methods), ending with a newline as the
	 * kernel's do; returns its length or -errno. Runs on a worker under
	 * the device's oops guard, as read() does, and takes the model's
	 * own locks; required.
	 */
	ssize_t (*show)(struct cusemu_device *dev, char *buf, size_t size);
};

#define CUSEMU_ATTR_END { .path = NULL }

/*
 * One emulated device: one node. The daemon's own state of the instance
 * lives beside it, out of the model's reach.
 */
struct cusemu_device {
	const struct cusemu_device_model *model;
	const char *name;		/* node name under /dev */
	void *priv;			/* the model's state, from ->probe */
};

/* One open file of a device node: what the kernel's struct file is. */
struct cusemu_file {
	struct cusemu_device *dev;
	void *private_data;		/* the model's, from ->open */
	int flags;			/* open flags, O_NONBLOCK as of the
					 * request being served */
	pid_t opener;			/* pid of the process that opened it */
	off_t pos;			/* stream position for read/write */
};

/*
 * A device model. Every slot may be NULL unless it says otherwise; the
 * struct grows only at the end.
 */
struct cusemu_device_model {
	/* Name used by --device and the configuration; required. */
	const char *name;
	/* One line for --help. */
	const char *summary;
	/* Node name when the configuration gives none: this prefix and the
	 * instance number, e.g. "fioc" gives fioc0, fioc1...; required. */
	const char *node_prefix;
	/* Model-specific configuration keys, ended by CUSEMU_PARAM_END. */
	const struct cusemu_param *params;

	/*
	 * Creates the model's state in dev->priv from its parameters
	 * (cusemu_device_param_*). Called once at start-up, before the node
	 * exists. Returns 0 or -errno; a message for the user goes in *why.
	 */
	int (*probe)(struct cusemu_device *dev, char **why);
	/* Frees dev->priv at shutdown, after every file was released. */
	void (*remove)(struct cusemu_device *dev);

	/* A process opened the node. Returns 0 or -errno (e.g. -EBUSY). */
	int (*open)(struct cusemu_device *dev, struct cusemu_file *file);
	/* The last reference to the open file went away. */
	void (*release)(struct cusemu_device *dev, struct cusemu_file *file);
	/*
	 * read(2) and write(2): fill or consume buf, at most size bytes.
	 * CUSE nodes are not seekable; file->pos is the model's to keep.
	 * Return the byte count or -errno.
	 */
	ssize_t (*read)(struct cusemu_device *dev, struct cusemu_file *file,
			char *buf, size_t size);
	ssize_t (*write)(struct cusemu_device *dev, struct cusemu_file *file,
			 const char *buf, size_t size);

	/*
	 * The ioctl methods of the kernel generations (cusemu-model(7), and
	 * docs/kernel-models.md in cusemu's source).
	 * A model that sets none of them gets each one built from the tables
	 * below. A model that sets some by hand (a legacy driver has only
	 * ->ioctl) has just those; its compat table is then only what it
	 * registers in the global ioctl32 table.
	 */
	cusemu_ioctl_fn ioctl;		/* under the big lock */
	cusemu_ioctl_fn unlocked_ioctl;
	cusemu_ioctl_fn compat_ioctl;
	cusemu_ioctl_fn ioctl_native;
	cusemu_ioctl_fn ioctl_compat;
	/*
	 * The fetch step of the hand-written methods above, for every
	 * command and both ABIs (cusemu_in_compat_syscall() tells which);
	 * NULL means cusemu_fetch_ioc. -ENOIOCTLCMD is "not mine", as from
	 * a method.
	 */
	cusemu_fetch_fn ioctl_fetch;

	/* Handler tables, each ended by CUSEMU_IOCTL_END. */
	const struct cusemu_ioctl *native_table;
	const struct cusemu_ioctl *compat_table;
	/*
	 * true: every native row that the compat table does not list serves
	 * 32-bit callers too, with arg through compat_ptr(), as a driver
	 * says `.compat_ioctl = compat_ptr_ioctl`; the compat table then
	 * holds only the rows that translate, and may be NULL. Under the
	 * kernel models with the global ioctl32 table, those rows are
	 * registered there as compatible entries.
	 */
	bool compat_ptr_ioctl;

	/*
	 * poll(2)/select(2): the POLLIN/POLLOUT/POLLPRI... bits that are
	 * ready now, without waiting. When readiness may change later, the
	 * model calls cusemu_device_wake_up() and the kernel asks again.
	 */
	unsigned int (*poll)(struct cusemu_device *dev,
			     struct cusemu_file *file);

	/*
	 * A request for this device from cusemuctl ("cusemuctl device NODE
	 * WORDS..."): argv holds the words, NULL-terminated. Append the
	 * answer to out and return 0, or return -errno and append what the
	 * user should do. Runs on the daemon's main thread.
	 */
	int (*control)(struct cusemu_device *dev, char **argv, GString *out);

	/*
	 * Called once at start-up, when every node exists and the daemon has
	 * entered its sandbox (docs/security.md): no capability, perhaps
	 * another user, a system call filter. The model checks, with the
	 * rights it has from now on, what it needs later, e.g. that a file
	 * it saves can still be written. Returns 0 or -errno with a message
	 * for the user in *why; the daemon then does not start.
	 */
	int (*sandboxed)(struct cusemu_device *dev, char **why);

	/*
	 * Where the kernel's driver shows the node, for cusemu-run(1): it
	 * puts the node at /dev/DIR/NAME and builds /sys/class/CLASS/NAME
	 * from what follows. Read for the daemon's built-in models; a
	 * plugin's model, served from its host process, shows in no class
	 * (cusemu-run puts its node at /dev/NAME).
	 *
	 * sysfs_class: the directory of /sys/class ("rtc", "watchdog",
	 * "input", "i2c-dev"); NULL: the device is in none.
	 */
	const char *sysfs_class;
	/* The node's directory under /dev, as the class names it ("input"
	 * for /dev/input/event0); NULL: /dev itself. */
	const char *devnode_dir;
	/* The char major the kernel's driver takes, and the minor of the
	 * node numbered 0 (input's event0 is 13:64): the node numbered N,
	 * by the digits its name ends with, is minor_base + N. major 0: a
	 * number of the dynamic range, as drivers that ask for one get. */
	unsigned int major;
	unsigned int minor_base;
	/* The files of the device's directory besides dev, uevent and
	 * subsystem, which are made for every device; ended by
	 * CUSEMU_ATTR_END. */
	const struct cusemu_attr *attrs;
	/*
	 * What udev's rules add to the device's properties ("ID_INPUT=1"),
	 * one KEY=VALUE line each, appended to props: cusemu-run writes them
	 * to udev's database (/run/udev/data), where libudev and the
	 * programs built on it (libinput, udevadm) read them. NULL: none.
	 */
	void (*udev_props)(struct cusemu_device *dev, GString *props);
	/*
	 * sysfs_parent: the device the node's device belongs to, as the
	 * kernel's driver registers one first, its name a printf format of
	 * the node's number N ("input%u": event0 belongs to input0, as evdev's
	 * nodes to their input device; "i2c-%u": i2c-dev's i2c-0 to adapter
	 * i2c-0). The node's directory is then the parent's child, its
	 * "device" a link to the parent, and the attributes whose path starts
	 * with "device/" are the parent's files. NULL: no parent.
	 *
	 * sysfs_bus: with sysfs_parent, the bus the parent is on ("i2c"): it
	 * sits at /sys/devices/PARENT, with the class's directory of the node
	 * in it, and /sys/bus/BUS/devices/PARENT links to it. NULL: the parent
	 * is a device of the node's class (/sys/devices/virtual/CLASS/PARENT,
	 * linked from /sys/class/CLASS/PARENT too).
	 */
	const char *sysfs_parent;
	const char *sysfs_bus;
};

/*
 * Tell every poller of dev's node that readiness may have changed (an
 * interrupt arrived, an event was queued). Cheap when nobody polls; safe
 * from any thread, with or without the model's own locks held.
 */
void cusemu_device_wake_up(struct cusemu_device *dev);

/*
 * True when the client gave up on the request being served (it was killed,
 * or a signal interrupted its read or ioctl): a handler that waits returns
 * -EINTR then. cusemu_cond_wait_until() of <cusemu/sched.h> returns early
 * when that happens.
 */
bool cusemu_signal_pending(void);

/*
 * Whether process pid runs a 32-bit program (the ELF class of its
 * executable): a read or write carries no compat flag, so this is how a
 * model guesses the layout an opener wants. False when it cannot be told.
 * Any user's process is seen, through the daemon's /proc helper.
 */
bool cusemu_process_is_32bit(pid_t pid);

/*
 * From ->probe: offer only these methods (CUSEMU_METHOD_* bits) instead of
 * every one, to play a driver of an older generation. Methods the model
 * leaves NULL are built from its tables.
 */
void cusemu_device_set_methods(struct cusemu_device *dev, unsigned int methods);

/*
 * From ->probe: the node name to use when the configuration gave none
 * (name=), instead of the model's prefix and the instance number; a model
 * whose data names its node (a recording) calls it. Returns 0, also when
 * name= wins, or -EINVAL when name is not a valid node name (letters,
 * digits, '-', '_' and '.', at most 64).
 */
int cusemu_device_default_name(struct cusemu_device *dev, const char *name);

/*
 * The name of the kernel generation the device is dispatched as (--model,
 * or kernel= of the device): one of those `cusemud --help` lists under
 * "Kernel models". For the log and for people; a model that behaves by
 * generation asks cusemu_device_kernel_version() instead.
 */
const char *cusemu_device_kernel_model(const struct cusemu_device *dev);

/*
 * A kernel version as the kernel encodes it: the definition of
 * <linux/version.h> (as today's uapi headers have it, the sublevel capped
 * at 255), token for token, so that a model may include that header
 * before or after this one.
 */
#ifndef KERNEL_VERSION
#define KERNEL_VERSION(a,b,c) (((a) << 16) + ((b) << 8) + ((c) > 255 ? 255 : (c)))
#endif

/*
 * The version of the kernel generation the device is dispatched as, in
 * KERNEL_VERSION() form: the LINUX_VERSION_CODE of the kernel it plays
 * (`cusemud --help` lists them). A model whose driver answered
 * differently across generations (rtc's periodic rates, its epoch) asks
 * it in ->probe:
 *
 *     if (cusemu_device_kernel_version(dev) >= KERNEL_VERSION(2, 6, 11))
 *
 * Generations later in that list never have a lower version; the
 * December 2004 patches (unlocked, split) share 2.6.10's, as the trees
 * they were written for did. Safe from any callback.
 */
unsigned int cusemu_device_kernel_version(const struct cusemu_device *dev);

/* Count a model event in the device's statistics ("expired", "dropped"). */
void cusemu_device_count_event(struct cusemu_device *dev, const char *event);

/*
 * The model could not keep what clients gave it: an EEPROM write that its
 * last save at shutdown could not put in its file, say. The message (what
 * is lost, where, why) goes to the log as an error, and the daemon exits
 * with status 1 once it has stopped. Safe from any callback, ->remove
 * included.
 */
void cusemu_device_lost(struct cusemu_device *dev, const char *format, ...)
	CUSEMU_PRINTF(2, 3);

/* Room for the note of cusemu_device_ratelimit(). */
#define CUSEMU_RATELIMIT_NOTE 64

/*
 * Whether a log line that a client can cause on every call (a call the
 * model cannot answer, say) may go to the log now, as the kernel's
 * printk_ratelimit() decides: 10 lines per 5 seconds of the device's, the
 * rest held back and counted. note (CUSEMU_RATELIMIT_NOTE bytes) gets what
 * to end the line with: "" or, when lines were held back since the last
 * one let through, "; N lines like this suppressed". One budget for all
 * of a model's lines of the device. Safe from any callback.
 */
bool cusemu_device_ratelimit(struct cusemu_device *dev, char *note);

/* The parameters of an instance, already validated against model->params. */
uint64_t cusemu_device_param_u64(const struct cusemu_device *dev,
				 const char *key);
bool cusemu_device_param_bool(const struct cusemu_device *dev,
			      const char *key);
const char *cusemu_device_param_str(const struct cusemu_device *dev,
				    const char *key);
/*
 * The file path, which a CUSEMU_PARAM_FILE or CUSEMU_PARAM_PATHS key of
 * dev names, as whoever added the device opened it: a control client
 * that is not root opens such files with its own rights and hands them
 * over, and the model must then use this descriptor, never path itself
 * (the daemon's rights reach more). A new descriptor, open for reading
 * and writing, which the caller closes; -1 when none was handed over: the
 * model opens path itself, as its giver (root, the configuration) meant.
 */
int cusemu_device_param_fd(const struct cusemu_device *dev, const char *path);

#endif
