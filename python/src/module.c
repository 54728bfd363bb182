/* hloi.Module: a loaded program (hloi_module), its checks, text, plan and
 * parameters; and hloi.load. */
#include "hloi_py.h"

#include <string.h>

static PyTypeObject *parameter_type;

static PyStructSequence_Field parameter_fields[] = {
	{ "name", "the parameter instruction's name" },
	{ "shape", "the dimensions, a tuple of ints (-1 for a `?` dimension)" },
	{ "dtype", "the NumPy dtype its arrays have (see HloArray for types NumPy lacks)" },
	{ "hlo_type", "the HLO element type's name (\"f32\", \"bf16\"; \"tuple\")" },
	{ "layout", "the layout's minor_to_major, a tuple of ints" },
	{ "text", "the HLO shape, layout included (\"f32[2,3]{1,0}\")" },
	{ NULL, NULL },
};

static PyStructSequence_Desc parameter_desc = {
	"hloi.Parameter",
	"A parameter of a module's entry computation (Module.parameters).",
	parameter_fields,
	6,
};

/* The shape's text (a new str), or NULL with an exception. */
static PyObject *shape_text(const hloi_shape *s)
{
	char small[256];
	size_t n = hloi_shape_to_string(s, 1, small, sizeof small);
	if (n == 0)
		return PyErr_NoMemory();
	if (n < sizeof small)
		return PyUnicode_FromStringAndSize(small, (Py_ssize_t)n);
	char *big = PyMem_Malloc(n + 1);
	if (!big)
		return PyErr_NoMemory();
	hloi_shape_to_string(s, 1, big, n + 1);
	PyObject *r = PyUnicode_FromStringAndSize(big, (Py_ssize_t)n);
	PyMem_Free(big);
	return r;
}

static void free_params(py_module *pm)
{
	for (size_t i = 0; i < pm->nparams; i++)
		Py_XDECREF(pm->params[i].name);
	PyMem_Free(pm->params);
	pm->params = NULL;
	pm->nparams = 0;
}

/* Caches what runs need of each parameter (after a check). */
static int cache_params(py_module *pm)
{
	free_params(pm);
	size_t n = hloi_module_parameter_count(pm->m);
	py_param *p = PyMem_Calloc(n ? n : 1, sizeof *p);
	if (!p) {
		PyErr_NoMemory();
		return -1;
	}
	pm->params = p;
	pm->nparams = n;
	pm->unbounded = 0;
	for (size_t i = 0; i < n; i++) {
		const hloi_shape *s = hloi_module_parameter_shape(pm->m, i);
		p[i].shape = s;
		p[i].name = PyUnicode_FromString(hloi_module_parameter_name(pm->m, i));
		if (!p[i].name)
			return -1;
		int rank = hloi_shape_rank(s);
		p[i].is_tuple = rank < 0;
		if (p[i].is_tuple)
			continue;
		p[i].rank = rank;
		p[i].type = py_type_of(hloi_shape_element_type(s));
		char text[512];
		size_t tl = hloi_shape_to_string(s, 0, text, sizeof text);
		p[i].is_static = tl < sizeof text && !strchr(text, '<') && !strchr(text, '?');
		if (strchr(text, '?'))
			pm->unbounded = 1;
		int64_t ebytes = hloi_shape_element_bytes(s), count = hloi_shape_element_count(s);
		p[i].nbytes = (size_t)(hloi_shape_byte_size(s) > 0 ? hloi_shape_byte_size(s) : 0);
		p[i].plain_strides = p[i].is_static && !hloi_shape_has_padding(s) && hloi_shape_tile_count(s) == 0 &&
				     hloi_shape_element_bits(s) == 8 * ebytes &&
				     hloi_shape_byte_size(s) == count * ebytes;
		for (int d = 0; d < rank; d++) {
			p[i].dims[d] = (npy_intp)hloi_shape_dim(s, d);
			int64_t st = hloi_shape_stride(s, d);
			p[i].strides[d] = (npy_intp)(st * ebytes);
			if (st < 0)
				p[i].plain_strides = 0;
		}
	}
	return 0;
}

/* Checks the module with pm's options (GIL held; runs wait). The
 * diagnostics go into the context the module was loaded with, which holds
 * its text (for the source lines and carets); the lock is held until they
 * are printed. */
