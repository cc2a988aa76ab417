/* SPDX-License-Identifier: MIT */
/*
 * evdev: an input event device with the ABI of <linux/input.h>, served as
 * the kernel's drivers/input/evdev.c serves it. Its events come from
 * cusemuctl ("inject"), as a driver's would come from the hardware.
 */
#define G_LOG_DOMAIN "cusemu-evdev"

#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <linux/input.h>

#include <glib.h>

#include "cusemu/device.h"
#include "cusemu/sched.h"
#include "cusemu/uaccess.h"

/*
 * The names of event types and codes, made by devices/evdev/gen-input-names from
 * <linux/input-event-codes.h>. An alias is an old spelling of a code that
 * has a name of its own: accepted, never printed.
 */
struct evdev_code_name {
	const char *name;
	unsigned short value;
	bool alias;
};

extern const struct evdev_code_name evdev_code_names[];
extern const unsigned int evdev_code_names_count;

/*
 * Events each open file holds; a power of two, as evdev's buffer is. Like
 * the kernel's, the ring is full at one less.
 */
#define EVDEV_BUFFER_SIZE 64u

/*
 * How long a blocked read() sleeps before it looks again. New events and
 * the client giving up wake it at once; this only bounds a lost wake-up.
 */
#define EVDEV_READ_RECHECK_US G_TIME_SPAN_SECOND

/* The input core's defaults for a device with EV_REP (input_enable_softrepeat). */
#define EVDEV_REP_DELAY 250
#define EVDEV_REP_PERIOD 33

/* Bytes of a bitmap of bits 0..max, in whole 64-bit longs. */
#define BITMAP_BYTES(max) ((((max) + 1) + 63) / 64 * 8)

/* What read() gives each ABI: the time as two longs, then the event. */
struct evdev_event64 {
	int64_t sec;
	int64_t usec;
	uint16_t type;
	uint16_t code;
	int32_t value;
};

struct evdev_event32 {
	uint32_t sec;
	uint32_t usec;
	uint16_t type;
	uint16_t code;
	int32_t value;
};

_Static_assert(sizeof(struct evdev_event64) == 24, "native input_event");
_Static_assert(sizeof(struct evdev_event32) == 16, "i386 input_event");

/* An event as queued: the time already in the file's clock. */
struct evdev_event {
	struct timespec time;
	uint16_t type;
	uint16_t code;
	int32_t value;
};

/* The kernel's evdev_client: one per open file. */
struct evdev_client {
	struct evdev_event buffer[EVDEV_BUFFER_SIZE];
	/*
	 * As in evdev.c: events from tail to head are queued, and readers
	 * see them only up to packet_head, the end of the last SYN_REPORT.
	 */
	unsigned int head, tail, packet_head;
	clockid_t clk_type;
	/* A 32-bit caller: read() gives 16-byte events. */
	bool compat;
	bool revoked;
	/*
	 * EVIOCSMASK's masks, by event type; evmasks[0] masks the types
	 * themselves. NULL passes everything of that type.
	 */
	uint8_t *evmasks[EV_CNT];
};

/* atkbd's keymap size: 0x80 and up for the 0xe0 scancodes, 0x100 and up
 * for the keys that send no release. */
#define EVDEV_KEYMAP_SIZE 512

/* In atkbd's keymap, a scancode it drops (the fake shifts the 0xe0 keys
 * send); the key it gives is not among the device's keys. */
#define ATKBD_KEY_NULL 255

/* The index of a scancode that follows 0xe0. */
#define E0(code) (0x80 | (code))

/*
 * A PC keyboard, as atkbd registers it behind the i8042's translation
 * (atkbd_set_keycode_table() with atkbd->translated): atkbd_set2_keycode
 * indexed by the XT scancodes the i8042 hands on, 0xe0 ones from 0x80,
 * and KEY_HANGEUL and KEY_HANJA, which send no release, at 0x172 and
 * 0x171. Every other index gives KEY_RESERVED. Its keys are what
 * EVIOCGBIT(EV_KEY) reports: 145.
 */
static const uint16_t atkbd_xt_keys[][2] = {
	{ 0x01, KEY_ESC }, { 0x02, KEY_1 }, { 0x03, KEY_2 }, { 0x04, KEY_3 },
	{ 0x05, KEY_4 }, { 0x06, KEY_5 }, { 0x07, KEY_6 }, { 0x08, KEY_7 },
	{ 0x09, KEY_8 }, { 0x0a, KEY_9 }, { 0x0b, KEY_0 }, { 0x0c, KEY_MINUS },
	{ 0x0d, KEY_EQUAL }, { 0x0e, KEY_BACKSPACE }, { 0x0f, KEY_TAB },
	{ 0x10, KEY_Q }, { 0x11, KEY_W }, { 0x12, KEY_E }, { 0x13, KEY_R },
	{ 0x14, KEY_T }, { 0x15, KEY_Y }, { 0x16, KEY_U }, { 0x17, KEY_I },
	{ 0x18, KEY_O }, { 0x19, KEY_P }, { 0x1a, KEY_LEFTBRACE },
	{ 0x1b, KEY_RIGHTBRACE }, { 0x1c, KEY_ENTER }, { 0x1d, KEY_LEFTCTRL },
	{ 0x1e, KEY_A }, { 0x1f, KEY_S }, { 0x20, KEY_D }, { 0x21, KEY_F },
	{ 0x22, KEY_G }, { 0x23, KEY_H }, { 0x24, KEY_J }, { 0x25, KEY_K },
	{ 0x26, KEY_L }, { 0x27, KEY_SEMICOLON }, { 0x28, KEY_APOSTROPHE },
	{ 0x29, KEY_GRAVE }, { 0x2a, KEY_LEFTSHIFT }, { 0x2b, KEY_BACKSLASH },
	{ 0x2c, KEY_Z }, { 0x2d, KEY_X }, { 0x2e, KEY_C }, { 0x2f, KEY_V },
	{ 0x30, KEY_B }, { 0x31, KEY_N }, { 0x32, KEY_M }, { 0x33, KEY_COMMA },
	{ 0x34, KEY_DOT }, { 0x35, KEY_SLASH }, { 0x36, KEY_RIGHTSHIFT },
	{ 0x37, KEY_KPASTERISK }, { 0x38, KEY_LEFTALT }, { 0x39, KEY_SPACE },
	{ 0x3a, KEY_CAPSLOCK }, { 0x3b, KEY_F1 }, { 0x3c, KEY_F2 },
	{ 0x3d, KEY_F3 }, { 0x3e, KEY_F4 }, { 0x3f, KEY_F5 }, { 0x40, KEY_F6 },
	{ 0x41, KEY_F7 }, { 0x42, KEY_F8 }, { 0x43, KEY_F9 },
	{ 0x44, KEY_F10 }, { 0x45, KEY_NUMLOCK }, { 0x46, KEY_SCROLLLOCK },
	{ 0x47, KEY_KP7 }, { 0x48, KEY_KP8 }, { 0x49, KEY_KP9 },
	{ 0x4a, KEY_KPMINUS }, { 0x4b, KEY_KP4 }, { 0x4c, KEY_KP5 },
	{ 0x4d, KEY_KP6 }, { 0x4e, KEY_KPPLUS }, { 0x4f, KEY_KP1 },
	{ 0x50, KEY_KP2 }, { 0x51, KEY_KP3 }, { 0x52, KEY_KP0 },
	{ 0x53, KEY_KPDOT }, { 0x54, KEY_SYSRQ }, { 0x56, KEY_102ND },
	{ 0x57, KEY_F11 }, { 0x58, KEY_F12 }, { 0x59, KEY_KPEQUAL },
	{ 0x5c, KEY_KPJPCOMMA }, { 0x5d, KEY_F13 }, { 0x5e, KEY_F14 },
	{ 0x5f, KEY_F15 }, { 0x6e, KEY_F23 }, { 0x70, KEY_KATAKANAHIRAGANA },
	{ 0x73, KEY_RO }, { 0x76, KEY_ZENKAKUHANKAKU }, { 0x77, KEY_HIRAGANA },
	{ 0x78, KEY_KATAKANA }, { 0x79, KEY_HENKAN }, { 0x7b, KEY_MUHENKAN },
	{ 0x7d, KEY_YEN }, { 0x7e, KEY_KPCOMMA },
	{ E0(0x10), KEY_PREVIOUSSONG }, { E0(0x19), KEY_NEXTSONG },
	{ E0(0x1c), KEY_KPENTER }, { E0(0x1d), KEY_RIGHTCTRL },
	{ E0(0x20), KEY_MUTE }, { E0(0x21), KEY_CALC },
	{ E0(0x22), KEY_PLAYPAUSE }, { E0(0x24), KEY_STOPCD },
	{ E0(0x2a), ATKBD_KEY_NULL }, { E0(0x2e), KEY_VOLUMEDOWN },
	{ E0(0x30), KEY_VOLUMEUP }, { E0(0x32), KEY_HOMEPAGE },
	{ E0(0x35), KEY_KPSLASH }, { E0(0x36), ATKBD_KEY_NULL },
	{ E0(0x37), KEY_SYSRQ }, { E0(0x38), KEY_RIGHTALT },
	{ E0(0x45), KEY_PAUSE }, { E0(0x46), KEY_PAUSE },
	{ E0(0x47), KEY_HOME }, { E0(0x48), KEY_UP }, { E0(0x49), KEY_PAGEUP },
	{ E0(0x4b), KEY_LEFT }, { E0(0x4c), KEY_MACRO },
	{ E0(0x4d), KEY_RIGHT }, { E0(0x4e), KEY_KPPLUSMINUS },
	{ E0(0x4f), KEY_END }, { E0(0x50), KEY_DOWN },
	{ E0(0x51), KEY_PAGEDOWN }, { E0(0x52), KEY_INSERT },
	{ E0(0x53), KEY_DELETE }, { E0(0x5b), KEY_LEFTMETA },
	{ E0(0x5c), KEY_RIGHTMETA }, { E0(0x5d), KEY_COMPOSE },
	{ E0(0x5e), KEY_POWER }, { E0(0x5f), KEY_SLEEP },
	{ E0(0x63), KEY_WAKEUP }, { E0(0x65), KEY_SEARCH },
	{ E0(0x66), KEY_BOOKMARKS }, { E0(0x67), KEY_REFRESH },
	{ E0(0x68), KEY_STOP }, { E0(0x69), KEY_FORWARD },
	{ E0(0x6a), KEY_BACK }, { E0(0x6b), KEY_COMPUTER },
	{ E0(0x6c), KEY_MAIL }, { E0(0x6d), KEY_MEDIA },
	{ E0(0x6f), KEY_MACRO }, { 0x171, KEY_HANJA }, { 0x172, KEY_HANGEUL },
};

