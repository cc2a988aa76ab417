/* SPDX-License-Identifier: MIT */
/*
 * Loading device models from plugins: the file's ownership and permissions
 * first (sshd's rule for what root runs), then a sealed copy of it in
 * memory: no later write to the file (cp over it keeps its inode) changes
 * the code that runs. A model host loads the copy (host.h) and describes
 * its models, which the daemon checks (the entry symbol, the API version,
 * the models' names) and serves through proxies; a device with
 * isolation=none has GModule load the same copy into the daemon instead.
 */
#define G_LOG_DOMAIN "cusemu-plugin"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>
#include <gmodule.h>

#include "cusemu/plugin.h"
#include "device.h"
#include "host.h"
#include "plugin.h"

/* Set before start-up alone (plugin.h); tools/abicheck reads it too. */
const char *cusemu_models_dir = CUSEMU_MODELS_DIR;

/* One load of a plugin file; never unloaded, since code of it may run. */
struct plugin_file {
	char *origin;		/* its real path */
	char *loaded_as;	/* the name the dynamic loader knows it by */
	char *sum;		/* SHA-256 of the content loaded */
	int fd;			/* the sealed copy loaded: for backtraces */
	struct cusemu_host_models *hosted;	/* its host's description */
	GModule *module;	/* the copy loaded in the daemon, if asked */
	const struct cusemu_plugin *plugin;	/* its entry, then */
};

struct loaded {
	const struct cusemu_device_model *model;	/* the host's proxy */
	const struct cusemu_device_model *in_process;	/* or NULL */
	struct plugin_file *file;
	bool current;		/* false once a reload brought another */
};

/*
 * The loader's state, one per process as the code it loads is: the kernel's
 * part calls plugin_source's functions with no pointer of ours.
 */
static struct {
	/*
	 * struct loaded, in load order. The main thread alone adds and
	 * prunes; it takes the lock to do so, and other threads (a report's
	 * origin, a backtrace's objects) take it to read.
	 */
	GArray *loaded;
	GMutex lock;
	/*
	 * NAME.so of the models directory, by NAME, once tried: the GError
	 * of its refusal, or NULL when it loaded. A file is tried once, so
	 * that its constructors run once and a second look says what the
	 * first found.
	 */
	GHashTable *dir_tried;
} loader;

static const struct loaded *find_loaded(const char *name)
{
	for (guint i = 0; loader.loaded && i < loader.loaded->len; i++) {
		const struct loaded *l =
			&g_array_index(loader.loaded, struct loaded, i);

		if (l->current && !strcmp(l->model->name, name))
			return l;
	}
	return NULL;
}

static gboolean refuse(GError **error, const char *path, const char *format,
		       ...) G_GNUC_PRINTF(3, 4);

static gboolean refuse(GError **error, const char *path, const char *format,
		       ...)
{
	g_autofree char *why = NULL;
	va_list args;

	va_start(args, format);
	why = g_strdup_vprintf(format, args);
	va_end(args);
	g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_PERM,
		    "plugin %s refused: %s", path, why);
	return FALSE;
}

/* Who may own and write the path: root, and the daemon's user if not root. */
static char *trusted(uid_t self)
{
	return self ? g_strdup_printf("root or uid %u", (unsigned int)self)
		    : g_strdup("root");
}

/*
 * A directory that others can write, above the plugin. Sticky (as /tmp and
 * /var/tmp are), it keeps them from removing or renaming an entry they do
 * not own, so it is safe when its next component, child_uid, is root's or
 * the daemon's user's. Never advise chmod on such a directory: the system
 * needs it as it is. Otherwise advise chmod only on the plugin's own
 * directory, which its author made; above it, moving is safe (fix says
 * what to move).
 */
static gboolean safe_dir(const char *path, const char *p,
			 const struct stat *st, uid_t child_uid, bool own_dir,
			 const char *fix, GError **error)
{
	uid_t self = geteuid();
	const char *by = st->st_mode & S_IWOTH ? "anyone" : "its group";
	unsigned int mode = st->st_mode & 07777;

	if (st->st_mode & S_ISVTX) {
		if (child_uid == 0 || child_uid == self)
			return TRUE;
		return refuse(error, path,
			      "%s is writable by %s (mode %04o), and sticky "
			      "keeps others from replacing only what root or "
			      "the daemon's user owns there; %s",
			      p, by, mode, fix);
	}
	if (own_dir)
		return refuse(error, path,
			      "%s is writable by %s (mode %04o); make it "
			      "writable by its owner alone: chmod go-w %s",
			      p, by, mode, p);
	return refuse(error, path,
		      "%s is writable by %s (mode %04o) and not sticky, so "
		      "others could replace what it holds; %s",
		      p, by, mode, fix);
}

