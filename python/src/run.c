/* Module.run: arguments to literals (borrowed, without a copy, when their
 * memory is already the parameter's layout), the run with the GIL
 * released, SIGINT and timeouts through the run's stop flag, and the
 * result as NumPy arrays over hloi's buffer. */
#include "hloi_py.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <time.h>

/* --- stopping: SIGINT and timeouts --------------------------------------------- */

/* SIGINT: hloi's handler sets the stop flag of the run the main thread is
 * making (sigint_target; NULL when none), then calls the handler it
 * replaced (Python's, which raises KeyboardInterrupt once the run has
 * returned). It is installed at the first run on the main thread and left
 * in place (a system call costs microseconds, as much as a tiny module's
 * run): each run asks once whether it is still there, and installs it
 * again over a handler set since (signal.signal puts Python's back), but
 * never over SIG_IGN or SIG_DFL. Only the main thread's runs touch it. */
static volatile int *volatile sigint_target;
static struct sigaction sigint_saved;
static unsigned long main_thread;

static void on_sigint(int sig, siginfo_t *info, void *uc)
{
	volatile int *t = sigint_target;
	if (t)
		*t = SIGINT;
	if (sigint_saved.sa_flags & SA_SIGINFO) {
		if (sigint_saved.sa_sigaction)
			sigint_saved.sa_sigaction(sig, info, uc);
	} else if (sigint_saved.sa_handler != SIG_DFL && sigint_saved.sa_handler != SIG_IGN) {
		sigint_saved.sa_handler(sig);
	}
}

int py_run_init(void)
{
	main_thread = PyThread_get_thread_ident();
	PyObject *threading = PyImport_ImportModule("threading");
	PyObject *mt = threading ? PyObject_CallMethod(threading, "main_thread", NULL) : NULL;
	PyObject *ident = mt ? PyObject_GetAttrString(mt, "ident") : NULL;
	if (ident && PyLong_Check(ident))
		main_thread = PyLong_AsUnsignedLong(ident);
	Py_XDECREF(ident);
	Py_XDECREF(mt);
	Py_XDECREF(threading);
	PyErr_Clear();
	return 0;
}

