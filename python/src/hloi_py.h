/* The Python extension hloi._hloi: what its files share. Written against
 * hloi's public C API (hloi.h, hloi/tool.h) only. */
#ifndef HLOI_PY_H
#define HLOI_PY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL hloi_py_ARRAY_API
#ifndef HLOI_PY_MAIN
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>

#include <pthread.h>

#include "hloi.h"
#include "hloi/tool.h"

/* --- element types (types.c) ---------------------------------------------- */

/* One HLO element type and the NumPy dtype its values come in: NumPy's own,
 * ml_dtypes' when that package is importable, else (raw = 1) the unsigned
 * integer of the same width holding the same bits, in an hloi.HloArray. */
typedef struct py_type {
	const char *hlo;      /* "f32" */
	int npy;              /* NumPy's type number, or -1 */
	const char *ml_name;  /* ml_dtypes' name, or NULL */
	int raw_npy;          /* the unsigned type of the same width */
	PyArray_Descr *descr; /* what arrays of it are (a new reference) */
	int raw;              /* descr is raw_npy's: values are bits */
} py_type;

/* Resolves every type's dtype (imports ml_dtypes when it is there). */
int py_types_init(void);
/* The entry of an HLO type name, NULL when NumPy cannot hold it (token). */
const py_type *py_type_of(const char *hlo);
/* The HLO type name NumPy dtype `d` stands for, or NULL. */
const char *py_hlo_of_descr(PyArray_Descr *d);
/* Whether ml_dtypes was imported. */
int py_have_ml_dtypes(void);

/* hloi.HloArray: an ndarray subclass whose values are the bits of an HLO
 * type NumPy lacks, named by its `hlo_type` attribute. */
extern PyObject *py_hlo_array_type;
int py_hlo_array_init(PyObject *module);
/* The HLO type an HloArray names, or NULL (a new reference to a str). */
PyObject *py_hlo_array_type_of(PyObject *arr);

/* --- exceptions (errors.c) ------------------------------------------------- */

extern PyObject *py_Error, *py_ParseError, *py_CheckError, *py_UnsupportedError, *py_MemoryLimitError,
	*py_TimeoutError, *py_InvalidError, *py_IOError, *py_StoppedError;
int py_errors_init(PyObject *module);
/* Raises the exception of status `st` with the diagnostics recorded in ctx
 * (printed as the command line prints them); `what` prefixes a message
 * when ctx holds none. Forgets the diagnostics (not the sources). Returns
 * NULL. */
PyObject *py_raise(hloi_status st, hloi_context *ctx, const char *what);
/* What a printing call wrote into a string (open_memstream). */
typedef struct py_memout {
	char *buf;
	size_t len;
	FILE *f;
} py_memout;
int py_memout_open(py_memout *m);
/* Closes the stream; returns the text as a str (NULL with an exception). */
PyObject *py_memout_str(py_memout *m);
void py_memout_discard(py_memout *m);

/* --- modules (module.c) ---------------------------------------------------- */

extern PyTypeObject py_module_type;
/* hloi.load */
PyObject *py_load(PyObject *self, PyObject *args, PyObject *kw);
/* Adds Module and Parameter to the module. */
int py_module_types_init(PyObject *module);

/* --- runs (run.c) ---------------------------------------------------------- */

/* A parameter as runs see it, cached when the module is checked. */
typedef struct py_param {
	const hloi_shape *shape; /* borrowed from the module */
	const py_type *type;     /* NULL for a tuple */
	PyObject *name;          /* str */
	int rank;
	int is_tuple;
	int is_static;           /* no `<=N` or `?` dimension */
	int plain_strides;       /* strides below describe the layout */
	npy_intp dims[HLOI_MAX_RANK];
	npy_intp strides[HLOI_MAX_RANK]; /* in bytes */
	size_t nbytes;
} py_param;

typedef struct py_module {
	PyObject_HEAD
	hloi_module *m;
	hloi_context *ctx;     /* the load's: holds the module's text */
	pthread_rwlock_t lock; /* runs read; checks write */
	int checked;
	int unbounded;          /* some parameter has `?`: runs check again */
	int64_t replicas, partitions; /* the check's (0: the header's) */
	int strict, mixed;
	size_t nparams;
	py_param *params;
	PyObject *source;       /* str: the path or "<text>" */
	PyObject *weakrefs;
} py_module;

/* Checks m with its options when it is not checked yet (GIL held). */
int py_module_ensure_checked(py_module *pm);
/* Checks m again for replicas x partitions participants. */
int py_module_check_participants(py_module *pm, int64_t replicas, int64_t partitions);
/* Module.run and hloi.run. */
PyObject *py_module_run(py_module *pm, PyObject *args, PyObject *kw);
/* A result literal as NumPy (arrays) or a tuple of them; takes `lit`. */
PyObject *py_result_from_literal(hloi_literal *lit);
/* SIGINT and timeouts. */
int py_run_init(void);

#endif