/*
 * Whether uid is the id that stands, in the daemon's user namespace, for
 * every id the namespace does not map, when the daemon is no root outside
 * it (cusemu-run as an ordinary user). The namespace's own root there is
 * the user; the host's root owns / and shows as that id. Nothing owned
 * so can give the daemon more than the user's own rights, which it has
 * anyway. For root's namespace, which maps root to itself, the id stays
 * untrusted: it is every other user.
 */
static bool outside_namespace(uid_t uid)
{
	static gsize done;
	static uid_t overflow = (uid_t)-1;

	if (g_once_init_enter(&done)) {
		g_autofree char *map = NULL, *text = NULL;
		unsigned long inside, outside, count;

		if (g_file_get_contents("/proc/self/uid_map", &map, NULL,
					NULL) &&
		    sscanf(map, "%lu %lu %lu", &inside, &outside, &count) ==
			    3 &&
		    inside == 0 && outside != 0 && count == 1 &&
		    g_file_get_contents("/proc/sys/kernel/overflowuid", &text,
					NULL, NULL))
			overflow = (uid_t)strtoul(text, NULL, 10);
		g_once_init_leave(&done, 1);
	}
	return uid == overflow;
}

/*
 * The plugin and every directory above it: owned by root or by the user
 * the daemon runs as, and writable by that owner alone, or sticky (see
 * safe_dir). Anyone else who could replace one of them could make the
 * daemon run their code as root. With runpath, real is a directory the
 * plugin's libraries are looked up in (runpath as the plugin names it),
 * held to the same rules: the directory itself as the plugin file.
 */