struct evdev {
	struct cusemu_device *dev;
	/* Set at probe, read-only after. */
	const char *profile;
	char *name;
	char *phys;
	char *uniq;		/* NULL: EVIOCGUNIQ says -ENOENT */
	struct input_id id;
	uint8_t propbit[BITMAP_BYTES(INPUT_PROP_MAX)];
	uint8_t evbit[BITMAP_BYTES(EV_MAX)];
	uint8_t keybit[BITMAP_BYTES(KEY_MAX)];
	uint8_t relbit[BITMAP_BYTES(REL_MAX)];
	uint8_t absbit[BITMAP_BYTES(ABS_MAX)];
	uint8_t mscbit[BITMAP_BYTES(MSC_MAX)];
	uint8_t ledbit[BITMAP_BYTES(LED_MAX)];
	uint8_t sndbit[BITMAP_BYTES(SND_MAX)];
	uint8_t ffbit[BITMAP_BYTES(FF_MAX)];
	uint8_t swbit[BITMAP_BYTES(SW_MAX)];
	/* The keyboard's scancode-to-keycode map (atkbd's size); 0 for
	 * devices without one. */
	unsigned int keymap_size;
	/* The repeat rates are atkbd's: the keyboard's own, rounded. */
	bool atkbd_rates;

	GMutex lock;		/* guards everything below, and keybit */
	uint16_t keymap[EVDEV_KEYMAP_SIZE];
	GCond wait;		/* readers wait here for a packet */
	/* The device's state, as the input core keeps it. */
	uint8_t key[BITMAP_BYTES(KEY_MAX)];
	uint8_t led[BITMAP_BYTES(LED_MAX)];
	uint8_t snd[BITMAP_BYTES(SND_MAX)];
	uint8_t sw[BITMAP_BYTES(SW_MAX)];
	struct input_absinfo absinfo[ABS_CNT];
	int rep[REP_CNT];
	GPtrArray *clients;
	struct evdev_client *grab;
	unsigned int readers;	/* reads waiting in `wait` */
	bool stopping;
};

static bool test_bit(unsigned int nr, const uint8_t *bits)
{
	return bits[nr / 8] & (1u << (nr % 8));
}

static void set_bit(unsigned int nr, uint8_t *bits)
{
	bits[nr / 8] |= 1u << (nr % 8);
}

static void assign_bit(unsigned int nr, uint8_t *bits, bool on)
{
	if (on)
		set_bit(nr, bits);
	else
		bits[nr / 8] &= ~(1u << (nr % 8));
}

/* ---- names */

/* The code names of each type; EV_KEY has keys and buttons. */
static const struct {
	unsigned int type;
	unsigned int max;
	const char *prefix[2];
} evdev_types[] = {
	{ EV_SYN, SYN_MAX, { "SYN_" } },
	{ EV_KEY, KEY_MAX, { "KEY_", "BTN_" } },
	{ EV_REL, REL_MAX, { "REL_" } },
	{ EV_ABS, ABS_MAX, { "ABS_" } },
	{ EV_MSC, MSC_MAX, { "MSC_" } },
	{ EV_SW, SW_MAX, { "SW_" } },
	{ EV_LED, LED_MAX, { "LED_" } },
	{ EV_SND, SND_MAX, { "SND_" } },
	{ EV_REP, REP_MAX, { "REP_" } },
};

static int evdev_type_index(unsigned int type)
{
	for (unsigned int i = 0; i < G_N_ELEMENTS(evdev_types); i++)
		if (evdev_types[i].type == type)
			return i;
	return -1;
}

static bool has_prefix(const char *name, const char *const *prefix)
{
	return (prefix[0] && g_str_has_prefix(name, prefix[0])) ||
	       (prefix[1] && g_str_has_prefix(name, prefix[1]));
}

/* The value of a name with one of these prefixes, or -1. */
static int evdev_lookup(const char *name, const char *const *prefix)
{
	if (!has_prefix(name, prefix))
		return -1;
	for (unsigned int i = 0; i < evdev_code_names_count; i++)
		if (!strcmp(evdev_code_names[i].name, name))
			return evdev_code_names[i].value;
	return -1;
}

/*
 * The name of a code, or NULL. Of two names for one number the later is
 * the specific one (BTN_MOUSE, then BTN_LEFT).
 */
static const char *evdev_name(unsigned int value, const char *const *prefix)
{
	const char *name = NULL;

	for (unsigned int i = 0; i < evdev_code_names_count; i++) {
		const struct evdev_code_name *n = &evdev_code_names[i];

		if (n->value == value && !n->alias &&
		    has_prefix(n->name, prefix))
			name = n->name;
	}
	return name;
}

/* ---- the event queue of an open file */

static struct timespec evdev_now(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts;
}

/* __pass_event(): on overflow keep the newest, after a SYN_DROPPED. */
static void evdev_pass_event(struct evdev_client *client,
			     const struct evdev_event *event)
{
	client->buffer[client->head++] = *event;
	client->head &= EVDEV_BUFFER_SIZE - 1;
	if (client->head == client->tail) {
		client->tail = (client->head - 2) & (EVDEV_BUFFER_SIZE - 1);
		client->buffer[client->tail] = (struct evdev_event){
			.time = event->time,
			.type = EV_SYN,
			.code = SYN_DROPPED,
		};
		client->packet_head = client->tail;
	}
	if (event->type == EV_SYN && event->code == SYN_REPORT)
		client->packet_head = client->head;
}

/* Drop what is queued and say so, as a clock change does in evdev.c. */
static void evdev_flush_dropped(struct evdev_client *client)
{
	if (client->packet_head == client->tail)
		return;
	client->packet_head = client->head = client->tail;
	evdev_pass_event(client, &(struct evdev_event){
		.time = evdev_now(client->clk_type),
		.type = EV_SYN,
		.code = SYN_DROPPED,
	});
}

static bool evdev_client_ready(const struct evdev_client *client)
{
	return client->packet_head != client->tail;
}

/* ---- injected events */

/*
 * atkbd_set_repeat_rate(), which atkbd runs on an EV_REP event: the
 * keyboard takes 32 periods and 4 delays, and the device's rates become
 * the nearest it has at or above what was asked (300/40 gives 500/42).
 * The event itself goes to the handlers with the value asked.
 */
static void atkbd_set_repeat_rate(struct evdev *e)
{
	static const short period[32] = {
		33, 37, 42, 46, 50, 54, 58, 63, 67, 75, 83,
		92, 100, 109, 116, 125, 133, 149, 167, 182, 200, 217,
		232, 250, 270, 303, 333, 370, 400, 435, 470, 500,
	};
	static const short delay[4] = { 250, 500, 750, 1000 };
	unsigned int i = 0, j = 0;

	while (i < G_N_ELEMENTS(period) - 1 && period[i] < e->rep[REP_PERIOD])
		i++;
	e->rep[REP_PERIOD] = period[i];
	while (j < G_N_ELEMENTS(delay) - 1 && delay[j] < e->rep[REP_DELAY])
		j++;
	e->rep[REP_DELAY] = delay[j];
}

