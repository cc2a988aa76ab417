/* SPDX-License-Identifier: MIT */
/*
 * cusemu-host: a plugin's device models in a process of their own, so that
 * a bug in them costs their devices, never the daemon. Two modes:
 *
 *   cusemu-host --launcher FD
 *	forked and run by cusemud before its sandbox; starts a host on each
 *	request on socket FD, and reaps it when asked. Ends with the socket.
 *   cusemu-host --host CONTROL IMAGE UID GID MEMORY SECCOMP [GROUP...]
 *	enters its sandbox, loads the plugin from the sealed image, describes
 *	its models to the daemon and serves their calls on the channels the
 *	daemon hands over. Ends with the control socket.
 */
#define G_LOG_DOMAIN "cusemu-host"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>
#include <gmodule.h>

#include "cusemu/plugin.h"
#include "host.h"
#include "sandbox.h"

/*
 * Process-wide: a host runs one plugin. The control socket is written by
 * fault.c's signal handler too, which is given no pointer.
 */
int host_control = -1;
const struct cusemu_device_model *const *host_models;
unsigned int host_n_models;
/* Where the plugin was loaded. */
static struct link_map *plugin_map;

void host_send(const void *msg, size_t len)
{
	ssize_t n;

	do
		n = send(host_control, msg, len, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
}

/* ---- the launcher */

/* In the child of a launch: the host program, with its descriptors. */
static G_GNUC_NORETURN void exec_host(const char *self,
				      const struct host_launch_msg *l,
				      int control, int image)
{
	char *argv[8 + G_N_ELEMENTS(l->groups) + 1];
	char nums[6 + G_N_ELEMENTS(l->groups)][24];
	g_autofree char *name = NULL;
	unsigned int n = 0, k = 0;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (dup2(control, 3) < 0 || dup2(image, 4) < 0)
		_exit(127);
	close_range(5, ~0u, 0);
	name = g_strdup_printf("cusemu-host: %s", l->label);
	argv[n++] = name;
	argv[n++] = (char *)"--host";
	snprintf(nums[k], 24, "%u", l->uid);
	argv[n++] = nums[k++];
	snprintf(nums[k], 24, "%u", l->gid);
	argv[n++] = nums[k++];
	snprintf(nums[k], 24, "%" G_GUINT64_FORMAT, l->memory);
	argv[n++] = nums[k++];
	snprintf(nums[k], 24, "%u", l->seccomp);
	argv[n++] = nums[k++];
	for (unsigned int i = 0; i < MIN(l->n_groups, G_N_ELEMENTS(l->groups));
	     i++) {
		snprintf(nums[k], 24, "%u", l->groups[i]);
		argv[n++] = nums[k++];
	}
	argv[n] = NULL;
	execv(self, argv);
	_exit(127);
}

static void launch(int sock, const char *self, const struct host_launch_msg *l,
		   int control, int image)
{
	struct host_launched_msg r = { HOST_MSG_LAUNCHED, 0 };
	int pidfd = -1;
	pid_t pid = control < 0 || image < 0 ? -1 : fork();

	if (pid == 0)
		exec_host(self, l, control, image);
	if (pid < 0) {
		r.pid = -(errno ? errno : EBADF);
	} else {
		r.pid = pid;
		pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	}
	host_send_fds(sock, &r, sizeof(r), &pidfd, pidfd >= 0);
	if (pidfd >= 0)
		close(pidfd);
}

static int launcher_main(int sock)
{
	g_autofree char *self = NULL;

	/* The exec made it dumpable: its hosts may be of its user. */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	self = g_file_read_link("/proc/self/exe", NULL);
	/* Its hosts start in this process group, away from the terminal's. */
	setsid();
	signal(SIGPIPE, SIG_IGN);
	for (;;) {
		union {
			struct host_launch_msg launch;
			struct host_reap_msg reap;
			uint32_t type;
		} m;
		int fds[2];
		ssize_t n = host_recv_fds(sock, &m, sizeof(m), fds, 2, 0);

		if (n <= 0)
			return 0;
		if (n == sizeof(m.launch) && m.type == HOST_MSG_LAUNCH) {
			m.launch.label[sizeof(m.launch.label) - 1] = '\0';
			launch(sock, self, &m.launch, fds[0], fds[1]);
		} else if (n == sizeof(m.reap) && m.type == HOST_MSG_REAP) {
			int status = -1;

			/* A host that does not end in time is not waited for:
			 * the daemon reads one answer per question. */
			for (int i = 0; i < 150; i++) {
				pid_t r = waitpid(m.reap.pid, &status, WNOHANG);

				if (r != 0) {
					if (r < 0)
						status = -1;
					break;
				}
				status = -1;
				usleep(10000);
			}
			m.reap.type = HOST_MSG_REAPED;
			m.reap.status = status;
			host_send_fds(sock, &m.reap, sizeof(m.reap), NULL, 0);
		} else if (n == sizeof(m.reap) && m.type == HOST_MSG_KILL) {
			siginfo_t si = { 0 };

			/* A host of its own, not yet reaped: its pid is not
			 * another process's. */
			if (m.reap.pid > 0 &&
			    !waitid(P_PID, (id_t)m.reap.pid, &si,
				    WEXITED | WNOHANG | WNOWAIT))
				kill(m.reap.pid, SIGKILL);
		}
		for (int i = 0; i < 2; i++)
			if (fds[i] >= 0)
				close(fds[i]);
	}
}

/* ---- the host */

/* The host's log lines go to the daemon's log. */
static GLogWriterOutput log_to_daemon(GLogLevelFlags level,
				      const GLogField *fields, gsize n_fields,
				      gpointer data)
{
	struct host_text_msg m = { HOST_MSG_LOG, 0, 0, "" };

	for (gsize i = 0; i < n_fields; i++)
		if (!strcmp(fields[i].key, "MESSAGE"))
			g_strlcpy(m.text, fields[i].value, sizeof(m.text));
	m.level = level & G_LOG_LEVEL_MASK;
	host_send(&m, sizeof(m));
	return G_LOG_WRITER_HANDLED;
}

static G_GNUC_NORETURN void refuse(const char *format, ...)
	G_GNUC_PRINTF(1, 2);

static G_GNUC_NORETURN void refuse(const char *format, ...)
{
	struct host_text_msg m = { HOST_MSG_REFUSED, 0, 0, "" };
	va_list args;

	va_start(args, format);
	g_vsnprintf(m.text, sizeof(m.text), format, args);
	va_end(args);
	host_send(&m, sizeof(m));
	_exit(0);
}

/* A model's exit(): the daemon says so in its report. */
static void on_exit_status(int status, void *data)
{
	struct host_event_msg m = { HOST_MSG_EXIT, status, 0, "" };

	host_send(&m, sizeof(m));
}

static void copy_string(char *to, size_t size, const char *from,
			const char *what, const char *model)
{
	if (from && strlen(from) >= size)
		refuse("the %s of its model '%s' is longer than the %zu "
		       "characters a model host passes on",
		       what, model ? model : "", size - 1);
	g_strlcpy(to, from ? from : "", size);
}

static unsigned int model_slots(const struct cusemu_device_model *m)
{
	const void *slots[] = {
		[HOST_SLOT_PROBE] = m->probe,
		[HOST_SLOT_REMOVE] = m->remove,
		[HOST_SLOT_OPEN] = m->open,
		[HOST_SLOT_RELEASE] = m->release,
		[HOST_SLOT_READ] = m->read,
		[HOST_SLOT_WRITE] = m->write,
		[HOST_SLOT_POLL] = m->poll,
		[HOST_SLOT_CONTROL] = m->control,
		[HOST_SLOT_SANDBOXED] = m->sandboxed,
		[HOST_SLOT_IOCTL] = m->ioctl,
		[HOST_SLOT_UNLOCKED_IOCTL] = m->unlocked_ioctl,
		[HOST_SLOT_COMPAT_IOCTL] = m->compat_ioctl,
		[HOST_SLOT_IOCTL_NATIVE] = m->ioctl_native,
		[HOST_SLOT_IOCTL_COMPAT] = m->ioctl_compat,
		[HOST_SLOT_IOCTL_FETCH] = m->ioctl_fetch,
	};
	unsigned int bits = 0;

	for (unsigned int i = 0; i < G_N_ELEMENTS(slots); i++)
		if (slots[i])
			bits |= HOST_SLOT_BIT(i);
	return bits;
}

static unsigned int rows(const struct cusemu_ioctl *t)
{
	unsigned int n = 0;

	while (t && t[n].name)
		n++;
	return n;
}

/* Where fn is in the plugin's file (its ELF address), for the daemon to
 * symbolize; 0 when it is in another object. */
static uint64_t plugin_address(const void *fn)
{
	struct link_map *map = NULL;
	Dl_info info;

	if (!fn || !plugin_map ||
	    !dladdr1(fn, &info, (void **)&map, RTLD_DL_LINKMAP) ||
	    map != plugin_map)
		return 0;
	return (uintptr_t)fn - plugin_map->l_addr;
}

static void describe_table(unsigned int model, unsigned int which,
			   const struct cusemu_device_model *m,
			   const struct cusemu_ioctl *t)
{
	for (unsigned int i = 0; t && t[i].name; i++) {
		struct host_row_msg r = { .type = HOST_MSG_ROW, .model = model,
					  .table = which, .cmd = t[i].cmd };

		copy_string(r.name, sizeof(r.name), t[i].name, "row name",
			    m->name);
		r.payload = t[i].payload;
		r.has_handler = t[i].handler != NULL;
		r.has_fetch = t[i].fetch != NULL;
		r.handler_at = plugin_address((const void *)t[i].handler);
		host_send(&r, sizeof(r));
	}
}

static void describe_model(unsigned int i, const struct cusemu_device_model *m)
{
	struct host_model_msg mm = { .type = HOST_MSG_MODEL, .index = i };
	unsigned int n_params = 0;

	copy_string(mm.name, sizeof(mm.name), m->name, "name", m->name);
	copy_string(mm.summary, sizeof(mm.summary), m->summary, "summary",
		    m->name);
	copy_string(mm.node_prefix, sizeof(mm.node_prefix), m->node_prefix,
		    "node_prefix", m->name);
	mm.has_summary = m->summary != NULL;
	mm.has_node_prefix = m->node_prefix != NULL;
	mm.has_name = m->name != NULL;
	mm.slots = model_slots(m);
	mm.compat_ptr_ioctl = m->compat_ptr_ioctl;
	while (m->params && m->params[n_params].key)
		n_params++;
	mm.n_params = n_params;
	mm.n_rows[0] = rows(m->native_table);
	mm.n_rows[1] = rows(m->compat_table);
	mm.has_table[0] = m->native_table != NULL;
	mm.has_table[1] = m->compat_table != NULL;
	if (n_params > HOST_PARAMS_MAX || mm.n_rows[0] > HOST_ROWS_MAX ||
	    mm.n_rows[1] > HOST_ROWS_MAX)
		refuse("its model '%s' has more keys or table rows than a "
		       "model host passes on (%d, %d)",
		       mm.name, HOST_PARAMS_MAX, HOST_ROWS_MAX);
	host_send(&mm, sizeof(mm));
	for (unsigned int p = 0; p < n_params; p++) {
		const struct cusemu_param *cp = &m->params[p];
		struct host_param_msg pm = { .type = HOST_MSG_PARAM,
					      .model = i };

		copy_string(pm.key, sizeof(pm.key), cp->key, "key", m->name);
		pm.param_type = cp->type;
		pm.has_default = cp->default_value != NULL;
		copy_string(pm.default_value, sizeof(pm.default_value),
			    cp->default_value, "default", m->name);
		copy_string(pm.help, sizeof(pm.help), cp->help, "help",
			    m->name);
		pm.min = cp->min;
		pm.max = cp->max;
		host_send(&pm, sizeof(pm));
	}
	describe_table(i, 0, m, m->native_table);
	describe_table(i, 1, m, m->compat_table);
}

/* The objects loaded, with their addresses: the daemon symbolizes with
 * them. */
static int describe_module(struct dl_phdr_info *info, size_t size, void *data)
{
	const void *plugin_sym = data;
	struct host_module_msg m = { .type = HOST_MSG_MODULE };
	bool has_plugin = false;

	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && (uintptr_t)plugin_sym >= start &&
		    (uintptr_t)plugin_sym < start + ph->p_memsz)
			has_plugin = true;
	}
	m.plugin = has_plugin;
	m.base = info->dlpi_addr;
	if (info->dlpi_name && info->dlpi_name[0] != '/' &&
	    info->dlpi_name[0])
		return 0;	/* the vDSO */
	g_strlcpy(m.path, info->dlpi_name ? info->dlpi_name : "",
		  sizeof(m.path));
	host_send(&m, sizeof(m));
	return 0;
}