static gboolean safe_path(const char *path, const char *real,
			  const char *runpath, GError **error)
{
	g_autofree char *p = g_strdup(real);
	g_autofree char *who = trusted(geteuid());
	g_autofree char *fix = NULL;
	uid_t self = geteuid(), child_uid = self;
	bool file = true, own_dir = false;

	if (runpath)
		fix = g_strdup_printf("its run path %s names it, and the "
				      "plugin's libraries come from there; "
				      "link the plugin without it "
				      "(-Wl,-rpath), or put its libraries in "
				      "a directory that only %s can write",
				      runpath, who);
	else
		fix = g_strdup_printf("copy the plugin into a directory that "
				      "only %s can write", who);
	for (;;) {
		struct stat st;
		char *slash;

		if (lstat(p, &st) < 0)
			return refuse(error, path, "%s: %s", p,
				      g_strerror(errno));
		if (st.st_uid != 0 && st.st_uid != self &&
		    !(!file && outside_namespace(st.st_uid) &&
		      !(st.st_mode & (S_IWGRP | S_IWOTH))))
			return refuse(error, path,
				      "%s belongs to uid %u, neither root nor "
				      "the daemon's user: that user could "
				      "replace %s; %s",
				      p, (unsigned int)st.st_uid,
				      runpath ? "the libraries found there"
					      : "the plugin",
				      fix);
		if (file && runpath && st.st_mode & (S_IWGRP | S_IWOTH))
			return refuse(error, path,
				      "%s is writable by %s (mode %04o): "
				      "others could put a library there; %s",
				      p, st.st_mode & S_IWOTH ? "anyone"
							      : "its group",
				      (unsigned int)(st.st_mode & 07777), fix);
		if (file && st.st_mode & (S_IWGRP | S_IWOTH))
			return refuse(error, path,
				      "%s is writable by %s (mode %04o); make "
				      "it writable by its owner alone: chmod "
				      "go-w %s",
				      p, st.st_mode & S_IWOTH ? "anyone"
							      : "its group",
				      (unsigned int)(st.st_mode & 07777), p);
		if (!file && st.st_mode & (S_IWGRP | S_IWOTH) &&
		    !safe_dir(path, p, &st, child_uid, own_dir, fix, error))
			return FALSE;
		if (!strcmp(p, "/"))
			return TRUE;
		own_dir = file;
		file = false;
		child_uid = st.st_uid;
		slash = strrchr(p, '/');
		if (slash == p)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
}

static gboolean check_model(const char *path,
			    const struct cusemu_device_model *m,
			    const char *reloading, GError **error)
{
	const struct cusemu_device_model *builtin;
	const struct loaded *other;

	if (!m->name || !*m->name || !m->node_prefix)
		return refuse(error, path, "a model without a name or "
					   "node_prefix; both are required");
	/* Names go into --device, configuration groups and JSON as they are. */
	for (const char *c = m->name; *c; c++)
		if (!g_ascii_isalnum(*c) && !strchr("-_.", *c))
			return refuse(error, path,
				      "its model name '%s' has a character "
				      "other than letters, digits, '-', '_' "
				      "and '.'",
				      m->name);
	for (unsigned int i = 0; cusemu_device_models[i]; i++) {
		builtin = cusemu_device_models[i];
		if (!strcmp(builtin->name, m->name))
			return refuse(error, path,
				      "its model '%s' has the name of a "
				      "built-in model; rename it",
				      m->name);
	}
	other = find_loaded(m->name);
	if (other && !(reloading && !strcmp(other->file->origin, reloading)))
		return refuse(error, path,
			      "its model '%s' is already loaded from %s; "
			      "rename one of them",
			      m->name, other->file->origin);
	return TRUE;
}

/* Model i of a plugin's list has a name none before it has. */
static gboolean check_siblings(const char *path,
			       const struct cusemu_device_model *const *models,
			       unsigned int i, GError **error)
{
	for (unsigned int j = 0; j < i; j++)
		if (!strcmp(models[j]->name, models[i]->name))
			return refuse(error, path,
				      "it has two models named '%s'; rename "
				      "one of them",
				      models[i]->name);
	return TRUE;
}

/*
 * Open a plugin under the loader name as (path as the user gave it, for
 * messages), with its checks; the module and its entry symbol.
 */
static GModule *open_plugin(const char *path, const char *as,
			    const char *reloading,
			    const struct cusemu_plugin **plugin,
			    GError **error)
{
	GModule *module = g_module_open(as, G_MODULE_BIND_LOCAL);
	gpointer sym;

	if (!module) {
		refuse(error, path, "not a shared object this daemon can load: "
				    "%s",
		       g_module_error());
		return NULL;
	}
	if (!g_module_symbol(module, CUSEMU_PLUGIN_SYMBOL, &sym) || !sym) {
		g_module_close(module);
		refuse(error, path,
		       "no cusemu model symbol '%s'; end the model's file "
		       "with CUSEMU_PLUGIN(&model) of <cusemu/plugin.h>",
		       CUSEMU_PLUGIN_SYMBOL);
		return NULL;
	}
	*plugin = sym;
	if ((*plugin)->api_version != CUSEMU_API_VERSION) {
		unsigned int v = (*plugin)->api_version;

		g_module_close(module);
		refuse(error, path,
		       "built for model API version %u, this daemon has "
		       "version %d; rebuild it against this daemon's SDK "
		       "(pkg-config cusemu-1)",
		       v, CUSEMU_API_VERSION);
		return NULL;
	}
	for (unsigned int i = 0; (*plugin)->models && (*plugin)->models[i];
	     i++) {
		if (!check_model(path, (*plugin)->models[i], reloading,
				 error) ||
		    !check_siblings(path, (*plugin)->models, i, error)) {
			g_module_close(module);
			return NULL;
		}
	}
	if (!(*plugin)->models || !(*plugin)->models[0]) {
		g_module_close(module);
		refuse(error, path, "it names no model");
		return NULL;
	}
	return module;
}

/* Limits on what a plugin's dynamic section may make us read. */
#define ELF_MAX_PHDRS 256
#define ELF_MAX_DYNAMIC (64 * 1024)
#define ELF_MAX_STRTAB (1024 * 1024)

/* lseek and read, not pread: a reload runs under the daemon's filter. */
static bool read_at(int fd, void *buf, size_t len, off_t off)
{
	ssize_t n;

	if (lseek(fd, off, SEEK_SET) != off)
		return false;
	do
		n = read(fd, buf, len);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)len;
}

/* The file offset of a virtual address, through the PT_LOAD segments. */
static bool elf_offset(const Elf64_Phdr *ph, unsigned int n, Elf64_Addr addr,
		       off_t *off)
{
	for (unsigned int i = 0; i < n; i++) {
		if (ph[i].p_type == PT_LOAD && addr >= ph[i].p_vaddr &&
		    addr - ph[i].p_vaddr < ph[i].p_filesz) {
			*off = ph[i].p_offset + (addr - ph[i].p_vaddr);
			return true;
		}
	}
	return false;
}

/*
 * The strings of a 64-bit ELF file's dynamic section that name where its
 * libraries come from: DT_RUNPATH and DT_RPATH, and DT_NEEDED names with a
 * slash (a path, not a name to look up). FALSE when the section cannot
 * be read.
 */
