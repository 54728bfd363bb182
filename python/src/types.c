/* HLO element types and NumPy dtypes, and hloi.HloArray for the types
 * NumPy lacks. */
#include "hloi_py.h"

#include <string.h>

/* Every HLO type an array can hold. bf16, the f8/f4 types and the sub-byte
 * integers have no NumPy dtype; ml_dtypes has most of them (one element a
 * byte, as hloi holds them, bf16 in two). */
static py_type types[] = {
	{ "pred", NPY_BOOL, NULL, NPY_UINT8, NULL, 0 },
	{ "s8", NPY_INT8, NULL, NPY_UINT8, NULL, 0 },
	{ "s16", NPY_INT16, NULL, NPY_UINT16, NULL, 0 },
	{ "s32", NPY_INT32, NULL, NPY_UINT32, NULL, 0 },
	{ "s64", NPY_INT64, NULL, NPY_UINT64, NULL, 0 },
	{ "u8", NPY_UINT8, NULL, NPY_UINT8, NULL, 0 },
	{ "u16", NPY_UINT16, NULL, NPY_UINT16, NULL, 0 },
	{ "u32", NPY_UINT32, NULL, NPY_UINT32, NULL, 0 },
	{ "u64", NPY_UINT64, NULL, NPY_UINT64, NULL, 0 },
	{ "f16", NPY_FLOAT16, NULL, NPY_UINT16, NULL, 0 },
	{ "f32", NPY_FLOAT32, NULL, NPY_UINT32, NULL, 0 },
	{ "f64", NPY_FLOAT64, NULL, NPY_UINT64, NULL, 0 },
	{ "c64", NPY_COMPLEX64, NULL, NPY_UINT64, NULL, 0 },
	{ "c128", NPY_COMPLEX128, NULL, -1, NULL, 0 },
	{ "bf16", -1, "bfloat16", NPY_UINT16, NULL, 0 },
	{ "f8e5m2", -1, "float8_e5m2", NPY_UINT8, NULL, 0 },
	{ "f8e4m3", -1, "float8_e4m3", NPY_UINT8, NULL, 0 },
	{ "f8e4m3fn", -1, "float8_e4m3fn", NPY_UINT8, NULL, 0 },
	{ "f8e4m3b11fnuz", -1, "float8_e4m3b11fnuz", NPY_UINT8, NULL, 0 },
	{ "f8e3m4", -1, "float8_e3m4", NPY_UINT8, NULL, 0 },
	{ "f8e5m2fnuz", -1, "float8_e5m2fnuz", NPY_UINT8, NULL, 0 },
	{ "f8e4m3fnuz", -1, "float8_e4m3fnuz", NPY_UINT8, NULL, 0 },
	{ "f4e2m1fn", -1, "float4_e2m1fn", NPY_UINT8, NULL, 0 },
	{ "f8e8m0fnu", -1, "float8_e8m0fnu", NPY_UINT8, NULL, 0 },
	{ "s4", -1, "int4", NPY_UINT8, NULL, 0 },
	{ "u4", -1, "uint4", NPY_UINT8, NULL, 0 },
	{ "s2", -1, "int2", NPY_UINT8, NULL, 0 },
	{ "u2", -1, "uint2", NPY_UINT8, NULL, 0 },
	{ "s1", -1, NULL, NPY_UINT8, NULL, 0 },
	{ "u1", -1, NULL, NPY_UINT8, NULL, 0 },
};
#define NTYPES (sizeof types / sizeof types[0])

static int have_ml_dtypes;

int py_have_ml_dtypes(void)
{
	return have_ml_dtypes;
}

int py_types_init(void)
{
	PyObject *ml = PyImport_ImportModule("ml_dtypes");
	if (!ml) {
		if (!PyErr_ExceptionMatches(PyExc_ImportError))
			return -1;
		PyErr_Clear();
	}
	have_ml_dtypes = ml != NULL;
	for (size_t i = 0; i < NTYPES; i++) {
		py_type *t = &types[i];
		if (t->npy >= 0) {
			t->descr = PyArray_DescrFromType(t->npy);
		} else {
			PyObject *cls = ml && t->ml_name ? PyObject_GetAttrString(ml, t->ml_name) : NULL;
			if (!cls)
				PyErr_Clear(); /* an older ml_dtypes without this type */
			else if (!PyArray_DescrConverter(cls, &t->descr))
				PyErr_Clear();
			Py_XDECREF(cls);
			if (!t->descr) {
				t->descr = PyArray_DescrFromType(t->raw_npy);
				t->raw = 1;
			}
		}
		if (!t->descr) {
			Py_XDECREF(ml);
			return -1;
		}
	}
	Py_XDECREF(ml);
	return 0;
}

const py_type *py_type_of(const char *hlo)
{
	for (size_t i = 0; i < NTYPES; i++)
		if (strcmp(types[i].hlo, hlo) == 0)
			return &types[i];
	return NULL;
}