static int check_now(py_module *pm)
{
	hloi_check_options o = HLOI_CHECK_OPTIONS_INIT;
	o.strict = pm->strict;
	o.allow_mixed_precision = pm->mixed;
	o.replicas = pm->replicas;
	o.partitions = pm->partitions;
	hloi_status st;
	Py_BEGIN_ALLOW_THREADS
	pthread_rwlock_wrlock(&pm->lock);
	st = hloi_module_check(pm->m, pm->ctx, &o);
	Py_END_ALLOW_THREADS
	pm->checked = st == HLOI_OK;
	int rc = 0;
	if (st != HLOI_OK) {
		free_params(pm);
		py_raise(st, pm->ctx, PyUnicode_AsUTF8(pm->source));
		rc = -1;
	} else {
		/* warnings: forgotten (printing forgets them; the text stays) */
		FILE *null = fopen("/dev/null", "w");
		if (null) {
			hloi_context_print_diagnostics(pm->ctx, null, 0);
			fclose(null);
		}
		rc = cache_params(pm);
	}
	pthread_rwlock_unlock(&pm->lock);
	return rc;
}

int py_module_check_participants(py_module *pm, int64_t replicas, int64_t partitions)
{
	pm->replicas = replicas;
	pm->partitions = partitions;
	return check_now(pm);
}

int py_module_ensure_checked(py_module *pm)
{
	return pm->checked ? 0 : check_now(pm);
}

static void module_dealloc(py_module *pm)
{
	if (pm->weakrefs)
		PyObject_ClearWeakRefs((PyObject *)pm);
	free_params(pm);
	hloi_module_free(pm->m);
	hloi_context_free(pm->ctx);
	pthread_rwlock_destroy(&pm->lock);
	Py_XDECREF(pm->source);
	Py_TYPE(pm)->tp_free((PyObject *)pm);
}

static PyObject *module_repr(py_module *pm)
{
	return PyUnicode_FromFormat("<hloi.Module %U%s>", pm->source, pm->checked ? "" : " (not checked)");
}

static PyObject *module_check(py_module *pm, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "strict", "allow_mixed_precision", "replicas", "partitions", NULL };
	int strict = 0, mixed = 0;
	long long replicas = 0, partitions = 0;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "|ppLL:check", kwlist, &strict, &mixed, &replicas, &partitions))
		return NULL;
	if (replicas < 0 || partitions < 0 || replicas > HLOI_MAX_PARTICIPANTS || partitions > HLOI_MAX_PARTICIPANTS) {
		PyErr_Format(PyExc_ValueError, "replicas and partitions must be between 0 and %d", HLOI_MAX_PARTICIPANTS);
		return NULL;
	}
	pm->strict = strict;
	pm->mixed = mixed;
	pm->replicas = replicas;
	pm->partitions = partitions;
	if (check_now(pm) < 0)
		return NULL;
	Py_INCREF(pm);
	return (PyObject *)pm;
}

static PyObject *module_text(py_module *pm, PyObject *unused)
{
	(void)unused;
	py_memout mo;
	if (py_memout_open(&mo) < 0)
		return NULL;
	hloi_status st;
	Py_BEGIN_ALLOW_THREADS
	pthread_rwlock_rdlock(&pm->lock);
	st = hloi_module_print(pm->m, mo.f);
	pthread_rwlock_unlock(&pm->lock);
	Py_END_ALLOW_THREADS
	if (st != HLOI_OK) {
		py_memout_discard(&mo);
		return py_raise(st, NULL, "text");
	}
	return py_memout_str(&mo);
}

static int parse_format(PyObject *f, hloi_format *out)
{
	*out = HLOI_FORMAT_AUTO;
	if (!f || f == Py_None)
		return 0;
	const char *s = PyUnicode_Check(f) ? PyUnicode_AsUTF8(f) : NULL;
	if (!s) {
		PyErr_SetString(PyExc_TypeError, "format must be None, \"hlo\", \"pb\" or \"pbtxt\"");
		return -1;
	}
	if (!strcmp(s, "hlo") || !strcmp(s, "text"))
		*out = HLOI_FORMAT_HLO;
	else if (!strcmp(s, "pb"))
		*out = HLOI_FORMAT_PB;
	else if (!strcmp(s, "pbtxt"))
		*out = HLOI_FORMAT_PBTXT;
	else if (strcmp(s, "auto")) {
		PyErr_Format(PyExc_ValueError, "unknown format '%s' (hlo, pb, pbtxt or None)", s);
		return -1;
	}
	return 0;
}