static gboolean elf_search_strings(int fd, GPtrArray *runpaths,
				   GPtrArray *needed)
{
	Elf64_Phdr ph[ELF_MAX_PHDRS];
	g_autofree Elf64_Dyn *dyn = NULL;
	g_autofree char *strtab = NULL;
	Elf64_Addr strtab_addr = 0;
	Elf64_Xword strsz = 0;
	const Elf64_Phdr *dynamic = NULL;
	Elf64_Ehdr eh;
	size_t ndyn;
	off_t off;

	/* Not ELF, or not ours: the loader says so. */
	if (!read_at(fd, &eh, sizeof(eh), 0) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64)
		return TRUE;
	if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum > ELF_MAX_PHDRS ||
	    !read_at(fd, ph, eh.e_phnum * sizeof(Elf64_Phdr), eh.e_phoff))
		return FALSE;
	for (unsigned int i = 0; i < eh.e_phnum; i++)
		if (ph[i].p_type == PT_DYNAMIC)
			dynamic = &ph[i];
	if (!dynamic)
		return TRUE;	/* static: it loads nothing */
	if (dynamic->p_filesz > ELF_MAX_DYNAMIC)
		return FALSE;
	ndyn = dynamic->p_filesz / sizeof(Elf64_Dyn);
	dyn = g_new0(Elf64_Dyn, ndyn + 1);
	if (!read_at(fd, dyn, ndyn * sizeof(Elf64_Dyn), dynamic->p_offset))
		return FALSE;
	for (size_t i = 0; i < ndyn && dyn[i].d_tag != DT_NULL; i++) {
		if (dyn[i].d_tag == DT_STRTAB)
			strtab_addr = dyn[i].d_un.d_ptr;
		else if (dyn[i].d_tag == DT_STRSZ)
			strsz = dyn[i].d_un.d_val;
	}
	if (!strsz || strsz > ELF_MAX_STRTAB ||
	    !elf_offset(ph, eh.e_phnum, strtab_addr, &off))
		return FALSE;
	strtab = g_malloc(strsz + 1);
	if (!read_at(fd, strtab, strsz, off))
		return FALSE;
	strtab[strsz] = '\0';
	for (size_t i = 0; i < ndyn && dyn[i].d_tag != DT_NULL; i++) {
		Elf64_Xword at = dyn[i].d_un.d_val;

		if (dyn[i].d_tag != DT_RUNPATH && dyn[i].d_tag != DT_RPATH &&
		    dyn[i].d_tag != DT_NEEDED)
			continue;
		if (at >= strsz)
			return FALSE;
		if (dyn[i].d_tag != DT_NEEDED)
			g_ptr_array_add(runpaths, g_strdup(strtab + at));
		else if (strchr(strtab + at, '/'))
			g_ptr_array_add(needed, g_strdup(strtab + at));
	}
	return TRUE;
}

/* $ORIGIN and ${ORIGIN} as the loader expands them; NULL for $LIB and
 * $PLATFORM, whose values are the loader's to choose. */
static char *expand_origin(const char *dir, const char *origin)
{
	GString *out = g_string_new(NULL);

	for (const char *c = dir; *c;) {
		if (g_str_has_prefix(c, "$ORIGIN") &&
		    !g_ascii_isalnum(c[7]) && c[7] != '_') {
			g_string_append(out, origin);
			c += 7;
		} else if (g_str_has_prefix(c, "${ORIGIN}")) {
			g_string_append(out, origin);
			c += 9;
		} else if (*c == '$') {
			g_string_free(out, TRUE);
			return NULL;
		} else {
			g_string_append_c(out, *c++);
		}
	}
	return g_string_free(out, FALSE);
}

/*
 * One directory of a run path, held to safe_path's rules. One that does not
 * exist is safe when nobody else could make it: its nearest existing
 * ancestor is then checked as if it were the directory.
 */
static gboolean safe_search_dir(const char *path, const char *runpath,
				const char *dir, const char *origin,
				GError **error)
{
	g_autofree char *expanded = expand_origin(dir, origin);
	g_autofree char *real = NULL;
	g_autofree char *up = NULL;

	if (!expanded)
		return refuse(error, path,
			      "its run path %s names %s, whose $LIB or "
			      "$PLATFORM the loader expands as it chooses; "
			      "link it with absolute directories or $ORIGIN",
			      runpath, dir);
	if (expanded[0] != '/')
		return refuse(error, path,
			      "its run path %s names '%s', which is relative "
			      "to the daemon's working directory; link it with "
			      "absolute directories or $ORIGIN",
			      runpath, dir);
	up = g_strdup(expanded);
	while (!(real = realpath(up, NULL)) && errno == ENOENT &&
	       strcmp(up, "/")) {
		char *parent = g_path_get_dirname(up);

		g_free(up);
		up = parent;
	}
	if (!real)
		return refuse(error, path, "its run path %s: %s: %s", runpath,
			      up, g_strerror(errno));
	return safe_path(path, real, runpath, error);
}