static void load_plugin(void)
{
	GModule *module = g_module_open("/proc/self/fd/4", G_MODULE_BIND_LOCAL);
	const struct cusemu_plugin *plugin;
	struct host_hello_msg hello = { .type = HOST_MSG_HELLO,
					.version = HOST_PROTO_VERSION,
					.pid = getpid() };
	gpointer sym;

	if (!module)
		refuse("not a shared object this daemon can load: %s",
		       g_module_error());
	if (!g_module_symbol(module, CUSEMU_PLUGIN_SYMBOL, &sym) || !sym)
		refuse("no cusemu model symbol '%s'; end the model's file "
		       "with CUSEMU_PLUGIN(&model) of <cusemu/plugin.h>",
		       CUSEMU_PLUGIN_SYMBOL);
	plugin = sym;
	if (!dladdr1(sym, &(Dl_info){ 0 }, (void **)&plugin_map,
		     RTLD_DL_LINKMAP))
		plugin_map = NULL;
	if (plugin->api_version != CUSEMU_API_VERSION)
		refuse("built for model API version %u, this daemon has "
		       "version %d; rebuild it against this daemon's SDK "
		       "(pkg-config cusemu-1)",
		       plugin->api_version, CUSEMU_API_VERSION);
	if (!plugin->models || !plugin->models[0])
		refuse("it names no model");
	g_module_make_resident(module);
	host_models = plugin->models;
	while (host_models[host_n_models])
		host_n_models++;
	if (host_n_models > HOST_MODELS_MAX)
		refuse("it has more than %d models", HOST_MODELS_MAX);
	hello.n_models = host_n_models;
	host_send(&hello, sizeof(hello));
	for (unsigned int i = 0; i < host_n_models; i++)
		describe_model(i, host_models[i]);
	dl_iterate_phdr(describe_module, (void *)plugin);
	host_send(&(uint32_t){ HOST_MSG_READY }, sizeof(uint32_t));
}