static PyObject *module_convert(py_module *pm, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "path", "format", NULL };
	PyObject *path = NULL, *fmt = NULL;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "O&|O:convert", kwlist, PyUnicode_FSConverter, &path, &fmt))
		return NULL;
	hloi_format f;
	if (parse_format(fmt, &f) < 0) {
		Py_DECREF(path);
		return NULL;
	}
	hloi_context *ctx = NULL;
	if (hloi_context_new(&ctx) != HLOI_OK) {
		Py_DECREF(path);
		return PyErr_NoMemory();
	}
	const char *p = PyBytes_AS_STRING(path);
	hloi_status st;
	Py_BEGIN_ALLOW_THREADS
	pthread_rwlock_rdlock(&pm->lock);
	st = hloi_module_save(pm->m, ctx, p, f);
	pthread_rwlock_unlock(&pm->lock);
	Py_END_ALLOW_THREADS
	PyObject *r = st == HLOI_OK ? Py_NewRef(Py_None) : py_raise(st, ctx, p);
	hloi_context_free(ctx);
	Py_DECREF(path);
	return r;
}

static int parse_engine(PyObject *e, hloi_engine *out)
{
	*out = HLOI_ENGINE_FAST;
	if (!e || e == Py_None)
		return 0;
	const char *s = PyUnicode_Check(e) ? PyUnicode_AsUTF8(e) : NULL;
	if (s && !strcmp(s, "fast"))
		*out = HLOI_ENGINE_FAST;
	else if (s && !strcmp(s, "reference"))
		*out = HLOI_ENGINE_REFERENCE;
	else if (s && !strcmp(s, "default"))
		*out = HLOI_ENGINE_DEFAULT;
	else {
		PyErr_SetString(PyExc_ValueError, "engine must be \"fast\", \"reference\" or \"default\"");
		return -1;
	}
	return 0;
}

/* plan() and cost(): what `hloi plan` and `hloi plan --cost` print. */
static PyObject *plan_or_cost(py_module *pm, PyObject *args, PyObject *kw, int cost)
{
	static char *kwlist[] = { "engine", "threads", "json", NULL };
	PyObject *eng = NULL;
	int threads = 0, json = 0;
	if (!PyArg_ParseTupleAndKeywords(args, kw, cost ? "|Oip:cost" : "|Oi:plan", kwlist, &eng, &threads, &json))
		return NULL;
	hloi_run_options o = HLOI_RUN_OPTIONS_INIT;
	if (parse_engine(eng, &o.engine) < 0 || py_module_ensure_checked(pm) < 0)
		return NULL;
	o.threads = threads;
	hloi_context *ctx = NULL;
	py_memout mo;
	if (hloi_context_new(&ctx) != HLOI_OK)
		return PyErr_NoMemory();
	if (py_memout_open(&mo) < 0) {
		hloi_context_free(ctx);
		return NULL;
	}
	hloi_report_options r = { json, 0, NULL, NULL };
	hloi_status st;
	Py_BEGIN_ALLOW_THREADS
	pthread_rwlock_rdlock(&pm->lock);
	st = cost ? hloi_module_cost_print(pm->m, ctx, &o, &r, mo.f) : hloi_module_plan_print(pm->m, ctx, &o, mo.f);
	pthread_rwlock_unlock(&pm->lock);
	Py_END_ALLOW_THREADS
	PyObject *res;
	if (st != HLOI_OK) {
		py_memout_discard(&mo);
		res = py_raise(st, ctx, cost ? "cost" : "plan");
	} else {
		res = py_memout_str(&mo);
	}
	hloi_context_free(ctx);
	return res;
}

static PyObject *module_plan(py_module *pm, PyObject *args, PyObject *kw)
{
	return plan_or_cost(pm, args, kw, 0);
}

static PyObject *module_cost(py_module *pm, PyObject *args, PyObject *kw)
{
	return plan_or_cost(pm, args, kw, 1);
}

static PyObject *module_run_method(py_module *pm, PyObject *args, PyObject *kw)
{
	return py_module_run(pm, args, kw);
}

static PyObject *int_tuple(const int64_t *v, int n)
{
	PyObject *t = PyTuple_New(n);
	for (int i = 0; t && i < n; i++) {
		PyObject *x = PyLong_FromLongLong(v[i]);
		if (!x) {
			Py_CLEAR(t);
			break;
		}
		PyTuple_SET_ITEM(t, i, x);
	}
	return t;
}