/*
 * What the input core does with an event to the device's state, before
 * the handlers see it.
 */
static void evdev_update_state(struct evdev *e, const struct evdev_event *ev)
{
	switch (ev->type) {
	case EV_KEY:
		/* Autorepeat bypasses the state. */
		if (ev->value != 2)
			assign_bit(ev->code, e->key, ev->value);
		break;
	case EV_LED:
		assign_bit(ev->code, e->led, ev->value);
		break;
	case EV_SND:
		assign_bit(ev->code, e->snd, ev->value);
		break;
	case EV_SW:
		assign_bit(ev->code, e->sw, ev->value);
		break;
	case EV_ABS:
		e->absinfo[ev->code].value = ev->value;
		break;
	case EV_REP:
		if (ev->value >= 0)
			e->rep[ev->code] = ev->value;
		if (e->atkbd_rates)
			atkbd_set_repeat_rate(e);
		break;
	}
}

/*
 * evdev_get_mask_cnt(): the bits of a type's event mask. Type 0 masks the
 * types, as EVIOCGBIT(0) lists them.
 */
static unsigned int evdev_mask_cnt(unsigned int type)
{
	switch (type) {
	case EV_SYN: return EV_CNT;
	case EV_KEY: return KEY_CNT;
	case EV_REL: return REL_CNT;
	case EV_ABS: return ABS_CNT;
	case EV_MSC: return MSC_CNT;
	case EV_SW: return SW_CNT;
	case EV_LED: return LED_CNT;
	case EV_SND: return SND_CNT;
	case EV_FF: return FF_CNT;
	}
	return 0;
}

/* __evdev_is_filtered(): EV_SYN and codes no mask covers always pass. */
static bool evdev_is_filtered(const struct evdev_client *client,
			      unsigned int type, unsigned int code)
{
	const uint8_t *mask;

	if (type == EV_SYN || type >= EV_CNT)
		return false;
	mask = client->evmasks[0];
	if (mask && !test_bit(type, mask))
		return true;
	if (code >= evdev_mask_cnt(type))
		return false;
	mask = client->evmasks[type];
	return mask && !test_bit(code, mask);
}

/* evdev_pass_values(): a packet whose events were all masked is dropped. */
static void evdev_pass_values(struct evdev_client *client,
			      const struct evdev_event *events,
			      unsigned int n, struct timespec time)
{
	for (unsigned int i = 0; i < n; i++) {
		struct evdev_event ev = events[i];

		if (evdev_is_filtered(client, ev.type, ev.code))
			continue;
		if (ev.type == EV_SYN && ev.code == SYN_REPORT &&
		    client->packet_head == client->head)
			continue;
		ev.time = time;
		evdev_pass_event(client, &ev);
	}
}

/*
 * Pass events to every file that receives them: the grabbing one alone
 * while a grab holds. One timestamp for all, in each file's clock, as
 * evdev_events() takes one per clock for a batch. e->lock held.
 */
static void evdev_deliver(struct evdev *e, const struct evdev_event *events,
			  unsigned int n)
{
	struct timespec now[3] = {
		evdev_now(CLOCK_REALTIME),
		evdev_now(CLOCK_MONOTONIC),
		evdev_now(CLOCK_BOOTTIME),
	};

	for (guint c = 0; c < e->clients->len; c++) {
		struct evdev_client *client = e->clients->pdata[c];

		if ((e->grab && e->grab != client) || client->revoked)
			continue;
		evdev_pass_values(client, events, n,
				  now[client->clk_type == CLOCK_REALTIME ? 0 :
				      client->clk_type == CLOCK_MONOTONIC ? 1 :
									    2]);
	}
	g_cond_broadcast(&e->wait);
}

/* Events from the hardware (cusemuctl inject): state, then every file. */
static void evdev_queue(struct evdev *e, const struct evdev_event *events,
			unsigned int n)
{
	g_mutex_lock(&e->lock);
	for (unsigned int i = 0; i < n; i++)
		evdev_update_state(e, &events[i]);
	evdev_deliver(e, events, n);
	g_mutex_unlock(&e->lock);
	cusemu_device_wake_up(e->dev);
}

/* Whether the device sends events of this type and code. */
static bool evdev_supports(const struct evdev *e, unsigned int type,
			   unsigned int code)
{
	if (type == EV_SYN)
		return code <= SYN_MAX;
	if (type > EV_MAX || !test_bit(type, e->evbit))
		return false;
	switch (type) {
	case EV_KEY:
		return code <= KEY_MAX && test_bit(code, e->keybit);
	case EV_REL:
		return code <= REL_MAX && test_bit(code, e->relbit);
	case EV_ABS:
		return code <= ABS_MAX && test_bit(code, e->absbit);
	case EV_MSC:
		return code <= MSC_MAX && test_bit(code, e->mscbit);
	case EV_LED:
		return code <= LED_MAX && test_bit(code, e->ledbit);
	case EV_SND:
		return code <= SND_MAX && test_bit(code, e->sndbit);
	case EV_SW:
		return code <= SW_MAX && test_bit(code, e->swbit);
	case EV_REP:
		return code <= REP_MAX;
	}
	return false;
}

/*
 * input_get_disposition(), for an event a program writes: whether the
 * input core passes it on. Unsupported events, and events that change
 * nothing (a key already down, an LED already lit, a zero motion), stop
 * there; an autorepeat and a sound pass whatever the state. e->lock held.
 */
static bool evdev_passes(const struct evdev *e, const struct evdev_event *ev)
{
	if (ev->type == EV_SYN)
		return ev->code != SYN_DROPPED && ev->code <= SYN_MAX;
	if (!evdev_supports(e, ev->type, ev->code))
		return false;
	switch (ev->type) {
	case EV_KEY:
		/* A repeat (2) passes whether the key is down or not. */
		if (ev->value == 2)
			return true;
		return !!test_bit(ev->code, e->key) != !!ev->value;
	case EV_LED:
		return !!test_bit(ev->code, e->led) != !!ev->value;
	case EV_SND:
		return true;
	case EV_SW:
		return !!test_bit(ev->code, e->sw) != !!ev->value;
	case EV_ABS:
		return e->absinfo[ev->code].value != ev->value;
	case EV_REL:
		return ev->value != 0;
	case EV_REP:
		return ev->value >= 0 && e->rep[ev->code] != ev->value;
	case EV_MSC:
		return true;
	}
	return false;
}

/*
 * input_inject_event() of events from an open file: nothing while
 * another file holds a grab; what input_get_disposition() passes changes
 * the state and goes to the readers, in place of events. Returns how
 * many passed; e->lock held.
 */
static unsigned int evdev_inject_from(struct evdev *e,
				      const struct evdev_client *client,
				      struct evdev_event *events,
				      unsigned int n)
{
	unsigned int passed = 0;

	if (e->grab && e->grab != client)
		return 0;
	for (unsigned int i = 0; i < n; i++) {
		if (!evdev_passes(e, &events[i]))
			continue;
		evdev_update_state(e, &events[i]);
		events[passed++] = events[i];
	}
	evdev_deliver(e, events, passed);
	return passed;
}

/* A decimal, 0x hex or 0 octal number in [min, max], or false. */
static bool parse_number(const char *s, long long min, long long max,
			 long long *v)
{
	char *end;

	if (!*s)
		return false;
	errno = 0;
	*v = strtoll(s, &end, 0);
	return !errno && !*end && *v >= min && *v <= max;
}

static const char *const type_prefix[2] = { "EV_" };

static int evdev_parse_event(struct evdev *e, char **w,
			     struct evdev_event *ev, GString *out)
{
	long long type, code, value;
	const char *name;
	int t;

	if (!parse_number(w[0], 0, EV_MAX, &type)) {
		type = evdev_lookup(w[0], type_prefix);
		if (type < 0) {
			g_string_append_printf(out, "unknown event type '%s': "
					       "a name such as EV_KEY or a "
					       "number up to %u", w[0], EV_MAX);
			return -EINVAL;
		}
	}
	t = evdev_type_index(type);
	name = evdev_name(type, type_prefix);
	if (t < 0 || (type != EV_SYN && !test_bit(type, e->evbit))) {
		g_string_append_printf(out, "/dev/%s (%s) sends no events of "
				       "type %s", e->dev->name, e->profile,
				       name ? name : w[0]);
		return -EINVAL;
	}
	if (!parse_number(w[1], 0, evdev_types[t].max, &code)) {
		code = evdev_lookup(w[1], evdev_types[t].prefix);
		if (code < 0) {
			g_string_append_printf(out, "unknown %s code '%s'",
					       name, w[1]);
			return -EINVAL;
		}
	}
	if (!evdev_supports(e, type, code)) {
		g_string_append_printf(out, "/dev/%s (%s) sends no %s %s",
				       e->dev->name, e->profile, name, w[1]);
		return -EINVAL;
	}
	if (!parse_number(w[2], INT32_MIN, INT32_MAX, &value)) {
		g_string_append_printf(out, "bad value '%s' for %s %s: an "
				       "integer", w[2], name, w[1]);
		return -EINVAL;
	}
	*ev = (struct evdev_event){
		.type = type, .code = code, .value = value,
	};
	return 0;
}

