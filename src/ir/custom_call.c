/* The custom-call registry: hloi's own targets (ir/custom_calls.def) and
 * the embedder's (hloi_custom_call_register), looked up by name by the
 * checker and by both engines. The embedder's live in a fixed table of the
 * process: a registration copies the target's name, so nothing is
 * allocated and nothing is left to free at exit. */
#include <ctype.h>
#include <string.h>

#include "ir/ir.h"

static const struct {
	const char *name;
	etype type;
} builtin[CC_COUNT] = {
#define X(E, text, rule, t) [E] = { text, t },
#include "ir/custom_calls.def"
#undef X
};

typedef struct user_target {
	hloi_custom_call call;
	char name[HLOI_CUSTOM_CALL_NAME_MAX + 1];
} user_target;

static user_target users[HLOI_CUSTOM_CALL_MAX];
static int nusers;

const char *custom_call_unquote(const char *target, size_t *len)
{
	size_t n = strlen(target);
	if (n >= 2 && target[0] == '"' && target[n - 1] == '"') {
		target++;
		n -= 2;
	}
	*len = n;
	return target;
}

static int same(const char *name, const char *s, size_t n)
{
	return strlen(name) == n && memcmp(name, s, n) == 0;
}

int custom_call_builtin(const char *target)
{
	if (!target)
		return -1;
	size_t n;
	const char *s = custom_call_unquote(target, &n);
	for (int i = 0; i < CC_COUNT; i++)
		if (same(builtin[i].name, s, n))
			return i;
	return -1;
}

etype custom_call_builtin_type(cc_target id)
{
	return builtin[id].type;
}

int custom_call_is_identity(const char *target)
{
	switch (custom_call_builtin(target)) {
	case CC_SHARDING:
	case CC_FULL_TO_SHARD:
	case CC_SHARD_TO_FULL:
	case CC_MOVE_TO_HOST:
	case CC_MOVE_TO_DEVICE:
		return 1;
	default:
		return 0;
	}
}

static int user_index(const char *s, size_t n)
{
	for (int i = 0; i < nusers; i++)
		if (same(users[i].name, s, n))
			return i;
	return -1;
}

const hloi_custom_call *custom_call_user(const char *target)
{
	if (!target)
		return NULL;
	size_t n;
	const char *s = custom_call_unquote(target, &n);
	int i = user_index(s, n);
	return i < 0 ? NULL : &users[i].call;
}

static hloi_status refuse(hloi_context *ctx, hloi_status st, const char *fmt, const char *target)
{
	if (ctx)
		diag_error_where(ctx, NULL, fmt, target ? target : "(null)");
	return st;
}

hloi_status hloi_custom_call_register(hloi_context *ctx, const hloi_custom_call *call)
{
	if (!call || !call->target || !call->target[0])
		return refuse(ctx, HLOI_EINVAL, "custom-call registration without a target name%s", "");
	const char *t = call->target;
	if (call->version < 1 || call->version > HLOI_CUSTOM_CALL_VERSION) {
		if (ctx)
			diag_error_where(ctx, NULL, "custom-call target '%s': registration of version %u, which this library (version %d) does not know",
					 t, call->version, HLOI_CUSTOM_CALL_VERSION);
		return HLOI_EINVAL;
	}
	size_t n = strlen(t);
	if (n > HLOI_CUSTOM_CALL_NAME_MAX) {
		if (ctx)
			diag_error_where(ctx, NULL, "custom-call target name of %zu bytes: the longest registered is %d",
					 n, HLOI_CUSTOM_CALL_NAME_MAX);
		return HLOI_EINVAL;
	}
	if (!call->evaluate)
		return refuse(ctx, HLOI_EINVAL, "custom-call target '%s' registered without an evaluate function", t);
	if (custom_call_builtin(t) >= 0)
		return refuse(ctx, HLOI_EINVAL, "custom-call target '%s' is one hloi evaluates itself", t);
	if (user_index(t, n) >= 0)
		return refuse(ctx, HLOI_EINVAL, "custom-call target '%s' is already registered", t);
	if (nusers == HLOI_CUSTOM_CALL_MAX) {
		if (ctx)
			diag_error_where(ctx, NULL, "custom-call target '%s': %d targets are registered already, the most there may be",
					 t, HLOI_CUSTOM_CALL_MAX);
		return HLOI_ENOMEM;
	}
	user_target *u = &users[nusers++];
	memcpy(u->name, t, n + 1);
	u->call = *call;
	u->call.version = HLOI_CUSTOM_CALL_VERSION;
	u->call.target = u->name;
	return HLOI_OK;
}

hloi_status hloi_custom_call_unregister(hloi_context *ctx, const char *target)
{
	int i = target ? user_index(target, strlen(target)) : -1;
	if (i < 0)
		return refuse(ctx, HLOI_EINVAL, "custom-call target '%s' is not registered", target);
	users[i] = users[--nusers];
	users[i].call.target = users[i].name;
	return HLOI_OK;
}

int hloi_custom_call_known(const char *target)
{
	if (custom_call_builtin(target) >= 0)
		return 1;
	return custom_call_user(target) ? 2 : 0;
}

/* The value of `key = ` in config: where it starts, or NULL. */
static const char *config_value(const char *config, const char *key)
{
	if (!config)
		return NULL;
	size_t k = strlen(key);
	for (const char *p = config; (p = strstr(p, key)) != NULL; p += k) {
		/* a whole key: not inside a longer word */
		if (p > config && (isalnum((unsigned char)p[-1]) || p[-1] == '_'))
			continue;
		const char *q = p + k;
		while (*q == ' ')
			q++;
		if (*q != '=')
			continue;
		q++;
		while (*q == ' ')
			q++;
		return q;
	}
	return NULL;
}

int custom_call_config_bool(const char *config, const char *key, int *out)
{
	const char *q = config_value(config, key);
	if (!q)
		return 0;
	int v = strncmp(q, "true", 4) == 0 ? 1 : strncmp(q, "false", 5) == 0 ? 0 : -1;
	if (v < 0 || isalnum((unsigned char)q[v ? 4 : 5]) || q[v ? 4 : 5] == '_')
		return 0;
	*out = v;
	return 1;
}

int custom_call_config_int(const char *config, const char *key, int64_t *out)
{
	const char *q = config_value(config, key);
	if (!q)
		return 0;
	int neg = *q == '-';
	q += neg;
	if (!isdigit((unsigned char)*q))
		return 0;
	int64_t v = 0;
	for (; isdigit((unsigned char)*q); q++) {
		if (v > (INT64_MAX - 9) / 10)
			return 0;
		v = v * 10 + (*q - '0');
	}
	*out = neg ? -v : v;
	return 1;
}

/* Whether a custom-call's first called computation takes the call's
 * operands and gives its declared result (checked) (XLA's builder writes
 * `xla_builder.math.Acos` and the like with their decomposition as the
 * called computation; an is_composite call carries its own): then the run
 * calls it (eval/kernels/custom_call.c). */
int custom_call_runs_callee(const instr *in)
{
	const computation *comp = in->ncalled >= 1 ? in->called[0] : NULL;
	if (!comp || !comp->root || comp->nparams != in->nops || !in->has_shape)
		return 0;
	for (int k = 0; k < in->nops; k++)
		if (!in->ops[k].def || !shape_compatible(comp->params[k]->result, in->ops[k].def->result))
			return 0;
	return shape_compatible(comp->root->result, in->shape);
}