/*
 * Where the plugin's own libraries come from: every directory of its
 * RUNPATH and RPATH, and every DT_NEEDED given as a path, held to the
 * plugin's own rules. Else a root-owned plugin could load, constructors
 * and all, a library that another user put there.
 */
static gboolean safe_libraries(const char *path, const char *real, int fd,
			       GError **error)
{
	g_autoptr(GPtrArray) runpaths = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) needed = g_ptr_array_new_with_free_func(g_free);
	g_autofree char *origin = g_path_get_dirname(real);

	if (!elf_search_strings(fd, runpaths, needed))
		return refuse(error, path, "its ELF dynamic section cannot be "
					   "read; is it a shared object?");
	for (guint i = 0; i < runpaths->len; i++) {
		const char *runpath = runpaths->pdata[i];
		g_auto(GStrv) dirs = g_strsplit(runpath, ":", -1);

		for (char **d = dirs; *d; d++)
			if (!safe_search_dir(path, runpath, *d, origin, error))
				return FALSE;
	}
	for (guint i = 0; i < needed->len; i++) {
		const char *lib = needed->pdata[i];
		g_autofree char *lib_real = NULL;

		if (lib[0] != '/')
			return refuse(error, path,
				      "it needs the library %s, a path relative "
				      "to the daemon's working directory; link "
				      "it by name (-lNAME)",
				      lib);
		lib_real = realpath(lib, NULL);
		if (lib_real && !safe_path(path, lib_real, NULL, error))
			return FALSE;
	}
	return TRUE;
}

/* The file at real, checked and opened: for its identity and backtraces. */
static int open_checked(const char *path, const char *real, struct stat *st,
			GError **error)
{
	int fd;

	if (!safe_path(path, real, NULL, error))
		return -1;
	fd = open(real, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, st) < 0 || !S_ISREG(st->st_mode)) {
		refuse(error, path, "%s",
		       fd < 0 ? g_strerror(errno) : "not a regular file");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (!safe_libraries(path, real, fd, error)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* A plugin larger than this is refused before it is copied. */
#define PLUGIN_MAX_BYTES (256u << 20)

/*
 * The content of fd, a checked plugin, copied into a sealed memory file
 * that the dynamic loader maps instead of the plugin's own file: writes
 * to the file after this (cp keeps its inode, and a mapping of it would
 * change under the daemon) reach nothing the daemon runs. *sum is the
 * content's SHA-256, by which a reload tells a rebuilt file. -1 with a
 * message.
 */
static int image_of(const char *path, int fd, const struct stat *st,
		    char **sum, GError **error)
{
	g_autoptr(GChecksum) hash = g_checksum_new(G_CHECKSUM_SHA256);
	g_autofree char *base = g_path_get_basename(path);
	char buf[64 * 1024];
	int image;
	ssize_t n;

	if ((uint64_t)st->st_size > PLUGIN_MAX_BYTES) {
		refuse(error, path, "it is %jd bytes, more than the %u a plugin "
				    "may have",
		       (intmax_t)st->st_size, PLUGIN_MAX_BYTES);
		return -1;
	}
	image = memfd_create(base, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (image < 0 || lseek(fd, 0, SEEK_SET) != 0) {
		refuse(error, path, "a copy to load: %s", g_strerror(errno));
		goto fail;
	}
	for (uint64_t total = 0;; total += (uint64_t)n) {
		do
			n = read(fd, buf, sizeof(buf));
		while (n < 0 && errno == EINTR);
		if (n <= 0)
			break;
		if (total + (uint64_t)n > PLUGIN_MAX_BYTES) {
			refuse(error, path, "it grew beyond %u bytes while it "
					    "was read",
			       PLUGIN_MAX_BYTES);
			goto fail;
		}
		g_checksum_update(hash, (const guchar *)buf, (gsize)n);
		for (ssize_t off = 0, w; off < n; off += w) {
			w = write(image, buf + off, (size_t)(n - off));
			if (w < 0 && errno == EINTR)
				w = 0;
			else if (w <= 0) {
				refuse(error, path, "a copy to load: %s",
				       g_strerror(w < 0 ? errno : EIO));
				goto fail;
			}
		}
	}
	if (n < 0 || fcntl(image, F_ADD_SEALS,
			   F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW |
				   F_SEAL_SEAL) < 0) {
		refuse(error, path, "%s: %s", n < 0 ? "reading it" : "sealing "
				    "its copy", g_strerror(errno));
		goto fail;
	}
	*sum = g_strdup(g_checksum_get_string(hash));
	return image;
fail:
	if (image >= 0)
		close(image);
	return -1;
}

/* The name the dynamic loader is given for an image: its own inode. */
static char *image_name(int image)
{
	return g_strdup_printf("/proc/self/fd/%d", image);
}

/*
 * The code of each plugin, for a fault in a thread of a model's own (a
 * timer): written at load, read by the oops handler, never shrinking.
 * File-scope: the fault's signal handler reads it, with no lock.
 */
#define MAX_CODE 512
static struct {
	uintptr_t start, end;
	const char *origin;	/* the load's, as cusemu_plugin_origin() */
} plugin_text[MAX_CODE];
static gint n_text;

struct object_search {
	uintptr_t address;
	const char *origin;
};

/* The executable segments of the object that holds the address. */
static int note_object(struct dl_phdr_info *info, size_t size, void *data)
{
	const struct object_search *q = data;
	bool holds = false;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && q->address >= start &&
		    q->address < start + ph->p_memsz)
			holds = true;
	}
	for (int i = 0; holds && i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		int n = g_atomic_int_get(&n_text);

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) ||
		    n >= MAX_CODE)
			continue;
		plugin_text[n].start = info->dlpi_addr + ph->p_vaddr;
		plugin_text[n].end = plugin_text[n].start + ph->p_memsz;
		plugin_text[n].origin = q->origin;
		g_atomic_int_set(&n_text, n + 1);
	}
	return holds;
}