/* inject TYPE CODE VALUE...: all checked before any is queued. */
static int evdev_inject(struct evdev *e, char **argv, GString *out)
{
	unsigned int n = g_strv_length(argv);
	g_autofree struct evdev_event *events = NULL;
	unsigned int count;
	int err;

	if (!n || n % 3) {
		g_string_append(out, "inject takes events as TYPE CODE VALUE "
				     "triples, e.g. inject EV_KEY KEY_A 1");
		return -EINVAL;
	}
	count = n / 3;
	/* One more for the SYN_REPORT that ends the packet. */
	events = g_new0(struct evdev_event, count + 1);
	for (unsigned int i = 0; i < count; i++) {
		err = evdev_parse_event(e, argv + 3 * i, &events[i], out);
		if (err)
			return err;
	}
	n = count;
	if (events[n - 1].type != EV_SYN || events[n - 1].code != SYN_REPORT)
		events[n++] = (struct evdev_event){ .type = EV_SYN,
						    .code = SYN_REPORT };
	evdev_queue(e, events, n);
	g_string_append_printf(out, "injected %u events\n", count);
	return 0;
}

static void print_bits(GString *out, const char *what, const uint8_t *bits,
		       unsigned int max, unsigned int type)
{
	const char *const *prefix = evdev_types[evdev_type_index(type)].prefix;

	g_string_append_printf(out, "%s:", what);
	for (unsigned int i = 0; i <= max; i++) {
		const char *name;

		if (!test_bit(i, bits))
			continue;
		name = evdev_name(i, prefix);
		if (name)
			g_string_append_printf(out, " %s", name);
		else
			g_string_append_printf(out, " %u", i);
	}
	g_string_append_c(out, '\n');
}

/* What is held, lit and where the axes are. */
static int evdev_state(struct evdev *e, GString *out)
{
	g_mutex_lock(&e->lock);
	print_bits(out, "keys", e->key, KEY_MAX, EV_KEY);
	if (test_bit(EV_LED, e->evbit))
		print_bits(out, "leds", e->led, LED_MAX, EV_LED);
	if (test_bit(EV_SW, e->evbit))
		print_bits(out, "switches", e->sw, SW_MAX, EV_SW);
	for (unsigned int i = 0; i <= ABS_MAX; i++)
		if (test_bit(i, e->absbit))
			g_string_append_printf(out, "%s: %d\n",
					       evdev_name(i, evdev_types[3].prefix),
					       e->absinfo[i].value);
	g_mutex_unlock(&e->lock);
	return 0;
}

static int evdev_control(struct cusemu_device *dev, char **argv,
			 GString *out)
{
	struct evdev *e = dev->priv;

	if (argv[0] && !strcmp(argv[0], "inject"))
		return evdev_inject(e, argv + 1, out);
	if (argv[0] && !strcmp(argv[0], "state") && !argv[1])
		return evdev_state(e, out);
	g_string_append(out, "requests: inject TYPE CODE VALUE... (e.g. "
			     "inject EV_KEY KEY_A 1), state");
	return -EINVAL;
}

/* ---- ioctl */

/*
 * bits_to_user() on a little-endian kernel: the bitmap of bits 0..maxbit
 * in the caller's longs, clipped to its buffer. Returns the length copied.
 */
static long bits_to_user(const uint8_t *bits, unsigned int maxbit,
			 unsigned int maxlen, cusemu_uptr_t p, bool compat)
{
	unsigned int word = compat ? 32 : 64;
	unsigned int len = (maxbit + word - 1) / word * (word / 8);

	if (len > maxlen)
		len = maxlen;
	return cusemu_copy_to_user(p, bits, len) ? -EFAULT : (long)len;
}

static long str_to_user(const char *str, unsigned int maxlen,
			cusemu_uptr_t p)
{
	unsigned int len;

	if (!str)
		return -ENOENT;
	len = strlen(str) + 1;
	if (len > maxlen)
		len = maxlen;
	return cusemu_copy_to_user(p, str, len) ? -EFAULT : (long)len;
}

/* handle_eviocgbit(): EV_REP, EV_PWR and the like have no bitmap. */
static long evdev_gbit(struct evdev *e, unsigned int type, unsigned int size,
		       cusemu_uptr_t p, bool compat)
{
	switch (type) {
	case 0:
		return bits_to_user(e->evbit, EV_MAX, size, p, compat);
	case EV_KEY:
		return bits_to_user(e->keybit, KEY_MAX, size, p, compat);
	case EV_REL:
		return bits_to_user(e->relbit, REL_MAX, size, p, compat);
	case EV_ABS:
		return bits_to_user(e->absbit, ABS_MAX, size, p, compat);
	case EV_MSC:
		return bits_to_user(e->mscbit, MSC_MAX, size, p, compat);
	case EV_LED:
		return bits_to_user(e->ledbit, LED_MAX, size, p, compat);
	case EV_SND:
		return bits_to_user(e->sndbit, SND_MAX, size, p, compat);
	case EV_FF:
		return bits_to_user(e->ffbit, FF_MAX, size, p, compat);
	case EV_SW:
		return bits_to_user(e->swbit, SW_MAX, size, p, compat);
	}
	return -EINVAL;
}

/* A state bitmap, copied under the lock first. */
static long evdev_get_state(struct evdev *e, const uint8_t *state,
			    size_t bytes, unsigned int maxbit,
			    unsigned int size, cusemu_uptr_t p, bool compat)
{
	uint8_t copy[BITMAP_BYTES(KEY_MAX)];

	g_mutex_lock(&e->lock);
	memcpy(copy, state, bytes);
	g_mutex_unlock(&e->lock);
	return bits_to_user(copy, maxbit, size, p, compat);
}

static long evdev_grab(struct evdev *e, struct evdev_client *client,
		       bool grab)
{
	long ret = 0;

	g_mutex_lock(&e->lock);
	if (grab) {
		if (e->grab)
			ret = -EBUSY;
		else
			e->grab = client;
	} else if (e->grab != client) {
		ret = -EINVAL;
	} else {
		e->grab = NULL;
	}
	g_mutex_unlock(&e->lock);
	return ret;
}

/* EVIOCREVOKE: the file gets nothing more, and reads say -ENODEV. */
static long evdev_revoke(struct evdev *e, struct evdev_client *client)
{
	g_mutex_lock(&e->lock);
	client->revoked = true;
	if (e->grab == client)
		e->grab = NULL;
	client->head = client->tail = client->packet_head = 0;
	g_cond_broadcast(&e->wait);
	g_mutex_unlock(&e->lock);
	cusemu_device_wake_up(e->dev);
	return 0;
}

static long evdev_set_clock(struct evdev *e, struct evdev_client *client,
			    int clk)
{
	if (clk != CLOCK_REALTIME && clk != CLOCK_MONOTONIC &&
	    clk != CLOCK_BOOTTIME)
		return -EINVAL;
	g_mutex_lock(&e->lock);
	/* Queued events carry the old clock's times: they go. */
	if (client->clk_type != clk) {
		client->clk_type = clk;
		evdev_flush_dropped(client);
	}
	g_mutex_unlock(&e->lock);
	return 0;
}

/*
 * bits_from_user() on a little-endian kernel: the caller's longs into a
 * zeroed bitmap of bits 0..maxbit. Returns the length copied.
 */
static long bits_from_user(uint8_t *bits, unsigned int maxbit,
			   unsigned int maxlen, cusemu_uptr_t p, bool compat)
{
	unsigned int word = compat ? 32 : 64;
	unsigned int len = (maxbit + word - 1) / word * (word / 8);

	if (maxlen % (word / 8))
		return -EINVAL;
	if (len > maxlen)
		len = maxlen;
	return cusemu_copy_from_user(bits, p, len) ? -EFAULT : (long)len;
}

/* The kernel's clear_user(), for a range already named. */
static long clear_user(cusemu_uptr_t p, unsigned long n)
{
	static const uint8_t zeros[4096];

	for (unsigned long done = 0; done < n; done += sizeof(zeros))
		if (cusemu_copy_to_user(p + done, zeros,
					MIN(n - done, sizeof(zeros))))
			return -EFAULT;
	return 0;
}

/*
 * EVIOCGMASK: the file's mask of a type, all ones while it has none. Any
 * type and any size are accepted, for forward compatibility; what lies
 * beyond the mask is zeroed.
 */