static PyObject *module_parameters(py_module *pm, void *unused)
{
	(void)unused;
	if (py_module_ensure_checked(pm) < 0)
		return NULL;
	PyObject *list = PyList_New((Py_ssize_t)pm->nparams);
	for (size_t i = 0; list && i < pm->nparams; i++) {
		const py_param *p = &pm->params[i];
		int64_t dims[HLOI_MAX_RANK], m2m[HLOI_MAX_RANK];
		int rank = p->is_tuple ? 0 : p->rank;
		for (int d = 0; d < rank; d++) {
			dims[d] = hloi_shape_dim(p->shape, d);
			m2m[d] = hloi_shape_minor_to_major(p->shape, d);
			if (m2m[d] < 0) /* no layout (`?` dimensions): the default */
				m2m[d] = rank - 1 - d;
		}
		const char *hlo = hloi_shape_element_type(p->shape);
		PyObject *dtype;
		if (p->type && !p->type->raw) {
			dtype = (PyObject *)p->type->descr;
			Py_INCREF(dtype);
		} else {
			dtype = PyUnicode_FromString(hlo);
		}
		PyObject *item = PyStructSequence_New(parameter_type);
		PyObject *vals[6] = { Py_NewRef(p->name), int_tuple(dims, rank), dtype, PyUnicode_FromString(hlo),
				      int_tuple(m2m, rank), shape_text(p->shape) };
		int ok = item != NULL;
		for (int k = 0; k < 6; k++) {
			ok &= vals[k] != NULL;
			if (item && vals[k])
				PyStructSequence_SET_ITEM(item, k, vals[k]);
			else
				Py_XDECREF(vals[k]);
		}
		if (!ok) {
			Py_XDECREF(item);
			Py_CLEAR(list);
			break;
		}
		PyList_SET_ITEM(list, (Py_ssize_t)i, item);
	}
	return list;
}

static PyObject *module_checked(py_module *pm, void *unused)
{
	(void)unused;
	return PyBool_FromLong(pm->checked);
}

static PyObject *module_participants(py_module *pm, void *unused)
{
	(void)unused;
	if (py_module_ensure_checked(pm) < 0)
		return NULL;
	return PyLong_FromSize_t(hloi_module_participant_count(pm->m));
}