const char *py_hlo_of_descr(PyArray_Descr *d)
{
	for (size_t i = 0; i < NTYPES; i++)
		if (!types[i].raw && PyArray_EquivTypes(types[i].descr, d))
			return types[i].hlo;
	return NULL;
}

/* --- hloi.HloArray ------------------------------------------------------------ */

PyObject *py_hlo_array_type;

/* __array_finalize__: a view or copy of an HloArray names the same type. */
static PyObject *hlo_array_finalize(PyObject *unused, PyObject *args)
{
	(void)unused;
	PyObject *self, *obj;
	if (!PyArg_ParseTuple(args, "OO:__array_finalize__", &self, &obj))
		return NULL;
	PyObject *t = obj && obj != Py_None ? PyObject_GetAttrString(obj, "hlo_type") : NULL;
	if (!t) {
		PyErr_Clear();
		Py_RETURN_NONE;
	}
	int r = PyObject_SetAttrString(self, "hlo_type", t);
	Py_DECREF(t);
	if (r < 0)
		return NULL;
	Py_RETURN_NONE;
}

static PyObject *hlo_array_repr(PyObject *unused, PyObject *args)
{
	(void)unused;
	PyObject *self;
	if (!PyArg_ParseTuple(args, "O:__repr__", &self))
		return NULL;
	PyObject *t = PyObject_GetAttrString(self, "hlo_type");
	if (!t)
		return NULL;
	PyObject *plain = PyArray_View((PyArrayObject *)self, NULL, &PyArray_Type);
	PyObject *r = plain ? PyUnicode_FromFormat("HloArray(%R, hlo_type=%R)", plain, t) : NULL;
	Py_XDECREF(plain);
	Py_DECREF(t);
	return r;
}

static PyMethodDef finalize_def = { "__array_finalize__", hlo_array_finalize, METH_VARARGS,
				    "Keeps hlo_type on views and copies." };
static PyMethodDef repr_def = { "__repr__", hlo_array_repr, METH_VARARGS, NULL };

static const char hlo_array_doc[] =
	"An ndarray holding the values of an HLO element type NumPy lacks (bf16, the\n"
	"f8 and f4 types, s4/u4/s2/u2/s1/u1) when ml_dtypes is not importable: each\n"
	"element is the unsigned integer of the same width holding the value's bits\n"
	"(one byte for the sub-byte integers, holding the value: a signed one\n"
	"sign-extended, so .view(numpy.int8) reads s4 values). The attribute\n"
	"hlo_type names the HLO type (\"bf16\"). Runs accept such an array for a\n"
	"parameter of its hlo_type; hloi.bits(array, \"bf16\") makes one from bits.";

int py_hlo_array_init(PyObject *module)
{
	PyObject *dict = PyDict_New();
	PyObject *fin = PyCFunction_NewEx(&finalize_def, NULL, NULL);
	PyObject *rep = PyCFunction_NewEx(&repr_def, NULL, NULL);
	PyObject *fin_m = fin ? PyInstanceMethod_New(fin) : NULL;
	PyObject *rep_m = rep ? PyInstanceMethod_New(rep) : NULL;
	PyObject *doc = PyUnicode_FromString(hlo_array_doc);
	PyObject *modname = PyUnicode_FromString("hloi");
	int ok = dict && fin_m && rep_m && doc && modname && PyDict_SetItemString(dict, "__array_finalize__", fin_m) == 0 &&
		 PyDict_SetItemString(dict, "__repr__", rep_m) == 0 && PyDict_SetItemString(dict, "__doc__", doc) == 0 &&
		 PyDict_SetItemString(dict, "__module__", modname) == 0 &&
		 PyDict_SetItemString(dict, "hlo_type", Py_None) == 0;
	Py_XDECREF(fin);
	Py_XDECREF(rep);
	Py_XDECREF(fin_m);
	Py_XDECREF(rep_m);
	Py_XDECREF(doc);
	Py_XDECREF(modname);
	if (!ok) {
		Py_XDECREF(dict);
		return -1;
	}
	py_hlo_array_type = PyObject_CallFunction((PyObject *)&PyType_Type, "s(O)O", "HloArray", &PyArray_Type, dict);
	Py_DECREF(dict);
	if (!py_hlo_array_type)
		return -1;
	Py_INCREF(py_hlo_array_type);
	return PyModule_AddObject(module, "HloArray", py_hlo_array_type) < 0 ? -1 : 0;
}

PyObject *py_hlo_array_type_of(PyObject *arr)
{
	if (!PyObject_TypeCheck(arr, (PyTypeObject *)py_hlo_array_type))
		return NULL;
	PyObject *t = PyObject_GetAttrString(arr, "hlo_type");
	if (!t) {
		PyErr_Clear();
		return NULL;
	}
	if (!PyUnicode_Check(t)) {
		Py_DECREF(t);
		return NULL;
	}
	return t;
}