static long evdev_get_mask(struct evdev *e, struct evdev_client *client,
			   const struct input_mask *m, bool compat)
{
	uint8_t copy[BITMAP_BYTES(KEY_MAX)];
	unsigned int cnt = evdev_mask_cnt(m->type);
	unsigned int xfer = MIN(m->codes_size, BITMAP_BYTES(cnt - 1));
	bool masked = false;
	long ret;

	if (!cnt)	/* a type no mask has, even beyond EV_MAX: zeroes */
		return clear_user(m->codes_ptr, m->codes_size);
	memset(copy, 0xff, xfer);
	g_mutex_lock(&e->lock);
	if (client->evmasks[m->type]) {
		memcpy(copy, client->evmasks[m->type], xfer);
		masked = true;
	}
	g_mutex_unlock(&e->lock);
	if (masked)	/* in the caller's longs, as EVIOCGBIT */
		ret = bits_to_user(copy, cnt - 1, xfer, m->codes_ptr, compat);
	else
		ret = cusemu_copy_to_user(m->codes_ptr, copy, xfer) ? -EFAULT
								    : (long)xfer;
	if (ret < 0)
		return ret;
	return clear_user(m->codes_ptr + ret, m->codes_size - ret);
}

/* EVIOCSMASK: a new mask for one type, in place of the old one. */
static long evdev_set_mask(struct evdev *e, struct evdev_client *client,
			   const struct input_mask *m, bool compat)
{
	unsigned int cnt = evdev_mask_cnt(m->type);
	uint8_t *mask, *old;
	long ret;

	if (!cnt)
		return -EINVAL;
	mask = g_malloc0(BITMAP_BYTES(cnt - 1));
	ret = bits_from_user(mask, cnt - 1, m->codes_size, m->codes_ptr,
			     compat);
	if (ret < 0) {
		g_free(mask);
		return ret;
	}
	g_mutex_lock(&e->lock);
	old = client->evmasks[m->type];
	client->evmasks[m->type] = mask;
	g_mutex_unlock(&e->lock);
	g_free(old);
	return 0;
}

/*
 * input_default_getkeycode() and _setkeycode(): the entry's index, by
 * index or by a scancode of 1, 2 or 4 bytes, in the keymap.
 */
static int keymap_index(const struct evdev *e,
			const struct input_keymap_entry *ke, unsigned int *index)
{
	if (!e->keymap_size)
		return -EINVAL;		/* no keymap: dev->keycodesize 0 */
	if (ke->flags & INPUT_KEYMAP_BY_INDEX) {
		*index = ke->index;
	} else {
		switch (ke->len) {
		case 1: *index = ke->scancode[0]; break;
		case 2: *index = ke->scancode[0] | ke->scancode[1] << 8; break;
		case 4: memcpy(index, ke->scancode, 4); break;
		default: return -EINVAL;
		}
	}
	return *index < e->keymap_size ? 0 : -EINVAL;
}

static int evdev_get_keycode(struct evdev *e, struct input_keymap_entry *ke)
{
	unsigned int index;
	int err = keymap_index(e, ke, &index);

	if (err)
		return err;
	g_mutex_lock(&e->lock);
	ke->keycode = e->keymap[index];
	g_mutex_unlock(&e->lock);
	ke->index = (uint16_t)index;
	ke->len = sizeof(index);
	memcpy(ke->scancode, &index, sizeof(index));
	return 0;
}

/*
 * input_set_keycode(): the key the scancode gives now is among the keys
 * the device has; the old one stays only while another scancode gives it,
 * and a key that goes while it is down is released, as the input core
 * simulates.
 */
static int evdev_set_keycode(struct evdev *e, const struct input_keymap_entry *ke)
{
	unsigned int index, old;
	bool still = false, release = false;
	int err = keymap_index(e, ke, &index);

	if (err)
		return err;
	if (ke->keycode > KEY_MAX)
		return -EINVAL;
	g_mutex_lock(&e->lock);
	old = e->keymap[index];
	e->keymap[index] = (uint16_t)ke->keycode;
	assign_bit(old, e->keybit, 0);
	set_bit(ke->keycode, e->keybit);
	for (unsigned int i = 0; i < e->keymap_size && !still; i++)
		still = e->keymap[i] == old;
	if (still)
		set_bit(old, e->keybit);
	assign_bit(KEY_RESERVED, e->keybit, 0);
	if (!still && test_bit(old, e->key)) {
		struct evdev_event up[2] = {
			{ .type = EV_KEY, .code = (uint16_t)old, .value = 0 },
			{ .type = EV_SYN, .code = SYN_REPORT },
		};

		assign_bit(old, e->key, 0);
		evdev_deliver(e, up, 2);
		release = true;
	}
	g_mutex_unlock(&e->lock);
	if (release)
		cusemu_device_wake_up(e->dev);
	return 0;
}

/* EVIOCGKEYCODE and EVIOCSKEYCODE: a 4-byte scancode, then the keycode. */
static long evdev_keycode_legacy(struct evdev *e, unsigned int cmd,
				 cusemu_uptr_t p)
{
	struct input_keymap_entry ke = { .len = sizeof(unsigned int) };
	unsigned int pair[2];
	int err;

	if (cusemu_copy_from_user(pair, p, cmd == EVIOCGKEYCODE ? 4 : 8))
		return -EFAULT;
	memcpy(ke.scancode, &pair[0], sizeof(pair[0]));
	if (cmd == EVIOCSKEYCODE) {
		ke.keycode = pair[1];
		return evdev_set_keycode(e, &ke);
	}
	err = evdev_get_keycode(e, &ke);
	if (err)
		return err;
	return cusemu_put_user(ke.keycode, p + 4);
}

/* The _V2 forms: struct input_keymap_entry, by index or by scancode. */
static long evdev_keycode_v2(struct evdev *e, unsigned int cmd,
			     cusemu_uptr_t p)
{
	struct input_keymap_entry ke;
	int err;

	if (cusemu_copy_from_user(&ke, p, sizeof(ke)))
		return -EFAULT;
	if (ke.len > sizeof(ke.scancode))
		return -EINVAL;
	if (cmd == EVIOCSKEYCODE_V2)
		return evdev_set_keycode(e, &ke);
	err = evdev_get_keycode(e, &ke);
	if (err)
		return err;
	return cusemu_copy_to_user(p, &ke, sizeof(ke)) ? -EFAULT : 0;
}

/*
 * EVIOCSREP: input_inject_event() of EV_REP REP_DELAY, then REP_PERIOD.
 * A value that changes (negative ones do not) goes to the readers, with
 * the next SYN_REPORT as every event does, and to the device, which may
 * round it (atkbd).
 */
static long evdev_set_rep(struct evdev *e, const struct evdev_client *client,
			  const int rep[2])
{
	struct evdev_event ev[2] = {
		{ .type = EV_REP, .code = REP_DELAY, .value = rep[0] },
		{ .type = EV_REP, .code = REP_PERIOD, .value = rep[1] },
	};
	unsigned int n;

	g_mutex_lock(&e->lock);
	n = evdev_inject_from(e, client, ev, 2);
	g_mutex_unlock(&e->lock);
	if (n)
		cusemu_device_wake_up(e->dev);
	return 0;
}

/* struct ff_effect as i386 lays it out (input-compat.h's ff_effect_compat):
 * its union holds a pointer. */
#define EVDEV_FF_EFFECT32_SIZE 44

/*
 * Masks out the size bits, to match the commands that encode a length:
 * evdev.c's EVIOC_MASK_SIZE().
 */
#define EVIOC_MASK_SIZE(nr) ((nr) & ~(_IOC_SIZEMASK << _IOC_SIZESHIFT))