/* The code of a plugin just loaded (the object holding address). */
static void note_code(const void *address, const char *origin)
{
	struct object_search q = { (uintptr_t)address, origin };

	dl_iterate_phdr(note_object, &q);
}

const char *cusemu_plugin_code_origin(const void *pc)
{
	int count = g_atomic_int_get(&n_text);

	for (int i = 0; i < count; i++)
		if ((uintptr_t)pc >= plugin_text[i].start &&
		    (uintptr_t)pc < plugin_text[i].end)
			return plugin_text[i].origin;
	return NULL;
}

static const struct loaded *loaded_model(const struct cusemu_device_model *m)
{
	for (guint i = 0; loader.loaded && i < loader.loaded->len; i++) {
		const struct loaded *l =
			&g_array_index(loader.loaded, struct loaded, i);

		if (l->model == m || (m && l->in_process == m))
			return l;
	}
	return NULL;
}

/* The models of a file described by its host, from now on the current
 * ones of their names. */
static void keep(const struct cusemu_device_model *const *models,
		 struct plugin_file *file)
{
	if (!loader.loaded)
		loader.loaded = g_array_new(FALSE, FALSE,
					      sizeof(struct loaded));
	for (unsigned int i = 0; models[i]; i++) {
		struct loaded l = { models[i], NULL, file, true };

		for (guint j = 0; j < loader.loaded->len; j++) {
			struct loaded *old =
				&g_array_index(loader.loaded, struct loaded, j);

			if (old->current &&
			    !strcmp(old->model->name, l.model->name))
				old->current = false;
		}
		g_mutex_lock(&loader.lock);
		g_array_append_val(loader.loaded, l);
		g_mutex_unlock(&loader.lock);
		g_debug("model %s from %s", l.model->name, file->origin);
	}
}

/* Whether f is the current load of one of its models, or its code is in
 * the daemon, or a device still has its models. */
static bool file_kept(const struct plugin_file *f)
{
	for (guint i = 0; i < loader.loaded->len; i++) {
		const struct loaded *l =
			&g_array_index(loader.loaded, struct loaded, i);

		if (l->file == f && l->current)
			return true;
	}
	return f->module || cusemu_host_models_used(f->hosted);
}

static void file_free(struct plugin_file *f)
{
	cusemu_host_models_free(f->hosted);
	close(f->fd);
	g_free(f->origin);
	g_free(f->loaded_as);
	g_free(f->sum);
	g_free(f);
}