/* The daemon's end of the control socket: channels, interrupts. */
static G_GNUC_NORETURN void serve_control(void)
{
	for (;;) {
		struct host_channel_msg m;
		int fds[2];
		ssize_t n = host_recv_fds(host_control, &m, sizeof(m), fds, 2, 0);

		if (n <= 0)
			_exit(0);	/* the daemon is done with us */
		if (n == sizeof(m) && m.type == HOST_MSG_CHANNEL &&
		    fds[0] >= 0 && fds[1] >= 0) {
			host_serve_channel(fds[0], fds[1], m.channel);
			continue;
		}
		for (int i = 0; i < 2; i++)
			if (fds[i] >= 0)
				close(fds[i]);
		if (n == sizeof(m) && m.type == HOST_MSG_INTERRUPT)
			host_interrupt(m.channel, m.seq);
		else if (n == sizeof(m) && m.type == HOST_MSG_SAMPLE_ASK)
			host_sample(m.channel);
	}
}

static int host_main(int argc, char **argv)
{
	struct cusemu_host_seal seal = { 0 };
	gid_t groups[64];
	guint64 v[4];

	if (argc < 6)
		return 2;
	for (int i = 0; i < 4; i++)
		v[i] = g_ascii_strtoull(argv[2 + i], NULL, 10);
	for (int i = 6; i < argc && i - 6 < (int)G_N_ELEMENTS(groups); i++) {
		groups[i - 6] = (gid_t)g_ascii_strtoull(argv[i], NULL, 10);
		seal.n_groups++;
	}
	host_control = 3;
	signal(SIGPIPE, SIG_IGN);
	g_log_set_writer_func(log_to_daemon, NULL, NULL);
	seal.uid = (uid_t)v[0];
	seal.gid = (gid_t)v[1];
	seal.groups = groups;
	seal.memory = v[2];
	seal.seccomp = (enum cusemu_seccomp_mode)v[3];
	host_fault_init();
	{
		g_autoptr(GError) error = NULL;

		if (!cusemu_sandbox_seal_host(&seal, &error))
			refuse("the model host cannot enter its sandbox: %s",
			       error->message);
	}
	on_exit(on_exit_status, NULL);
	load_plugin();
	serve_control();
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--launcher"))
		return launcher_main(atoi(argv[2]));
	if (argc >= 2 && !strcmp(argv[1], "--host"))
		return host_main(argc, argv);
	fprintf(stderr, "cusemu-host: cusemud starts this program; it is not "
			"for running by hand\n");
	return 2;
}
