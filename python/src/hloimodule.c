/* hloi._hloi: the module, its functions and its initialisation. */
#define HLOI_PY_MAIN
#include "hloi_py.h"

static PyObject *py_run_fn(PyObject *self, PyObject *args, PyObject *kw)
{
	(void)self;
	if (PyTuple_GET_SIZE(args) < 1) {
		PyErr_SetString(PyExc_TypeError, "run(module, *args, ...) needs a module");
		return NULL;
	}
	PyObject *m = PyTuple_GET_ITEM(args, 0);
	PyObject *rest = PyTuple_GetSlice(args, 1, PyTuple_GET_SIZE(args));
	if (!rest)
		return NULL;
	PyObject *res;
	if (PyObject_TypeCheck(m, &py_module_type)) {
		res = py_module_run((py_module *)m, rest, kw);
	} else {
		/* a path, HLO text or bytes: loaded first */
		PyObject *one = PyTuple_Pack(1, m);
		PyObject *loaded = one ? py_load(NULL, one, NULL) : NULL;
		Py_XDECREF(one);
		res = loaded ? py_module_run((py_module *)loaded, rest, kw) : NULL;
		Py_XDECREF(loaded);
	}
	Py_DECREF(rest);
	return res;
}

/* hloi.bits(array, hlo_type): the array's values as the bits of an HLO
 * type, an HloArray view (no copy). */
static PyObject *py_bits(PyObject *self, PyObject *args)
{
	(void)self;
	PyObject *obj;
	const char *hlo;
	if (!PyArg_ParseTuple(args, "Os:bits", &obj, &hlo))
		return NULL;
	const py_type *t = py_type_of(hlo);
	if (!t) {
		PyErr_Format(PyExc_ValueError, "'%s' is not an HLO element type of arrays", hlo);
		return NULL;
	}
	PyArrayObject *a = (PyArrayObject *)PyArray_FromAny(obj, NULL, 0, 0, 0, NULL);
	if (!a)
		return NULL;
	int width = t->descr->elsize;
	if (!PyTypeNum_ISUNSIGNED(PyArray_TYPE(a)) || PyArray_ITEMSIZE(a) != width) {
		PyErr_Format(PyExc_TypeError, "bits(): %s values are %d-byte unsigned integers; got %S", hlo, width,
			     (PyObject *)PyArray_DESCR(a));
		Py_DECREF(a);
		return NULL;
	}
	if (!t->raw) {
		/* NumPy (or ml_dtypes) has the type: a plain view as it */
		Py_INCREF(t->descr);
		PyObject *v = PyArray_View(a, t->descr, NULL);
		Py_DECREF(a);
		return v;
	}
	PyObject *v = PyArray_View(a, NULL, (PyTypeObject *)py_hlo_array_type);
	Py_DECREF(a);
	if (!v)
		return NULL;
	PyObject *name = PyUnicode_FromString(hlo);
	if (!name || PyObject_SetAttrString(v, "hlo_type", name) < 0) {
		Py_XDECREF(name);
		Py_DECREF(v);
		return NULL;
	}
	Py_DECREF(name);
	return v;
}

static PyMethodDef functions[] = {
	{ "load", (PyCFunction)(void (*)(void))py_load, METH_VARARGS | METH_KEYWORDS,
	  "load(source, format=None) -> Module\n\n"
	  "Loads an HLO program: source is a path (str or os.PathLike: .hlo text, .pb or\n"
	  ".pbtxt HloModuleProto, HloProto or HloSnapshot), HLO text (a str holding a\n"
	  "newline or starting with `HloModule`), or bytes (any of those formats).\n"
	  "format (\"hlo\", \"pb\", \"pbtxt\") overrides the extension and the content.\n"
	  "Raises ParseError with the located diagnostics." },
	{ "run", (PyCFunction)(void (*)(void))py_run_fn, METH_VARARGS | METH_KEYWORDS,
	  "run(module, *args, **options): module.run(*args, **options); module may also be\n"
	  "what load() takes." },
	{ "bits", py_bits, METH_VARARGS,
	  "bits(array, hlo_type) -> HloArray\n\n"
	  "A view of an unsigned-integer array as the bits of an HLO type NumPy lacks\n"
	  "(\"bf16\" from uint16, \"f8e4m3fn\" or \"s4\" from uint8), to pass to a run." },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef module_def = {
	PyModuleDef_HEAD_INIT, "hloi._hloi",
	"hloi's C extension: see the package hloi.", -1, functions, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__hloi(void)
{
	import_array();
	PyObject *m = PyModule_Create(&module_def);
	if (!m)
		return NULL;
	if (py_errors_init(m) < 0 || py_types_init() < 0 || py_hlo_array_init(m) < 0 || py_module_types_init(m) < 0 ||
	    py_run_init() < 0 || PyModule_AddStringConstant(m, "hloi_version", HLOI_VERSION) < 0 ||
	    PyModule_AddIntConstant(m, "have_ml_dtypes", py_have_ml_dtypes()) < 0) {
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