void cusemu_plugin_prune(void)
{
	g_autoptr(GPtrArray) gone = g_ptr_array_new();

	for (guint i = 0; loader.loaded && i < loader.loaded->len; i++) {
		struct plugin_file *f =
			g_array_index(loader.loaded, struct loaded, i).file;

		if (!file_kept(f) && !g_ptr_array_find(gone, f, NULL))
			g_ptr_array_add(gone, f);
	}
	if (!gone->len)
		return;
	g_mutex_lock(&loader.lock);
	for (guint i = loader.loaded->len; i-- > 0;) {
		struct plugin_file *f =
			g_array_index(loader.loaded, struct loaded, i).file;

		if (g_ptr_array_find(gone, f, NULL))
			g_array_remove_index(loader.loaded, i);
	}
	g_mutex_unlock(&loader.lock);
	/* Not under the lock: a host's end takes it for its report. */
	for (guint i = 0; i < gone->len; i++) {
		struct plugin_file *f = gone->pdata[i];

		g_debug("%s: the load replaced by a reload is unused: freed",
			f->origin);
		file_free(f);
	}
}

static struct plugin_file *file_new(const char *real, int image, char *sum)
{
	struct plugin_file *f = g_new0(struct plugin_file, 1);

	f->origin = g_strdup(real);
	f->loaded_as = image_name(image);
	f->sum = sum;
	f->fd = image;
	return f;
}

/* The plugin at real (path as given), checked and copied: its image. */
static int checked_image(const char *path, const char *real, char **sum,
			 GError **error)
{
	struct stat st;
	int fd = open_checked(path, real, &st, error);
	int image;

	if (fd < 0)
		return -1;
	image = image_of(path, fd, &st, sum, error);
	close(fd);
	return image;
}

/*
 * The image described by a model host, its models checked as a load's
 * (reloading: the file they may replace): the file loaded, or NULL.
 */
static struct plugin_file *describe(const char *path, const char *real,
				    int image, char *sum,
				    const char *reloading, GError **error)
{
	const struct cusemu_device_model *const *models = NULL;
	g_autoptr(GError) why = NULL;
	struct cusemu_host_models *hosted =
		cusemu_host_describe(real, image, &models, &why);
	struct plugin_file *f;

	if (!hosted) {
		refuse(error, path, "%s", why->message);
		close(image);
		g_free(sum);
		return NULL;
	}
	for (unsigned int i = 0; models[i]; i++) {
		if (!check_model(path, models[i], reloading, error) ||
		    !check_siblings(path, models, i, error)) {
			cusemu_host_models_free(hosted);
			close(image);
			g_free(sum);
			return NULL;
		}
	}
	f = file_new(real, image, sum);
	f->hosted = hosted;
	keep(models, f);
	return f;
}

gboolean cusemu_plugin_load(const char *path, GError **error)
{
	char real[PATH_MAX];
	char *sum = NULL;
	struct stat st;
	int image;

	cusemu_plugin_register();
	if (!realpath(path, real))
		return refuse(error, path, "%s", g_strerror(errno));
	if (stat(real, &st) < 0 || !S_ISREG(st.st_mode))
		return refuse(error, path, "not a regular file");
	image = checked_image(path, real, &sum, error);
	if (image < 0)
		return FALSE;
	return describe(path, real, image, sum, NULL, error) != NULL;
}

const struct cusemu_device_model *
cusemu_plugin_in_process(const struct cusemu_device_model *m, GError **error)
{
	struct loaded *l = (struct loaded *)loaded_model(m);
	struct plugin_file *f;

	if (!l)
		return m;
	if (l->in_process)
		return l->in_process;
	f = l->file;
	if (!f->module) {
		f->module = open_plugin(f->origin, f->loaded_as, f->origin,
					&f->plugin, error);
		if (!f->module)
			return NULL;
		/* Models stay for the daemon's life: never closed. */
		g_module_make_resident(f->module);
		note_code(f->plugin, f->origin);
	}
	for (unsigned int i = 0; f->plugin->models[i]; i++)
		if (!strcmp(f->plugin->models[i]->name, l->model->name))
			l->in_process = f->plugin->models[i];
	if (!l->in_process)
		refuse(error, f->origin, "loaded in the daemon, it has no model "
					 "named '%s'",
		       l->model->name);
	return l->in_process;
}

const struct cusemu_device_model *
cusemu_plugin_hosted(const struct cusemu_device_model *m)
{
	const struct loaded *l = loaded_model(m);

	return l ? l->model : m;
}