/* Points SIGINT at `flag` for a run on the main thread; 1 when it does. */
static int sigint_hook(volatile int *flag)
{
	if (PyThread_get_thread_ident() != main_thread)
		return 0;
	struct sigaction cur;
	if (sigaction(SIGINT, NULL, &cur) != 0)
		return 0;
	if (!((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_sigint)) {
		if (!(cur.sa_flags & SA_SIGINFO) && (cur.sa_handler == SIG_IGN || cur.sa_handler == SIG_DFL))
			return 0;
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_sigaction = on_sigint;
		sa.sa_flags = SA_SIGINFO | (cur.sa_flags & SA_RESTART);
		sigemptyset(&sa.sa_mask);
		sigint_target = NULL;
		sigint_saved = cur; /* (no handler runs: ours is not installed) */
		if (sigaction(SIGINT, &sa, NULL) != 0)
			return 0;
	}
	sigint_target = flag;
	return 1;
}

static void sigint_unhook(void)
{
	sigint_target = NULL;
}

/* A timer thread that sets the run's stop flag at its deadline. */
typedef struct run_timer {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct timespec deadline;
	volatile int *flag;
	int done, fired;
} run_timer;

static void *timer_main(void *arg)
{
	run_timer *t = arg;
	pthread_mutex_lock(&t->mu);
	while (!t->done) {
		int rc = pthread_cond_timedwait(&t->cv, &t->mu, &t->deadline);
		if (rc == ETIMEDOUT && !t->done) {
			t->fired = 1;
			__atomic_store_n((int *)t->flag, SIGALRM, __ATOMIC_RELAXED);
			break;
		}
	}
	pthread_mutex_unlock(&t->mu);
	return NULL;
}

static int timer_start(run_timer *t, double seconds, volatile int *flag)
{
	memset(t, 0, sizeof *t);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_mutex_init(&t->mu, NULL);
	pthread_cond_init(&t->cv, &ca);
	pthread_condattr_destroy(&ca);
	clock_gettime(CLOCK_MONOTONIC, &t->deadline);
	double whole = (double)(time_t)seconds;
	t->deadline.tv_sec += (time_t)seconds;
	t->deadline.tv_nsec += (long)((seconds - whole) * 1e9);
	if (t->deadline.tv_nsec >= 1000000000L) {
		t->deadline.tv_sec++;
		t->deadline.tv_nsec -= 1000000000L;
	}
	t->flag = flag;
	if (pthread_create(&t->thread, NULL, timer_main, t) != 0) {
		pthread_mutex_destroy(&t->mu);
		pthread_cond_destroy(&t->cv);
		return -1;
	}
	return 0;
}

/* Stops the timer; whether it fired. */
static int timer_stop(run_timer *t)
{
	pthread_mutex_lock(&t->mu);
	t->done = 1;
	pthread_cond_signal(&t->cv);
	pthread_mutex_unlock(&t->mu);
	pthread_join(t->thread, NULL);
	pthread_mutex_destroy(&t->mu);
	pthread_cond_destroy(&t->cv);
	return t->fired;
}

/* --- arguments ----------------------------------------------------------------- */

/* What a run holds of its arguments until it returns. */
typedef struct run_args {
	hloi_literal **lits;
	PyObject **keep; /* the arrays the literals borrow */
	size_t n;
	hloi_literal *small_lits[16];
	PyObject *small_keep[16];
} run_args;

static int args_init(run_args *a, size_t n)
{
	a->n = n;
	if (n <= 16) {
		a->lits = a->small_lits;
		a->keep = a->small_keep;
		memset(a->small_lits, 0, sizeof a->small_lits);
		memset(a->small_keep, 0, sizeof a->small_keep);
		return 0;
	}
	a->lits = PyMem_Calloc(n, sizeof *a->lits);
	a->keep = PyMem_Calloc(n, sizeof *a->keep);
	if (!a->lits || !a->keep) {
		PyMem_Free(a->lits);
		PyMem_Free(a->keep);
		a->lits = NULL;
		a->keep = NULL;
		PyErr_NoMemory();
		return -1;
	}
	return 0;
}

static void args_free(run_args *a)
{
	if (!a->lits)
		return;
	for (size_t i = 0; i < a->n; i++) {
		hloi_literal_free(a->lits[i]);
		Py_XDECREF(a->keep[i]);
	}
	if (a->lits != a->small_lits) {
		PyMem_Free(a->lits);
		PyMem_Free(a->keep);
	}
	a->lits = NULL;
}

/* The HLO type name of an array's values (the dtype's, or an HloArray's
 * hlo_type) into buf; "" when hloi has no such type. */
static void array_hlo_type(PyArrayObject *a, char *buf, size_t size)
{
	PyObject *t = py_hlo_array_type_of((PyObject *)a);
	const char *s = t ? PyUnicode_AsUTF8(t) : py_hlo_of_descr(PyArray_DESCR(a));
	snprintf(buf, size, "%s", s ? s : "");
	Py_XDECREF(t);
	PyErr_Clear();
}

/* The array `obj` is for a parameter of type `t` (a new reference), or
 * NULL with a TypeError naming the parameter. Arrays and buffers must have
 * the parameter's type; Python scalars and sequences are converted to it
 * when NumPy's same-kind casting allows. */
static PyArrayObject *as_array(PyObject *obj, const py_type *t, PyObject *pname, const char *hlo)
{
	PyArrayObject *a;
	int exact = PyArray_Check(obj) || PyObject_CheckBuffer(obj);
	if (PyArray_Check(obj)) {
		a = (PyArrayObject *)Py_NewRef(obj);
	} else {
		a = (PyArrayObject *)PyArray_FromAny(obj, NULL, 0, 0, 0, NULL);
		if (!a)
			return NULL;
	}
	if (t->raw) {
		PyObject *ht = py_hlo_array_type_of((PyObject *)a);
		int ok = ht && PyUnicode_CompareWithASCIIString(ht, hlo) == 0 &&
			 PyArray_ITEMSIZE(a) == t->descr->elsize && PyTypeNum_ISUNSIGNED(PyArray_TYPE(a));
		Py_XDECREF(ht);
		if (!ok) {
			char got[32];
			array_hlo_type(a, got, sizeof got);
			PyErr_Format(PyExc_TypeError,
				     "parameter '%U' is %s, which NumPy lacks: pass an hloi.HloArray of hlo_type '%s' "
				     "(hloi.bits(array, '%s')), or install ml_dtypes; got %s%s",
				     pname, hlo, hlo, hlo, *got ? got : "dtype ", *got ? "" : PyArray_DESCR(a)->typeobj->tp_name);
			Py_DECREF(a);
			return NULL;
		}
		return a;
	}
	if (PyArray_EquivTypes(PyArray_DESCR(a), t->descr))
		return a;
	if (!exact && PyArray_CanCastTypeTo(PyArray_DESCR(a), t->descr, NPY_SAME_KIND_CASTING)) {
		Py_INCREF(t->descr);
		PyArrayObject *c = (PyArrayObject *)PyArray_FromArray(a, t->descr, NPY_ARRAY_FORCECAST);
		/* integers must fit: 2**40 for an s32 parameter is refused */
		if (c && PyTypeNum_ISINTEGER(PyArray_TYPE(a)) && PyTypeNum_ISINTEGER(PyArray_TYPE(c))) {
			PyObject *eq = PyObject_RichCompare((PyObject *)c, (PyObject *)a, Py_EQ);
			eq = eq ? PyArray_EnsureArray(eq) : NULL; /* (0-d: a NumPy bool) */
			PyObject *all = eq ? PyArray_All((PyArrayObject *)eq, NPY_MAXDIMS, NULL) : NULL;
			int fits = all ? PyObject_IsTrue(all) : -1;
			Py_XDECREF(eq);
			Py_XDECREF(all);
			if (fits != 1) {
				if (fits == 0)
					PyErr_Format(PyExc_OverflowError, "parameter '%U' is %s: the value does not fit",
						     pname, hlo);
				Py_CLEAR(c);
			}
		}
		Py_DECREF(a);
		return c;
	}
	char got[32];
	array_hlo_type(a, got, sizeof got);
	PyObject *dname = PyObject_Str((PyObject *)PyArray_DESCR(a));
	PyErr_Format(PyExc_TypeError, "parameter '%U' is %s (%S); got an array of %S%s%s%s", pname, hlo,
		     (PyObject *)t->descr, dname ? dname : Py_None, *got ? " (" : "", got, *got ? ")" : "");
	Py_XDECREF(dname);
	Py_DECREF(a);
	return NULL;
}

/* ValueError naming the parameter when the dimensions differ. */
static int check_dims(PyArrayObject *a, const py_param *p, PyObject *pname)
{
	int ok = PyArray_NDIM(a) == p->rank;
	for (int d = 0; ok && d < p->rank; d++) {
		int64_t want = hloi_shape_dim(p->shape, d);
		ok = p->is_static ? PyArray_DIM(a, d) == p->dims[d] : want < 0 || PyArray_DIM(a, d) <= want;
	}
	if (ok)
		return 0;
	char text[512];
	hloi_shape_to_string(p->shape, 0, text, sizeof text);
	PyObject *shape = PyObject_GetAttrString((PyObject *)a, "shape");
	PyErr_Format(PyExc_ValueError, "parameter '%U' is %s; got an array of shape %S", pname, text,
		     shape ? shape : Py_None);
	Py_XDECREF(shape);
	return -1;
}

/* A literal over `a`'s memory, whose strides are those of a dense layout
 * (some order of its dimensions), with that layout; else NULL (no error). */
static hloi_literal *wrap_dense(PyArrayObject *a, const char *hlo, hloi_context *ctx)
{
	int rank = PyArray_NDIM(a);
	npy_intp es = PyArray_ITEMSIZE(a);
	int order[HLOI_MAX_RANK];
	for (int d = 0; d < rank; d++)
		order[d] = d;
	/* minor to major: by stride, size-1 dimensions anywhere (insertion sort) */
	for (int i = 1; i < rank; i++) {
		int x = order[i], j = i;
		while (j > 0 && PyArray_STRIDE(a, order[j - 1]) > PyArray_STRIDE(a, x)) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = x;
	}
	npy_intp expect = es;
	for (int i = 0; i < rank && PyArray_SIZE(a) > 0; i++) {
		int d = order[i];
		if (PyArray_DIM(a, d) != 1 && PyArray_STRIDE(a, d) != expect)
			return NULL;
		expect *= PyArray_DIM(a, d);
	}
	/* no elements: nothing is read, any strides do (NumPy's of an empty
	 * array need not be a layout's) */
	if (PyArray_SIZE(a) > 0 && !PyArray_ISALIGNED(a))
		return NULL;
	char text[64 + 2 * 24 * HLOI_MAX_RANK];
	size_t n = (size_t)snprintf(text, sizeof text, "%s[", hlo);
	for (int d = 0; d < rank; d++)
		n += (size_t)snprintf(text + n, sizeof text - n, "%s%lld", d ? "," : "", (long long)PyArray_DIM(a, d));
	n += (size_t)snprintf(text + n, sizeof text - n, "]{");
	for (int i = 0; i < rank; i++)
		n += (size_t)snprintf(text + n, sizeof text - n, "%s%d", i ? "," : "", order[i]);
	snprintf(text + n, sizeof text - n, "}");
	hloi_shape *s = NULL;
	if (hloi_shape_parse(&s, ctx, "argument", text) != HLOI_OK) {
		hloi_context_clear(ctx);
		return NULL;
	}
	hloi_literal *lit = NULL;
	int64_t bytes = hloi_shape_byte_size(s);
	if (bytes < 0 || hloi_literal_wrap(&lit, ctx, s, PyArray_DATA(a), (size_t)bytes, NULL, NULL) != HLOI_OK) {
		hloi_context_clear(ctx);
		lit = NULL;
	}
	hloi_shape_free(s);
	return lit;
}

/* A NumPy view of an untiled array literal's elements (no padding read). */
static PyArrayObject *literal_view(hloi_literal *lit, PyArray_Descr *descr)
{
	const hloi_shape *s = hloi_literal_shape(lit);
	int rank = hloi_shape_rank(s);
	npy_intp dims[HLOI_MAX_RANK], strides[HLOI_MAX_RANK];
	int64_t es = hloi_shape_element_bytes(s);
	for (int d = 0; d < rank; d++) {
		dims[d] = (npy_intp)hloi_shape_dim(s, d);
		int64_t st = hloi_shape_stride(s, d);
		if (st < 0)
			return NULL;
		strides[d] = (npy_intp)(st * es);
	}
	void *data = hloi_literal_data(lit);
	Py_INCREF(descr);
	PyArrayObject *v = (PyArrayObject *)PyArray_NewFromDescr(&PyArray_Type, descr, rank, dims, data ? strides : NULL,
								 data, data ? NPY_ARRAY_WRITEABLE : 0, NULL);
	return v;
}

static int convert_arg(const py_param *p, PyObject *obj, hloi_context *ctx, hloi_literal **lit, PyObject **keep);

/* A tuple parameter's value: a copy of each element into a new tuple
 * literal of the parameter's shape. */
static int convert_tuple(const hloi_shape *s, PyObject *obj, PyObject *pname, hloi_context *ctx, hloi_literal **out)
{
	if (!PyTuple_Check(obj) && !PyList_Check(obj)) {
		PyErr_Format(PyExc_TypeError, "parameter '%U' is a tuple; pass a tuple of its elements", pname);
		return -1;
	}
	hloi_literal *lit = NULL;
	if (hloi_literal_new(&lit, ctx, s) != HLOI_OK) {
		py_raise(HLOI_ENOMEM, ctx, "tuple argument");
		return -1;
	}
	size_t n = hloi_literal_tuple_size(lit);
	if ((size_t)PySequence_Size(obj) != n) {
		PyErr_Format(PyExc_ValueError, "parameter '%U' is a tuple of %zu elements; got %zd", pname, n,
			     PySequence_Size(obj));
		hloi_literal_free(lit);
		return -1;
	}
	for (size_t k = 0; k < n; k++) {
		hloi_literal *el = hloi_literal_tuple_element(lit, k);
		const hloi_shape *es = hloi_literal_shape(el);
		PyObject *item = PySequence_GetItem(obj, (Py_ssize_t)k);
		int rc = -1;
		if (!item) {
			/* the error is set */
		} else if (hloi_shape_rank(es) < 0) {
			hloi_literal *sub = NULL;
			/* nested: fill a new literal, then copy its bytes element by element */
			rc = convert_tuple(es, item, pname, ctx, &sub);
			if (rc == 0) {
				for (size_t j = 0; j < hloi_literal_tuple_size(sub); j++) {
					hloi_literal *dst = hloi_literal_tuple_element(el, j),
						     *src = hloi_literal_tuple_element(sub, j);
					if (hloi_literal_data(dst))
						memcpy(hloi_literal_data(dst), hloi_literal_data(src),
						       hloi_literal_size_bytes(dst));
				}
				hloi_literal_free(sub);
			}
		} else {
			py_param ep;
			memset(&ep, 0, sizeof ep);
			ep.shape = es;
			ep.name = pname;
			ep.rank = hloi_shape_rank(es);
			ep.type = py_type_of(hloi_shape_element_type(es));
			ep.is_static = 1;
			for (int d = 0; d < ep.rank; d++)
				ep.dims[d] = (npy_intp)hloi_shape_dim(es, d);
			PyArrayObject *a = ep.type ? as_array(item, ep.type, pname, hloi_shape_element_type(es)) : NULL;
			if (!ep.type)
				PyErr_Format(PyExc_TypeError, "parameter '%U': element %zu has no NumPy type", pname, k);
			if (a && check_dims(a, &ep, pname) == 0) {
				PyArrayObject *v = literal_view(el, PyArray_DESCR(a));
				if (!v)
					PyErr_Format(py_UnsupportedError, "parameter '%U': a tiled tuple element", pname);
				else
					rc = PyArray_CopyInto(v, a);
				Py_XDECREF(v);
			}
			Py_XDECREF(a);
		}
		Py_XDECREF(item);
		if (rc < 0) {
			hloi_literal_free(lit);
			return -1;
		}
	}
	*out = lit;
	return 0;
}

static int convert_arg(const py_param *p, PyObject *obj, hloi_context *ctx, hloi_literal **lit, PyObject **keep)
{
	*lit = NULL;
	*keep = NULL;
	if (p->is_tuple)
		return convert_tuple(p->shape, obj, p->name, ctx, lit);
	const char *hlo = hloi_shape_element_type(p->shape);
	if (strcmp(hlo, "token") == 0) {
		/* a token parameter: None, as a token result comes back */
		if (obj != Py_None) {
			PyErr_Format(PyExc_TypeError, "parameter '%U' is a token; pass None", p->name);
			return -1;
		}
		if (hloi_literal_new(lit, ctx, p->shape) != HLOI_OK) {
			py_raise(HLOI_ENOMEM, ctx, "token argument");
			return -1;
		}
		return 0;
	}
	if (!p->type) {
		PyErr_Format(py_UnsupportedError, "parameter '%U' is %s, which has no array values", p->name, hlo);
		return -1;
	}
	PyArrayObject *a = as_array(obj, p->type, p->name, hlo);
	if (!a)
		return -1;
	if (check_dims(a, p, p->name) < 0) {
		Py_DECREF(a);
		return -1;
	}
	/* the parameter's own layout: borrowed as it is */
	if (p->plain_strides && PyArray_ISALIGNED(a)) {
		int same = 1;
		for (int d = 0; d < p->rank && same; d++)
			same = p->dims[d] == 1 || PyArray_STRIDE(a, d) == p->strides[d];
		if (same && hloi_literal_wrap(lit, ctx, p->shape, PyArray_DATA(a), p->nbytes, NULL, NULL) == HLOI_OK) {
			*keep = (PyObject *)a;
			return 0;
		}
		hloi_context_clear(ctx);
	}
	/* another dense layout: borrowed with that layout, the run converts */
	*lit = wrap_dense(a, hlo, ctx);
	if (!*lit) {
		/* strided: a row-major copy */
		PyArrayObject *c = (PyArrayObject *)PyArray_NewCopy(a, NPY_CORDER);
		Py_DECREF(a);
		if (!c)
			return -1;
		a = c;
		*lit = wrap_dense(a, hlo, ctx);
		if (!*lit) {
			Py_DECREF(a);
			py_raise(HLOI_ENOMEM, ctx, "argument");
			return -1;
		}
	}
	*keep = (PyObject *)a;
	return 0;
}

/* --- results ----------------------------------------------------------------- */

static void capsule_free(PyObject *cap)
{
	hloi_literal_free(PyCapsule_GetPointer(cap, "hloi.literal"));
}

/* An array over an array literal's buffer, kept alive by `owner`. */
static PyObject *array_result(hloi_literal *lit, PyObject *owner)
{
	const hloi_shape *s = hloi_literal_shape(lit);
	const char *hlo = hloi_shape_element_type(s);
	const py_type *t = py_type_of(hlo);
	if (strcmp(hlo, "token") == 0)
		Py_RETURN_NONE;  /* a token has no value: None (`hloi run` prints `token`) */
	if (!t) {
		PyErr_Format(py_UnsupportedError, "a result of type %s has no array value", hlo);
		return NULL;
	}
	int rank = hloi_shape_rank(s);
	npy_intp dims[HLOI_MAX_RANK], strides[HLOI_MAX_RANK];
	int64_t es = hloi_shape_element_bytes(s);
	int plain = 1;
	for (int d = 0; d < rank; d++) {
		dims[d] = (npy_intp)hloi_literal_dim(lit, d); /* a `<=N` one: its size */
		int64_t st = hloi_shape_stride(s, d);
		strides[d] = (npy_intp)(st * es);
		plain &= st >= 0;
	}
	void *data = hloi_literal_data(lit);
	PyTypeObject *sub = t->raw ? (PyTypeObject *)py_hlo_array_type : &PyArray_Type;
	PyObject *arr;
	Py_INCREF(t->descr);
	if (data && plain) {
		arr = PyArray_NewFromDescr(sub, t->descr, rank, dims, strides, data, NPY_ARRAY_WRITEABLE, NULL);
		if (arr) {
			Py_INCREF(owner);
			if (PyArray_SetBaseObject((PyArrayObject *)arr, owner) < 0)
				Py_CLEAR(arr);
		}
	} else {
		/* no buffer (no elements), or a tiled layout: a row-major copy */
		arr = PyArray_NewFromDescr(sub, t->descr, rank, dims, NULL, NULL, 0, NULL);
		if (arr && data && PyArray_SIZE((PyArrayObject *)arr) > 0) {
			int64_t idx[HLOI_MAX_RANK] = { 0 }, lin;
			char *dst = PyArray_DATA((PyArrayObject *)arr);
			npy_intp n = PyArray_SIZE((PyArrayObject *)arr);
			for (npy_intp k = 0; k < n; k++) {
				if (hloi_shape_index_to_linear(s, idx, &lin) == HLOI_OK)
					memcpy(dst + k * es, (char *)data + lin * es, (size_t)es);
				for (int d = rank - 1; d >= 0 && ++idx[d] == dims[d]; d--)
					idx[d] = 0;
			}
		}
	}
	if (arr && t->raw && PyObject_SetAttrString(arr, "hlo_type", PyUnicode_FromString(hlo)) < 0)
		Py_CLEAR(arr);
	return arr;
}

static PyObject *result_rec(hloi_literal *lit, PyObject *owner)
{
	if (hloi_shape_rank(hloi_literal_shape(lit)) >= 0)
		return array_result(lit, owner);
	size_t n = hloi_literal_tuple_size(lit);
	PyObject *t = PyTuple_New((Py_ssize_t)n);
	for (size_t i = 0; t && i < n; i++) {
		PyObject *x = result_rec(hloi_literal_tuple_element(lit, i), owner);
		if (!x) {
			Py_CLEAR(t);
			break;
		}
		PyTuple_SET_ITEM(t, (Py_ssize_t)i, x);
	}
	return t;
}

PyObject *py_result_from_literal(hloi_literal *lit)
{
	PyObject *cap = PyCapsule_New(lit, "hloi.literal", capsule_free);
	if (!cap) {
		hloi_literal_free(lit);
		return NULL;
	}
	PyObject *r = result_rec(lit, cap);
	Py_DECREF(cap);
	return r;
}

/* --- the run ------------------------------------------------------------------ */

typedef struct run_kw {
	hloi_run_options o;
	double timeout;
	long long replicas, partitions;
	PyObject *out;
} run_kw;

static int parse_run_kw(PyObject *kw, run_kw *k)
{
	hloi_run_options d = HLOI_RUN_OPTIONS_INIT;
	k->o = d;
	k->o.engine = HLOI_ENGINE_FAST;
	k->timeout = 0;
	k->replicas = k->partitions = -1;
	k->out = NULL;
	if (!kw)
		return 0;
	static char *kwlist[] = { "engine", "threads", "max_memory", "timeout", "replicas", "partitions", "out", NULL };
	PyObject *eng = NULL, *mm = Py_None, *to = Py_None, *rep = Py_None, *par = Py_None, *out = Py_None;
	int threads = 0;
	PyObject *empty = PyTuple_New(0);
	if (!empty)
		return -1;
	int ok = PyArg_ParseTupleAndKeywords(empty, kw, "|$OiOOOOO:run", kwlist, &eng, &threads, &mm, &to, &rep, &par,
					     &out);
	Py_DECREF(empty);
	if (!ok)
		return -1;
	if (eng && eng != Py_None) {
		const char *s = PyUnicode_Check(eng) ? PyUnicode_AsUTF8(eng) : "";
		if (!strcmp(s, "fast"))
			k->o.engine = HLOI_ENGINE_FAST;
		else if (!strcmp(s, "reference"))
			k->o.engine = HLOI_ENGINE_REFERENCE;
		else if (!strcmp(s, "default"))
			k->o.engine = HLOI_ENGINE_DEFAULT;
		else {
			PyErr_SetString(PyExc_ValueError, "engine must be \"fast\", \"reference\" or \"default\"");
			return -1;
		}
	}
	if (threads < 0) {
		PyErr_SetString(PyExc_ValueError, "threads must be 0 (the machine's cores) or more");
		return -1;
	}
	k->o.threads = threads;
	if (mm != Py_None) {
		unsigned long long b = PyLong_AsUnsignedLongLong(mm);
		if (PyErr_Occurred() || b == 0) {
			PyErr_Clear();
			PyErr_SetString(PyExc_ValueError, "max_memory must be a positive number of bytes, or None");
			return -1;
		}
		k->o.max_memory = b;
	}
	if (to != Py_None) {
		k->timeout = PyFloat_AsDouble(to);
		if (PyErr_Occurred() || !(k->timeout > 0) || k->timeout > 1e9) {
			PyErr_Clear();
			PyErr_SetString(PyExc_ValueError, "timeout must be a positive number of seconds, or None");
			return -1;
		}
	}
	PyObject *pr[2] = { rep, par };
	long long *dst[2] = { &k->replicas, &k->partitions };
	for (int i = 0; i < 2; i++) {
		if (pr[i] == Py_None)
			continue;
		*dst[i] = PyLong_AsLongLong(pr[i]);
		if (PyErr_Occurred() || *dst[i] < 1 || *dst[i] > HLOI_MAX_PARTICIPANTS) {
			PyErr_Clear();
			PyErr_Format(PyExc_ValueError, "replicas and partitions must be between 1 and %d, or None",
				     HLOI_MAX_PARTICIPANTS);
			return -1;
		}
	}
	if (out != Py_None) {
		if (!PyArray_Check(out)) {
			PyErr_SetString(PyExc_TypeError, "out must be a NumPy array");
			return -1;
		}
		k->out = out;
	}
	return 0;
}

/* Checks the module again when the run asks for other participants. */
static int ensure_participants(py_module *pm, const run_kw *k)
{
	if (k->replicas < 0 && k->partitions < 0)
		return py_module_ensure_checked(pm);
	int64_t r = k->replicas > 0 ? k->replicas : pm->replicas, p = k->partitions > 0 ? k->partitions : pm->partitions;
	if (pm->checked && r == pm->replicas && p == pm->partitions)
		return 0;
	return py_module_check_participants(pm, r, p);
}

/* The exception of a failed run: a timeout, an interrupt (Python's SIGINT
 * handler runs: KeyboardInterrupt), else the diagnostics. */
static PyObject *run_failed(hloi_status st, hloi_context *ctx, int stop, int timed_out, double timeout)
{
	if (st == HLOI_ESTOPPED && timed_out) {
		hloi_context_clear(ctx);
		PyErr_Format(py_TimeoutError, "the run timed out after %g s", timeout);
		return NULL;
	}
	if (st == HLOI_ESTOPPED && stop == SIGINT) {
		hloi_context_clear(ctx);
		if (PyErr_CheckSignals() < 0)
			return NULL;
		PyErr_SetNone(PyExc_KeyboardInterrupt);
		return NULL;
	}
	return py_raise(st, ctx, "run");
}

/* Whether `out` can be the result literal itself: the result's dtype,
 * dimensions and layout, writeable and aligned. */
static hloi_literal *wrap_out(PyArrayObject *out, const hloi_shape *rs, hloi_context *ctx)
{
	const py_type *t = py_type_of(hloi_shape_element_type(rs));
	int rank = hloi_shape_rank(rs);
	if (!t || rank < 0 || !PyArray_ISWRITEABLE(out) || !PyArray_ISALIGNED(out) || PyArray_NDIM(out) != rank ||
	    !PyArray_EquivTypes(PyArray_DESCR(out), t->descr))
		return NULL;
	if (t->raw) {
		PyObject *ht = py_hlo_array_type_of((PyObject *)out);
		int ok = ht && PyUnicode_CompareWithASCIIString(ht, hloi_shape_element_type(rs)) == 0;
		Py_XDECREF(ht);
		if (!ok)
			return NULL;
	}
	int64_t es = hloi_shape_element_bytes(rs), bytes = hloi_shape_byte_size(rs);
	if (hloi_shape_has_padding(rs) || bytes != hloi_shape_element_count(rs) * es)
		return NULL;
	for (int d = 0; d < rank; d++) {
		int64_t st = hloi_shape_stride(rs, d);
		if (st < 0 || PyArray_DIM(out, d) != hloi_shape_dim(rs, d) ||
		    (PyArray_DIM(out, d) != 1 && PyArray_STRIDE(out, d) != st * es))
			return NULL;
	}
	hloi_literal *lit = NULL;
	if (hloi_literal_wrap(&lit, ctx, rs, PyArray_DATA(out), (size_t)bytes, NULL, NULL) != HLOI_OK) {
		hloi_context_clear(ctx);
		return NULL;
	}
	return lit;
}

/* Copies a result into `out` (NumPy's same-kind casting refused). */
static PyObject *copy_into_out(PyObject *res, PyArrayObject *out)
{
	if (!PyArray_Check(res)) {
		Py_DECREF(res);
		PyErr_SetString(PyExc_TypeError, "out= takes an array result; this module returns a tuple");
		return NULL;
	}
	PyArrayObject *r = (PyArrayObject *)res;
	int ok = PyArray_EquivTypes(PyArray_DESCR(r), PyArray_DESCR(out)) && PyArray_NDIM(r) == PyArray_NDIM(out);
	for (int d = 0; ok && d < PyArray_NDIM(r); d++)
		ok = PyArray_DIM(r, d) == PyArray_DIM(out, d);
	if (!ok) {
		PyObject *a = PyObject_Str((PyObject *)PyArray_DESCR(r)), *b = PyObject_Str((PyObject *)PyArray_DESCR(out));
		PyObject *sa = PyObject_GetAttrString(res, "shape"), *sb = PyObject_GetAttrString((PyObject *)out, "shape");
		PyErr_Format(PyExc_TypeError, "out= is %S of shape %S; the result is %S of shape %S", b, sb, a, sa);
		Py_XDECREF(a);
		Py_XDECREF(b);
		Py_XDECREF(sa);
		Py_XDECREF(sb);
		Py_DECREF(res);
		return NULL;
	}
	int rc = PyArray_CopyInto(out, r);
	Py_DECREF(res);
	if (rc < 0)
		return NULL;
	return Py_NewRef((PyObject *)out);
}

PyObject *py_module_run(py_module *pm, PyObject *args, PyObject *kw)
{
	run_kw k;
	if (parse_run_kw(kw, &k) < 0 || ensure_participants(pm, &k) < 0)
		return NULL;
	size_t nargs = (size_t)PyTuple_GET_SIZE(args);
	/* no arguments to a snapshot that carries them: its own, as `hloi run` */
	int snapshot = nargs == 0 && pm->nparams > 0 && hloi_module_snapshot_input_count(pm->m) == pm->nparams;
	if (snapshot)
		nargs = pm->nparams;
	if (nargs != pm->nparams) {
		PyObject *names = PyUnicode_FromString("");
		for (size_t i = 0; names && i < pm->nparams; i++) {
			PyObject *n = PyUnicode_FromFormat("%U%s%U", names, i ? ", " : "", pm->params[i].name);
			Py_DECREF(names);
			names = n;
		}
		PyErr_Format(PyExc_TypeError, "the module takes %zu argument%s (%U); got %zu", pm->nparams,
			     pm->nparams == 1 ? "" : "s", names ? names : Py_None, nargs);
		Py_XDECREF(names);
		return NULL;
	}
	size_t np = hloi_module_participant_count(pm->m);
	if (np < 1)
		np = 1;
	if (np > 1 && k.out) {
		PyErr_SetString(PyExc_ValueError, "out= takes the result of a run of one participant");
		return NULL;
	}
	hloi_context *ctx = NULL;
	if (hloi_context_new(&ctx) != HLOI_OK)
		return PyErr_NoMemory();
	run_args a;
	if (args_init(&a, np * nargs) < 0) {
		hloi_context_free(ctx);
		return NULL;
	}
	for (size_t i = 0; snapshot && i < nargs; i++) {
		for (size_t p = 0; p < np; p++) {
			if (hloi_literal_clone(&a.lits[p * nargs + i], hloi_module_snapshot_input(pm->m, i)) != HLOI_OK) {
				PyErr_NoMemory();
				goto fail;
			}
		}
	}
	for (size_t i = 0; !snapshot && i < nargs; i++) {
		PyObject *obj = PyTuple_GET_ITEM(args, (Py_ssize_t)i);
		/* several participants: a list gives each its own value */
		int each = np > 1 && PyList_Check(obj);
		if (each && (size_t)PyList_GET_SIZE(obj) != np) {
			PyErr_Format(PyExc_ValueError, "parameter '%U': a list gives each of the %zu participants its value; got %zd",
				     pm->params[i].name, np, PyList_GET_SIZE(obj));
			goto fail;
		}
		for (size_t p = 0; p < np; p++) {
			PyObject *o = each ? PyList_GET_ITEM(obj, (Py_ssize_t)p) : obj;
			if (convert_arg(&pm->params[i], o, ctx, &a.lits[p * nargs + i], &a.keep[p * nargs + i]) < 0)
				goto fail;
		}
	}
	/* out=: the run writes into the caller's array when it is the result's
	 * layout and no input's memory; else the result is copied into it */
	hloi_literal *into = NULL;
	if (k.out && np == 1 && !pm->unbounded && hloi_module_aliased_input(pm->m) < 0) {
		const hloi_shape *rs = hloi_module_result_shape(pm->m);
		into = rs ? wrap_out((PyArrayObject *)k.out, rs, ctx) : NULL;
		char *lo = PyArray_DATA((PyArrayObject *)k.out);
		char *hi = lo + PyArray_NBYTES((PyArrayObject *)k.out);
		for (size_t i = 0; into && i < nargs; i++) {
			char *d = a.lits[i] ? hloi_literal_data(a.lits[i]) : NULL;
			if (d && d < hi && d + hloi_literal_size_bytes(a.lits[i]) > lo) {
				hloi_literal_free(into);
				into = NULL;
			}
		}
	}
	/* the stop flag: the main thread's runs (one at a time) share a static
	 * one, which the SIGINT handler may write at any time */
	static volatile int main_stop;
	volatile int local_stop = 0;
	if (PyThread_get_thread_ident() == main_thread)
		main_stop = 0;
	int hooked = sigint_hook(&main_stop);
	volatile int *stop = hooked ? &main_stop : &local_stop;
	k.o.stop = stop;
	run_timer timer;
	int timing = k.timeout > 0;
	if (timing && timer_start(&timer, k.timeout, stop) < 0) {
		if (hooked)
			sigint_unhook();
		PyErr_SetString(PyExc_OSError, "cannot start the timeout's timer thread");
		goto fail;
	}
	hloi_literal *small_out[1] = { NULL };
	hloi_literal **outs = np == 1 ? small_out : PyMem_Calloc(np, sizeof *outs);
	hloi_status st = HLOI_ENOMEM;
	if (outs) {
		int write = pm->unbounded;
		Py_BEGIN_ALLOW_THREADS
		if (write)
			pthread_rwlock_wrlock(&pm->lock);
		else
			pthread_rwlock_rdlock(&pm->lock);
		if (into)
			st = hloi_module_run_into(pm->m, ctx, a.lits, nargs, &k.o, into);
		else if (np == 1)
			st = hloi_module_run(pm->m, ctx, a.lits, nargs, &k.o, outs);
		else
			st = hloi_module_run_participants(pm->m, ctx, a.lits, nargs, &k.o, outs);
		pthread_rwlock_unlock(&pm->lock);
		Py_END_ALLOW_THREADS
	}
	if (hooked)
		sigint_unhook();
	int timed_out = timing ? timer_stop(&timer) : 0;
	PyObject *res = NULL;
	if (!outs) {
		PyErr_NoMemory();
	} else if (st != HLOI_OK) {
		run_failed(st, ctx, *stop, timed_out, k.timeout);
	} else if (into) {
		res = Py_NewRef(k.out);
	} else if (np == 1) {
		res = py_result_from_literal(outs[0]);
		if (res && k.out)
			res = copy_into_out(res, (PyArrayObject *)k.out);
	} else {
		res = PyList_New((Py_ssize_t)np);
		for (size_t p = 0; p < np; p++) {
			PyObject *x = res ? py_result_from_literal(outs[p]) : NULL;
			if (!res)
				hloi_literal_free(outs[p]);
			else if (!x)
				Py_CLEAR(res);
			else
				PyList_SET_ITEM(res, (Py_ssize_t)p, x);
		}
	}
	if (outs != small_out)
		PyMem_Free(outs);
	hloi_literal_free(into);
	args_free(&a);
	hloi_context_free(ctx);
	return res;
fail:
	args_free(&a);
	hloi_context_free(ctx);
	return NULL;
}