/* evdev_do_ioctl(): every payload has one layout on both ABIs. */
static long evdev_do_ioctl(struct cusemu_device *dev,
			   struct cusemu_file *file, unsigned int cmd,
			   cusemu_uptr_t p, bool compat)
{
	struct evdev *e = dev->priv;
	struct evdev_client *client = file->private_data;
	unsigned int size, nr;
	struct input_absinfo abs;
	struct input_mask mask;
	int rep[2];
	int v;

	if (client->revoked)
		return -ENODEV;

	switch (cmd) {
	case EVIOCGVERSION:
		return cusemu_put_user((int)EV_VERSION, p);
	case EVIOCGID:
		return cusemu_copy_to_user(p, &e->id, sizeof(e->id)) ? -EFAULT
								      : 0;
	case EVIOCGREP:
		if (!test_bit(EV_REP, e->evbit))
			return -ENOSYS;
		g_mutex_lock(&e->lock);
		rep[0] = e->rep[REP_DELAY];
		rep[1] = e->rep[REP_PERIOD];
		g_mutex_unlock(&e->lock);
		return cusemu_copy_to_user(p, rep, sizeof(rep)) ? -EFAULT : 0;
	case EVIOCSREP:
		if (!test_bit(EV_REP, e->evbit))
			return -ENOSYS;
		if (cusemu_copy_from_user(rep, p, sizeof(rep)))
			return -EFAULT;
		return evdev_set_rep(e, client, rep);
	case EVIOCGKEYCODE:
	case EVIOCSKEYCODE:
		return evdev_keycode_legacy(e, cmd, p);
	case EVIOCGKEYCODE_V2:
	case EVIOCSKEYCODE_V2:
		return evdev_keycode_v2(e, cmd, p);
	case EVIOCRMFF:
		return -ENOSYS;		/* input_ff_erase() without EV_FF */
	case EVIOCGEFFECTS:
		return cusemu_put_user((int)0, p);
	case EVIOCGRAB:
		return evdev_grab(e, client, p != 0);
	case EVIOCREVOKE:
		if (p)
			return -EINVAL;
		return evdev_revoke(e, client);
	case EVIOCSCLOCKID:
		if (cusemu_get_user(v, p))
			return -EFAULT;
		return evdev_set_clock(e, client, v);
	case EVIOCGMASK:
	case EVIOCSMASK:
		if (cusemu_copy_from_user(&mask, p, sizeof(mask)))
			return -EFAULT;
		return cmd == EVIOCGMASK
			       ? evdev_get_mask(e, client, &mask, compat)
			       : evdev_set_mask(e, client, &mask, compat);
	}

	size = _IOC_SIZE(cmd);
	switch (EVIOC_MASK_SIZE(cmd)) {
	case EVIOCGPROP(0):
		return bits_to_user(e->propbit, INPUT_PROP_MAX, size, p,
				    compat);
	case EVIOCGKEY(0):
		return evdev_get_state(e, e->key, sizeof(e->key), KEY_MAX,
				       size, p, compat);
	case EVIOCGLED(0):
		return evdev_get_state(e, e->led, sizeof(e->led), LED_MAX,
				       size, p, compat);
	case EVIOCGSND(0):
		return evdev_get_state(e, e->snd, sizeof(e->snd), SND_MAX,
				       size, p, compat);
	case EVIOCGSW(0):
		return evdev_get_state(e, e->sw, sizeof(e->sw), SW_MAX, size,
				       p, compat);
	case EVIOCGNAME(0):
		return str_to_user(e->name, size, p);
	case EVIOCGPHYS(0):
		return str_to_user(e->phys, size, p);
	case EVIOCGUNIQ(0):
		return str_to_user(e->uniq, size, p);
	case EVIOC_MASK_SIZE(EVIOCSFF): {
		/*
		 * input_ff_effect_from_user() (the caller's layout, else
		 * EFAULT), then input_ff_upload() of a device without EV_FF:
		 * ENOSYS, which FUSE hands the caller as ENOTTY.
		 */
		struct ff_effect effect;

		if (size != (compat ? EVDEV_FF_EFFECT32_SIZE : sizeof(effect)) ||
		    cusemu_copy_from_user(&effect, p, size))
			return -EFAULT;
		return -ENOSYS;
	}
	}

	if (_IOC_TYPE(cmd) != 'E')
		return -EINVAL;
	nr = _IOC_NR(cmd);
	if (_IOC_DIR(cmd) == _IOC_READ) {
		if ((nr & ~EV_MAX) == _IOC_NR(EVIOCGBIT(0, 0)))
			return evdev_gbit(e, nr & EV_MAX, size, p, compat);
		if ((nr & ~ABS_MAX) == _IOC_NR(EVIOCGABS(0))) {
			if (!test_bit(EV_ABS, e->evbit))
				return -EINVAL;
			g_mutex_lock(&e->lock);
			abs = e->absinfo[nr & ABS_MAX];
			g_mutex_unlock(&e->lock);
			return cusemu_copy_to_user(p, &abs,
						   MIN(size, sizeof(abs)))
				       ? -EFAULT
				       : 0;
		}
	}
	if (_IOC_DIR(cmd) == _IOC_WRITE &&
	    (nr & ~ABS_MAX) == _IOC_NR(EVIOCSABS(0))) {
		if (!test_bit(EV_ABS, e->evbit))
			return -EINVAL;
		memset(&abs, 0, sizeof(abs));
		if (cusemu_copy_from_user(&abs, p, MIN(size, sizeof(abs))))
			return -EFAULT;
		/* The number of multitouch slots is the driver's. */
		if ((nr & ABS_MAX) == ABS_MT_SLOT)
			return -EINVAL;
		g_mutex_lock(&e->lock);
		e->absinfo[nr & ABS_MAX] = abs;
		g_mutex_unlock(&e->lock);
		return 0;
	}
	return -EINVAL;
}

/*
 * An ioctl tells the file's ABI for sure, whatever the opener was: a file
 * passed from a 64-bit process to a 32-bit one reads as the latter.
 */
static void evdev_note_abi(struct evdev *e, struct evdev_client *client,
			   bool compat)
{
	g_mutex_lock(&e->lock);
	client->compat = compat;
	g_mutex_unlock(&e->lock);
}

/*
 * The fetch step of both methods. Most commands are _IOC-encoded, their
 * length in the size bits; EVIOCGRAB, EVIOCREVOKE and EVIOCRMFF take a
 * value; the masks point to their codes. A revoked file and a command
 * outside evdev's 'E' space need nothing: the method refuses them.
 */
static int evdev_fetch(struct cusemu_device *dev, struct cusemu_file *file,
		       unsigned int cmd, unsigned long arg)
{
	struct evdev_client *client = file->private_data;
	bool compat = cusemu_in_compat_syscall();
	cusemu_uptr_t p = compat ? cusemu_compat_ptr((uint32_t)arg) : arg;
	unsigned int word = compat ? 4 : 8;
	struct input_mask m;
	unsigned int cnt;

	if (client->revoked || _IOC_TYPE(cmd) != 'E')
		return 0;
	switch (cmd) {
	case EVIOCGRAB:
	case EVIOCREVOKE:
	case EVIOCRMFF:
		return 0;
	case EVIOCGKEYCODE:
	case EVIOCGKEYCODE_V2:
		/* _IOR, but the scancode (or index) is read first. */
		return cusemu_fetch_range(p, _IOC_SIZE(cmd), _IOC_SIZE(cmd));
	case EVIOCGMASK:
	case EVIOCSMASK:
		if (cusemu_copy_from_user(&m, p, sizeof(m)))
			return -EFAULT;
		if (cmd == EVIOCGMASK) {
			/* The whole buffer in one round trip. */
			return cusemu_fetch_range(m.codes_ptr, 0, m.codes_size);
		}
		/* What bits_from_user() will read of the caller's longs. */
		cnt = evdev_mask_cnt(m.type);
		if (!cnt || m.codes_size % word)
			return -EINVAL;
		return cusemu_fetch_range(m.codes_ptr,
					  MIN(m.codes_size,
					      (cnt - 1 + word * 8 - 1) /
						      (word * 8) * word),
					  0);
	}
	return cusemu_fetch_ioc(dev, file, cmd, p);
}

static long evdev_ioctl(struct cusemu_device *dev, struct cusemu_file *file,
			unsigned int cmd, unsigned long arg)
{
	evdev_note_abi(dev->priv, file->private_data, false);
	return evdev_do_ioctl(dev, file, cmd, arg, false);
}

static long evdev_compat_ioctl(struct cusemu_device *dev,
			       struct cusemu_file *file, unsigned int cmd,
			       unsigned long arg)
{
	evdev_note_abi(dev->priv, file->private_data, true);
	return evdev_do_ioctl(dev, file, cmd,
			      cusemu_compat_ptr((uint32_t)arg), true);
}

/* ---- read and poll */

static size_t evdev_event_size(const struct evdev_client *client)
{
	return client->compat ? sizeof(struct evdev_event32)
			      : sizeof(struct evdev_event64);
}

static void evdev_event_to_buf(const struct evdev_client *client,
			       const struct evdev_event *ev, char *buf)
{
	if (client->compat) {
		struct evdev_event32 out = {
			.sec = (uint32_t)ev->time.tv_sec,
			.usec = ev->time.tv_nsec / 1000,
			.type = ev->type, .code = ev->code, .value = ev->value,
		};

		memcpy(buf, &out, sizeof(out));
	} else {
		struct evdev_event64 out = {
			.sec = ev->time.tv_sec,
			.usec = ev->time.tv_nsec / 1000,
			.type = ev->type, .code = ev->code, .value = ev->value,
		};

		memcpy(buf, &out, sizeof(out));
	}
}

/*
 * evdev_read(): whole events in the caller's layout, as many as fit, only
 * from complete packets. A read of 0 bytes only checks for errors.
 */
/*
 * evdev_write(): each whole event in the file's ABI (24 bytes, or i386's
 * 16) goes through input_inject_event(): the device's state, then every
 * reader, the writer too. LED and sound events are how a program lights
 * a keyboard's LEDs. Bytes after the last whole event are left.
 */