static PyMethodDef module_methods[] = {
	{ "check", (PyCFunction)(void (*)(void))module_check, METH_VARARGS | METH_KEYWORDS,
	  "check(strict=False, allow_mixed_precision=False, replicas=0, partitions=0) -> self\n\n"
	  "Type-checks the module as `hloi check` does (strict: exactly what XLA's verifier\n"
	  "accepts; replicas/partitions: the participants a run simulates, 0 for the module\n"
	  "header's). Raises CheckError (or UnsupportedError) with the located diagnostics.\n"
	  "A module is checked with the defaults when it first needs to be." },
	{ "text", (PyCFunction)module_text, METH_NOARGS, "text() -> str: the module as canonical HLO text." },
	{ "convert", (PyCFunction)(void (*)(void))module_convert, METH_VARARGS | METH_KEYWORDS,
	  "convert(path, format=None): writes the module as HLO text (.hlo), a binary\n"
	  "HloModuleProto (.pb) or its text form (.pbtxt); format overrides the extension." },
	{ "plan", (PyCFunction)(void (*)(void))module_plan, METH_VARARGS | METH_KEYWORDS,
	  "plan(engine=\"fast\", threads=0) -> str: the evaluation plan, as `hloi plan` prints it." },
	{ "cost", (PyCFunction)(void (*)(void))module_cost, METH_VARARGS | METH_KEYWORDS,
	  "cost(engine=\"fast\", threads=0, json=False) -> str: FLOPs, bytes and floors of\n"
	  "each step, as `hloi plan --cost` prints them (JSON text with json=True)." },
	{ "run", (PyCFunction)(void (*)(void))module_run_method, METH_VARARGS | METH_KEYWORDS,
	  "run(*args, engine=\"fast\", threads=0, max_memory=None, timeout=None,\n"
	  "    replicas=None, partitions=None, out=None)\n\n"
	  "Runs the entry computation on args (one per parameter: NumPy arrays, objects\n"
	  "with the buffer protocol, Python scalars; a tuple parameter takes a tuple).\n"
	  "Returns a NumPy array owning hloi's result buffer, or a tuple of them. The GIL\n"
	  "is released during the run. See the package's README for the details." },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef module_getset[] = {
	{ "parameters", (getter)module_parameters, NULL,
	  "The entry computation's parameters: a list of hloi.Parameter (name, shape,\n"
	  "dtype, hlo_type, layout, text).",
	  NULL },
	{ "checked", (getter)module_checked, NULL, "Whether the module has passed a check.", NULL },
	{ "participants", (getter)module_participants, NULL,
	  "The participants (replicas x partitions) a run simulates; 1 unless the module\n"
	  "has collectives.",
	  NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

PyTypeObject py_module_type = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "hloi.Module",
	.tp_basicsize = sizeof(py_module),
	.tp_dealloc = (destructor)module_dealloc,
	.tp_repr = (reprfunc)module_repr,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "An HLO module loaded by hloi.load().",
	.tp_methods = module_methods,
	.tp_getset = module_getset,
	.tp_weaklistoffset = offsetof(py_module, weakrefs),
};

/* Whether a str is HLO text rather than a path. */
static int looks_like_text(const char *s)
{
	while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
		s++;
	return strchr(s, '\n') != NULL || strncmp(s, "HloModule", 9) == 0;
}

PyObject *py_load(PyObject *self, PyObject *args, PyObject *kw)
{
	(void)self;
	static char *kwlist[] = { "source", "format", NULL };
	PyObject *src, *fmt = NULL;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O:load", kwlist, &src, &fmt))
		return NULL;
	hloi_format f;
	if (parse_format(fmt, &f) < 0)
		return NULL;
	Py_buffer view = { 0 };
	PyObject *path = NULL, *name = NULL;
	const char *text = NULL;
	Py_ssize_t len = 0;
	if (PyUnicode_Check(src) && looks_like_text(PyUnicode_AsUTF8(src))) {
		text = PyUnicode_AsUTF8AndSize(src, &len);
		name = PyUnicode_FromString("<text>");
		if (f == HLOI_FORMAT_AUTO)
			f = HLOI_FORMAT_HLO;
	} else if (PyObject_CheckBuffer(src) && !PyUnicode_Check(src)) {
		if (PyObject_GetBuffer(src, &view, PyBUF_SIMPLE) < 0)
			return NULL;
		text = view.buf;
		len = view.len;
		name = PyUnicode_FromString("<bytes>");
	} else {
		if (!PyUnicode_FSConverter(src, &path))
			return NULL;
		name = PyUnicode_DecodeFSDefault(PyBytes_AS_STRING(path));
	}
	if (!name || PyErr_Occurred()) {
		PyBuffer_Release(&view);
		Py_XDECREF(path);
		Py_XDECREF(name);
		return NULL;
	}
	hloi_context *ctx = NULL;
	if (hloi_context_new(&ctx) != HLOI_OK) {
		PyBuffer_Release(&view);
		Py_XDECREF(path);
		Py_DECREF(name);
		return PyErr_NoMemory();
	}
	hloi_module *m = NULL;
	hloi_status st;
	const char *cname = PyUnicode_AsUTF8(name);
	Py_BEGIN_ALLOW_THREADS
	if (path)
		st = hloi_module_load(&m, ctx, PyBytes_AS_STRING(path), f);
	else
		st = hloi_module_load_memory(&m, ctx, cname, text, (size_t)len, f);
	Py_END_ALLOW_THREADS
	PyBuffer_Release(&view);
	Py_XDECREF(path);
	if (st != HLOI_OK) {
		/* a file that cannot be opened (HLOI_EINVAL) or read: FileError */
		py_raise(path && st == HLOI_EINVAL ? HLOI_EIO : st, ctx, cname);
		hloi_context_free(ctx);
		hloi_module_free(m);
		Py_DECREF(name);
		return NULL;
	}
	py_module *pm = PyObject_New(py_module, &py_module_type);
	if (!pm) {
		hloi_module_free(m);
		hloi_context_free(ctx);
		Py_DECREF(name);
		return NULL;
	}
	pm->m = m;
	pm->ctx = ctx; /* holds the module's text, for its diagnostics */
	pthread_rwlock_init(&pm->lock, NULL);
	pm->checked = pm->unbounded = pm->strict = pm->mixed = 0;
	pm->replicas = pm->partitions = 0;
	pm->nparams = 0;
	pm->params = NULL;
	pm->source = name;
	pm->weakrefs = NULL;
	return (PyObject *)pm;
}

int py_module_types_init(PyObject *module)
{
	if (PyType_Ready(&py_module_type) < 0)
		return -1;
	parameter_type = PyStructSequence_NewType(&parameter_desc);
	if (!parameter_type)
		return -1;
	Py_INCREF(&py_module_type);
	if (PyModule_AddObject(module, "Module", (PyObject *)&py_module_type) < 0)
		return -1;
	Py_INCREF(parameter_type);
	if (PyModule_AddObject(module, "Parameter", (PyObject *)parameter_type) < 0)
		return -1;
	return 0;
}
