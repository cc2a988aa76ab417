/* SPDX-License-Identifier: MIT */
/* The shared parts of the fuzz targets, see fuzz-common.h. */
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "fuzz-common.h"

size_t fuzz_bytes(struct fuzz_input *in, void *to, size_t n)
{
	size_t have = MIN(n, in->size);

	memcpy(to, in->data, have);
	memset((uint8_t *)to + have, 0, n - have);
	in->data += have;
	in->size -= have;
	return in->size;
}

uint8_t fuzz_u8(struct fuzz_input *in)
{
	uint8_t v;

	fuzz_bytes(in, &v, sizeof(v));
	return v;
}

uint16_t fuzz_u16(struct fuzz_input *in)
{
	uint16_t v;

	fuzz_bytes(in, &v, sizeof(v));
	return v;
}

uint32_t fuzz_u32(struct fuzz_input *in)
{
	uint32_t v;

	fuzz_bytes(in, &v, sizeof(v));
	return v;
}

uint64_t fuzz_u64(struct fuzz_input *in)
{
	uint64_t v;

	fuzz_bytes(in, &v, sizeof(v));
	return v;
}

static GLogWriterOutput log_writer(GLogLevelFlags level,
				   const GLogField *fields, gsize n_fields,
				   gpointer data)
{
	const char *domain = "";

	for (gsize i = 0; i < n_fields; i++)
		if (!strcmp(fields[i].key, "GLIB_DOMAIN"))
			domain = fields[i].value;
	if ((level & (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL)) ||
	    ((level & G_LOG_LEVEL_WARNING) &&
	     !strcmp(domain, "cusemu-transport"))) {
		g_log_writer_standard_streams(level, fields, n_fields, data);
		abort();
	}
	return G_LOG_WRITER_HANDLED;
}

void fuzz_log_init(void)
{
	g_log_set_writer_func(log_writer, NULL, NULL);
}