static ssize_t evdev_write(struct cusemu_device *dev, struct cusemu_file *file,
			   const char *buf, size_t count)
{
	struct evdev *e = dev->priv;
	struct evdev_client *client = file->private_data;
	g_autofree struct evdev_event *events = NULL;
	size_t size, done = 0;
	unsigned int n = 0;

	g_mutex_lock(&e->lock);
	size = evdev_event_size(client);
	if (count != 0 && count < size) {
		g_mutex_unlock(&e->lock);
		return -EINVAL;
	}
	if (client->revoked || e->stopping) {
		g_mutex_unlock(&e->lock);
		return -ENODEV;
	}
	events = g_new(struct evdev_event, count / size + 1);
	for (; done + size <= count; done += size) {
		/* type, code and value follow the time in both layouts. */
		const char *at = buf + done + size - 8;
		struct evdev_event *ev = &events[n++];
		int32_t value;

		*ev = (struct evdev_event){ 0 };
		memcpy(&ev->type, at, sizeof(ev->type));
		memcpy(&ev->code, at + 2, sizeof(ev->code));
		memcpy(&value, at + 4, sizeof(value));
		ev->value = value;
	}
	n = evdev_inject_from(e, client, events, n);
	g_mutex_unlock(&e->lock);
	if (n)
		cusemu_device_wake_up(dev);
	return (ssize_t)done;
}

static ssize_t evdev_read(struct cusemu_device *dev, struct cusemu_file *file,
			  char *buf, size_t count)
{
	struct evdev *e = dev->priv;
	struct evdev_client *client = file->private_data;
	size_t size, read = 0;
	ssize_t ret = 0;

	g_mutex_lock(&e->lock);
	size = evdev_event_size(client);
	if (count != 0 && count < size) {
		g_mutex_unlock(&e->lock);
		return -EINVAL;
	}
	e->readers++;
	for (;;) {
		if (client->revoked || e->stopping) {
			ret = -ENODEV;
			break;
		}
		if (!evdev_client_ready(client) && (file->flags & O_NONBLOCK)) {
			ret = -EAGAIN;
			break;
		}
		if (count == 0)
			break;
		while (read + size <= count && evdev_client_ready(client)) {
			evdev_event_to_buf(client,
					   &client->buffer[client->tail++],
					   buf + read);
			client->tail &= EVDEV_BUFFER_SIZE - 1;
			read += size;
		}
		if (read)
			break;
		if (cusemu_signal_pending()) {
			ret = -EINTR;
			break;
		}
		cusemu_cond_wait_until(&e->wait, &e->lock,
				       g_get_monotonic_time() +
					       EVDEV_READ_RECHECK_US);
	}
	if (!--e->readers && e->stopping)
		g_cond_broadcast(&e->wait);
	g_mutex_unlock(&e->lock);
	return ret ? ret : (ssize_t)read;
}

static unsigned int evdev_poll(struct cusemu_device *dev,
			       struct cusemu_file *file)
{
	struct evdev *e = dev->priv;
	struct evdev_client *client = file->private_data;
	unsigned int mask;

	g_mutex_lock(&e->lock);
	if (client->revoked)
		mask = POLLHUP | POLLERR;
	else
		mask = evdev_client_ready(client) ? POLLIN | POLLRDNORM : 0;
	g_mutex_unlock(&e->lock);
	return mask;
}

/* ---- open files */

static int evdev_open(struct cusemu_device *dev, struct cusemu_file *file)
{
	struct evdev *e = dev->priv;
	struct evdev_client *client = g_new0(struct evdev_client, 1);

	client->clk_type = CLOCK_REALTIME;
	/* A first guess; its ioctls will tell for sure. */
	client->compat = cusemu_process_is_32bit(file->opener);
	file->private_data = client;
	g_mutex_lock(&e->lock);
	g_ptr_array_add(e->clients, client);
	g_mutex_unlock(&e->lock);
	return 0;
}

static void evdev_release(struct cusemu_device *dev, struct cusemu_file *file)
{
	struct evdev *e = dev->priv;
	struct evdev_client *client = file->private_data;

	g_mutex_lock(&e->lock);
	if (e->grab == client)
		e->grab = NULL;
	g_ptr_array_remove(e->clients, client);
	g_mutex_unlock(&e->lock);
	for (unsigned int i = 0; i < EV_CNT; i++)
		g_free(client->evmasks[i]);
	g_free(client);
	file->private_data = NULL;
}

/* ---- instance */

static void evdev_set_abs(struct evdev *e, unsigned int axis, int min,
			  int max)
{
	set_bit(axis, e->absbit);
	e->absinfo[axis].minimum = min;
	e->absinfo[axis].maximum = max;
}

/* The built-in profiles: what a simple device of each kind reports. */
static int evdev_set_profile(struct evdev *e, const char *profile)
{
	set_bit(EV_SYN, e->evbit);
	if (!strcmp(profile, "keyboard")) {
		set_bit(EV_KEY, e->evbit);
		set_bit(EV_MSC, e->evbit);
		set_bit(EV_LED, e->evbit);
		set_bit(EV_REP, e->evbit);
		/* atkbd_set_device_attrs(): the keys its keymap gives. */
		e->keymap_size = EVDEV_KEYMAP_SIZE;
		for (unsigned int i = 0; i < G_N_ELEMENTS(atkbd_xt_keys); i++) {
			unsigned int key = atkbd_xt_keys[i][1];

			e->keymap[atkbd_xt_keys[i][0]] = (uint16_t)key;
			if (key != ATKBD_KEY_NULL)
				set_bit(key, e->keybit);
		}
		e->atkbd_rates = true;
		set_bit(MSC_SCAN, e->mscbit);
		set_bit(LED_NUML, e->ledbit);
		set_bit(LED_CAPSL, e->ledbit);
		set_bit(LED_SCROLLL, e->ledbit);
		e->rep[REP_DELAY] = EVDEV_REP_DELAY;
		e->rep[REP_PERIOD] = EVDEV_REP_PERIOD;
	} else if (!strcmp(profile, "mouse")) {
		set_bit(EV_KEY, e->evbit);
		set_bit(EV_REL, e->evbit);
		set_bit(BTN_LEFT, e->keybit);
		set_bit(BTN_RIGHT, e->keybit);
		set_bit(BTN_MIDDLE, e->keybit);
		set_bit(REL_X, e->relbit);
		set_bit(REL_Y, e->relbit);
		set_bit(REL_WHEEL, e->relbit);
	} else if (!strcmp(profile, "touchscreen")) {
		set_bit(EV_KEY, e->evbit);
		set_bit(EV_ABS, e->evbit);
		set_bit(BTN_TOUCH, e->keybit);
		evdev_set_abs(e, ABS_X, 0, 4095);
		evdev_set_abs(e, ABS_Y, 0, 4095);
		evdev_set_abs(e, ABS_PRESSURE, 0, 255);
		set_bit(INPUT_PROP_DIRECT, e->propbit);
	} else {
		return -EINVAL;
	}
	return 0;
}

static int evdev_probe(struct cusemu_device *dev, char **why)
{
	const char *profile = cusemu_device_param_str(dev, "profile");
	const char *name = cusemu_device_param_str(dev, "device_name");
	const char *uniq = cusemu_device_param_str(dev, "uniq");
	struct evdev *e = g_new0(struct evdev, 1);

	if (evdev_set_profile(e, profile)) {
		*why = g_strdup_printf("profile is keyboard, mouse or "
				       "touchscreen, not '%s'", profile);
		g_free(e);
		return -EINVAL;
	}
	e->dev = dev;
	e->profile = profile;
	e->name = *name ? g_strdup(name) : g_strdup_printf("cusemu %s", profile);
	e->phys = g_strdup(cusemu_device_param_str(dev, "phys"));
	e->uniq = *uniq ? g_strdup(uniq) : NULL;
	e->id = (struct input_id){
		.bustype = cusemu_device_param_u64(dev, "bustype"),
		.vendor = cusemu_device_param_u64(dev, "vendor"),
		.product = cusemu_device_param_u64(dev, "product"),
		.version = cusemu_device_param_u64(dev, "version"),
	};
	g_mutex_init(&e->lock);
	g_cond_init(&e->wait);
	e->clients = g_ptr_array_new();
	dev->priv = e;
	return 0;
}

static void evdev_remove(struct cusemu_device *dev)
{
	struct evdev *e = dev->priv;

	g_mutex_lock(&e->lock);
	e->stopping = true;
	/* A read a session could not end must leave before e goes. */
	g_cond_broadcast(&e->wait);
	while (e->readers)
		g_cond_wait(&e->wait, &e->lock);
	g_mutex_unlock(&e->lock);
	g_ptr_array_free(e->clients, TRUE);
	g_cond_clear(&e->wait);
	g_mutex_clear(&e->lock);
	g_free(e->name);
	g_free(e->phys);
	g_free(e->uniq);
	g_free(e);
}