const struct cusemu_device_model *
cusemu_plugin_reload(const struct cusemu_device_model *m, GError **error)
{
	const struct loaded *l = loaded_model(m), *current;
	const struct plugin_file *was;
	const struct plugin_file *f;
	char *sum = NULL;
	int image;

	if (!l)
		return m;	/* built in: a fresh instance of the same */
	cusemu_plugin_prune();
	l = loaded_model(m);
	was = l->file;
	image = checked_image(was->origin, was->origin, &sum, error);
	if (image < 0)
		return NULL;
	/*
	 * Rebuilt or not, by content: cp over the file keeps its inode, and a
	 * touch keeps its bytes. Not rebuilt: the model loaded last (its
	 * host, if it has ended, is started again by the new instance).
	 */
	current = find_loaded(m->name);
	if (!strcmp(sum, current ? current->file->sum : was->sum)) {
		close(image);
		g_free(sum);
		return current ? current->model : l->model;
	}
	f = describe(was->origin, was->origin, image, sum, was->origin, error);
	if (!f)
		return NULL;
	current = find_loaded(m->name);
	if (current && current->file == f)
		return current->model;
	refuse(error, was->origin, "it holds no model named '%s' any more",
	       m->name);
	return NULL;
}

/* Load NAME.so of the models directory, once: the refusal, or NULL. */
static const GError *try_models_dir(const char *name, const char *file)
{
	GError *refused = NULL;
	gpointer was;

	if (!loader.dir_tried)
		loader.dir_tried = g_hash_table_new_full(
			g_str_hash, g_str_equal, g_free,
			(GDestroyNotify)g_error_free);
	if (g_hash_table_lookup_extended(loader.dir_tried, name, NULL, &was))
		return was;
	if (cusemu_plugin_load(file, &refused) && !find_loaded(name))
		g_set_error(&refused, G_FILE_ERROR, G_FILE_ERROR_NOENT,
			    "%s holds no model named '%s'", file, name);
	g_hash_table_insert(loader.dir_tried, g_strdup(name), refused);
	return refused;
}

const struct cusemu_device_model *cusemu_plugin_find(const char *name,
						     GError **error)
{
	const struct loaded *l = find_loaded(name);
	g_autofree char *file = NULL;
	const GError *refused;

	cusemu_plugin_register();
	if (l)
		return l->model;
	/* A name, not a path: nothing outside the models directory. */
	if (strchr(name, '/') || !strcmp(name, "..") || !*name)
		return NULL;
	file = g_strdup_printf("%s/%s.so", cusemu_models_dir, name);
	if (access(file, F_OK) < 0)
		return NULL;
	refused = try_models_dir(name, file);
	if (refused) {
		if (error)
			*error = g_error_copy(refused);
		return NULL;
	}
	l = find_loaded(name);
	return l ? l->model : NULL;
}

guint cusemu_plugin_models(const struct cusemu_device_model ***models)
{
	guint n = 0;

	*models = g_new0(const struct cusemu_device_model *,
			 (loader.loaded ? loader.loaded->len : 0) + 1);
	for (guint i = 0; loader.loaded && i < loader.loaded->len; i++) {
		const struct loaded *l =
			&g_array_index(loader.loaded, struct loaded, i);

		if (l->current)
			(*models)[n++] = l->model;
	}
	return n;
}

const char *cusemu_plugin_origin(const struct cusemu_device_model *m)
{
	const struct loaded *l;
	const char *origin;

	g_mutex_lock(&loader.lock);
	l = loaded_model(m);
	origin = l ? l->file->origin : NULL;
	g_mutex_unlock(&loader.lock);
	return origin;
}

const char *cusemu_plugin_file_origin(const char *path, int *fd)
{
	const char *origin = NULL;

	*fd = -1;
	g_mutex_lock(&loader.lock);
	for (guint i = 0; loader.loaded && i < loader.loaded->len && !origin;
	     i++) {
		const struct loaded *l =
			&g_array_index(loader.loaded, struct loaded, i);

		if (!strcmp(l->file->loaded_as, path)) {
			*fd = l->file->fd;
			origin = l->file->origin;
		}
	}
	g_mutex_unlock(&loader.lock);
	return origin;
}

static const char *models_dir(void)
{
	return cusemu_models_dir;
}

static const struct cusemu_model_source plugin_source = {
	.find = cusemu_plugin_find,
	.models = cusemu_plugin_models,
	.origin = cusemu_plugin_origin,
	.file_origin = cusemu_plugin_file_origin,
	.code_origin = cusemu_plugin_code_origin,
	.in_process = cusemu_plugin_in_process,
	.hosted = cusemu_plugin_hosted,
	.dir = models_dir,
};

void cusemu_plugin_register(void)
{
	cusemu_model_source_set(&plugin_source);
}