static const struct cusemu_param evdev_params[] = {
	{ .key = "profile", .type = CUSEMU_PARAM_STRING,
	  .default_value = "keyboard",
	  .help = "what it reports: keyboard, mouse or touchscreen" },
	{ .key = "device_name", .type = CUSEMU_PARAM_STRING,
	  .default_value = "",
	  .help = "EVIOCGNAME; empty for \"cusemu PROFILE\"" },
	{ .key = "phys", .type = CUSEMU_PARAM_STRING,
	  .default_value = "cusemu/input0", .help = "EVIOCGPHYS" },
	{ .key = "uniq", .type = CUSEMU_PARAM_STRING, .default_value = "",
	  .help = "EVIOCGUNIQ; empty for none (ENOENT)" },
	{ .key = "bustype", .type = CUSEMU_PARAM_UINT, .default_value = "0x06",
	  .help = "EVIOCGID bus type (BUS_VIRTUAL)", .min = 0,
	  .max = 0xffff },
	{ .key = "vendor", .type = CUSEMU_PARAM_UINT, .default_value = "0x1d6b",
	  .help = "EVIOCGID vendor", .min = 0, .max = 0xffff },
	{ .key = "product", .type = CUSEMU_PARAM_UINT, .default_value = "0x0001",
	  .help = "EVIOCGID product", .min = 0, .max = 0xffff },
	{ .key = "version", .type = CUSEMU_PARAM_UINT, .default_value = "0x0001",
	  .help = "EVIOCGID version", .min = 0, .max = 0xffff },
	CUSEMU_PARAM_END
};

/*
 * The commands encode lengths and codes in their numbers, so evdev's own
 * switch serves them rather than tables of exact numbers.
 */
/*
 * The input class's files of the device (drivers/input/input.c), in
 * device/: the input device's own directory, which the kernel keeps
 * beside the event node's (inputN), as a directory of the node's here.
 */
static ssize_t evdev_show_text(char *buf, size_t size, const char *text)
{
	return snprintf(buf, size, "%s\n", text ? text : "");
}

static ssize_t evdev_show_name(struct cusemu_device *dev, char *buf,
			       size_t size)
{
	return evdev_show_text(buf, size, ((struct evdev *)dev->priv)->name);
}

static ssize_t evdev_show_phys(struct cusemu_device *dev, char *buf,
			       size_t size)
{
	return evdev_show_text(buf, size, ((struct evdev *)dev->priv)->phys);
}

static ssize_t evdev_show_uniq(struct cusemu_device *dev, char *buf,
			       size_t size)
{
	return evdev_show_text(buf, size, ((struct evdev *)dev->priv)->uniq);
}

#define EVDEV_ID_ATTR(field)                                               \
	static ssize_t evdev_show_##field(struct cusemu_device *dev,       \
					  char *buf, size_t size)          \
	{                                                                  \
		return snprintf(buf, size, "%04x\n",                       \
				((struct evdev *)dev->priv)->id.field);    \
	}
EVDEV_ID_ATTR(bustype)
EVDEV_ID_ATTR(vendor)
EVDEV_ID_ATTR(product)
EVDEV_ID_ATTR(version)

/*
 * A bitmap as input_print_bitmap() prints it: its longs, the highest
 * first, in hex without leading zeros, space-separated, from the highest
 * one with a bit set; "0" if none is. The longs are a 64-bit reader's:
 * the kernel prints a 32-bit reader's halves apart, which a file read
 * through cusemu cannot tell.
 */
static ssize_t evdev_show_bits(struct evdev *e, const uint8_t *bits,
			       size_t bytes, char *buf, size_t size)
{
	size_t len = 0;
	bool started = false;

	g_mutex_lock(&e->lock);
	for (size_t w = bytes / 8; w-- > 0;) {
		uint64_t word = 0;

		for (int b = 7; b >= 0; b--)
			word = word << 8 | bits[w * 8 + (size_t)b];
		if (!word && !started)
			continue;
		len += (size_t)snprintf(buf + len, size > len ? size - len : 0,
					started ? " %" PRIx64 : "%" PRIx64,
					word);
		started = true;
	}
	g_mutex_unlock(&e->lock);
	if (!started)
		len = (size_t)snprintf(buf, size, "0");
	len += (size_t)snprintf(buf + len, size > len ? size - len : 0, "\n");
	return (ssize_t)len;
}

#define EVDEV_BITS_ATTR(name, field)                                       \
	static ssize_t evdev_show_##name(struct cusemu_device *dev,        \
					 char *buf, size_t size)           \
	{                                                                  \
		struct evdev *e = dev->priv;                               \
									   \
		return evdev_show_bits(e, e->field, sizeof(e->field), buf,  \
				       size);                              \
	}
EVDEV_BITS_ATTR(properties, propbit)
EVDEV_BITS_ATTR(ev, evbit)
EVDEV_BITS_ATTR(key, keybit)
EVDEV_BITS_ATTR(rel, relbit)
EVDEV_BITS_ATTR(abs, absbit)
EVDEV_BITS_ATTR(msc, mscbit)
EVDEV_BITS_ATTR(led, ledbit)
EVDEV_BITS_ATTR(snd, sndbit)
EVDEV_BITS_ATTR(ff, ffbit)
EVDEV_BITS_ATTR(sw, swbit)

static const struct cusemu_attr evdev_attrs[] = {
	{ "device/name", evdev_show_name },
	{ "device/phys", evdev_show_phys },
	{ "device/uniq", evdev_show_uniq },
	{ "device/id/bustype", evdev_show_bustype },
	{ "device/id/vendor", evdev_show_vendor },
	{ "device/id/product", evdev_show_product },
	{ "device/id/version", evdev_show_version },
	{ "device/properties", evdev_show_properties },
	{ "device/capabilities/ev", evdev_show_ev },
	{ "device/capabilities/key", evdev_show_key },
	{ "device/capabilities/rel", evdev_show_rel },
	{ "device/capabilities/abs", evdev_show_abs },
	{ "device/capabilities/msc", evdev_show_msc },
	{ "device/capabilities/led", evdev_show_led },
	{ "device/capabilities/snd", evdev_show_snd },
	{ "device/capabilities/ff", evdev_show_ff },
	{ "device/capabilities/sw", evdev_show_sw },
	CUSEMU_ATTR_END
};

/*
 * What udev's input_id builtin says of the device, from its bits as it
 * reads them: any key below BTN_MISC is a key device, and every one of
 * KEY_ESC to KEY_D (the first long but bit 0) a keyboard; relative X and
 * Y with a left button a mouse; absolute X and Y with a touch and no
 * finger tool a touchscreen.
 */
static void evdev_udev_props(struct cusemu_device *dev, GString *props)
{
	struct evdev *e = dev->priv;
	bool key = false, keyboard = true;

	g_mutex_lock(&e->lock);
	for (unsigned int k = 1; k < BTN_MISC; k++)
		key = key || test_bit(k, e->keybit);
	for (unsigned int k = 1; k < 32; k++)
		keyboard = keyboard && test_bit(k, e->keybit);
	g_string_append(props, "ID_INPUT=1\n");
	if (key)
		g_string_append(props, "ID_INPUT_KEY=1\n");
	if (keyboard)
		g_string_append(props, "ID_INPUT_KEYBOARD=1\n");
	if (test_bit(REL_X, e->relbit) && test_bit(REL_Y, e->relbit) &&
	    test_bit(BTN_LEFT, e->keybit))
		g_string_append(props, "ID_INPUT_MOUSE=1\n");
	if (test_bit(ABS_X, e->absbit) && test_bit(ABS_Y, e->absbit) &&
	    test_bit(BTN_TOUCH, e->keybit) &&
	    !test_bit(BTN_TOOL_FINGER, e->keybit))
		g_string_append(props, "ID_INPUT_TOUCHSCREEN=1\n");
	g_mutex_unlock(&e->lock);
}

const struct cusemu_device_model cusemu_model_evdev = {
	.name = "evdev",
	.summary = "an input event device (EVIOC*, read, poll, inject)",
	.node_prefix = "event",
	.params = evdev_params,
	.probe = evdev_probe,
	.remove = evdev_remove,
	.open = evdev_open,
	.release = evdev_release,
	.read = evdev_read,
	.write = evdev_write,
	.poll = evdev_poll,
	.unlocked_ioctl = evdev_ioctl,
	.compat_ioctl = evdev_compat_ioctl,
	.ioctl_fetch = evdev_fetch,
	.control = evdev_control,
	.sysfs_class = "input",
	.devnode_dir = "input",
	/* INPUT_MAJOR; evdev's minors start at EVDEV_MINOR_BASE. */
	.major = 13,
	.minor_base = 64,
	.attrs = evdev_attrs,
	.udev_props = evdev_udev_props,
	/* evdev's node belongs to the input device it reads, as in the
	 * kernel: input0/event0. */
	.sysfs_parent = "input%u",
};
