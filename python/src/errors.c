/* hloi's exceptions: each status its class, the message the diagnostics
 * the command line prints. */
#include "hloi_py.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

PyObject *py_Error, *py_ParseError, *py_CheckError, *py_UnsupportedError, *py_MemoryLimitError, *py_TimeoutError,
	*py_InvalidError, *py_IOError, *py_StoppedError;

static PyObject *new_error(PyObject *module, const char *name, const char *doc, PyObject *base2)
{
	char full[64];
	snprintf(full, sizeof full, "hloi.%s", name);
	PyObject *bases = base2 && py_Error ? PyTuple_Pack(2, py_Error, base2)
		: PyTuple_Pack(1, py_Error ? py_Error : PyExc_Exception);
	if (!bases)
		return NULL;
	PyObject *cls = PyErr_NewExceptionWithDoc(full, doc, bases, NULL);
	Py_DECREF(bases);
	if (!cls)
		return NULL;
	Py_INCREF(cls);
	if (PyModule_AddObject(module, name, cls) < 0) {
		Py_DECREF(cls);
		Py_DECREF(cls);
		return NULL;
	}
	return cls;
}

int py_errors_init(PyObject *module)
{
	py_Error = new_error(module, "Error",
			     "Base of hloi's errors. `diagnostics` lists the located diagnostics\n"
			     "(`file:line:col: error: message`, the source line and a caret, as the\n"
			     "command line prints them); `status` names hloi's status.",
			     NULL);
	if (!py_Error)
		return -1;
	py_ParseError = new_error(module, "ParseError", "A malformed program, literal, shape or file.",
				  PyExc_ValueError);
	py_CheckError = new_error(module, "CheckError", "The program does not type-check (hloi check).",
				  PyExc_ValueError);
	py_UnsupportedError = new_error(module, "UnsupportedError",
					"Valid, but not something hloi evaluates.", PyExc_NotImplementedError);
	py_MemoryLimitError = new_error(module, "MemoryLimitError",
					"The run needs more than its memory budget (max_memory), or an allocation failed.",
					PyExc_MemoryError);
	py_TimeoutError = new_error(module, "TimeoutError", "The run took longer than its timeout.",
				    PyExc_TimeoutError);
	py_InvalidError = new_error(module, "InvalidArgumentError",
				    "An invalid argument or input value (hloi's HLOI_EINVAL).", PyExc_ValueError);
	py_IOError = new_error(module, "FileError", "Reading or writing a file failed.", PyExc_OSError);
	py_StoppedError = new_error(module, "StoppedError",
				    "The run was stopped: it reached its step limit, or was asked to stop.", NULL);
	if (!py_ParseError || !py_CheckError || !py_UnsupportedError || !py_MemoryLimitError || !py_TimeoutError ||
	    !py_InvalidError || !py_IOError || !py_StoppedError)
		return -1;
	return 0;
}

int py_memout_open(py_memout *m)
{
	m->buf = NULL;
	m->len = 0;
	m->f = open_memstream(&m->buf, &m->len);
	if (!m->f) {
		PyErr_NoMemory();
		return -1;
	}
	return 0;
}

void py_memout_discard(py_memout *m)
{
	if (m->f)
		fclose(m->f);
	m->f = NULL;
	free(m->buf);
	m->buf = NULL;
}

PyObject *py_memout_str(py_memout *m)
{
	if (fclose(m->f) != 0) {
		m->f = NULL;
		free(m->buf);
		return PyErr_NoMemory();
	}
	m->f = NULL;
	PyObject *s = PyUnicode_DecodeUTF8(m->buf ? m->buf : "", (Py_ssize_t)m->len, "replace");
	free(m->buf);
	m->buf = NULL;
	return s;
}

/* Whether the line at p starts a diagnostic (`where: error: ...`, not its
 * source line or caret, which are indented). */
static int starts_diagnostic(const char *p, const char *end)
{
	if (p == end || *p == ' ' || *p == '\t')
		return 0;
	const char *nl = memchr(p, '\n', (size_t)(end - p));
	size_t n = (size_t)((nl ? nl : end) - p);
	static const char *const kinds[] = { "error: ", "warning: " };
	for (size_t k = 0; k < 2; k++) {
		size_t kl = strlen(kinds[k]);
		for (size_t i = 0; i + kl <= n; i++)
			if (memcmp(p + i, kinds[k], kl) == 0 && (i == 0 || p[i - 1] == ' '))
				return 1;
	}
	return 0;
}

/* The printed diagnostics split into one str each (a diagnostic with the
 * lines under it: source, caret, notes). */
static PyObject *split_diagnostics(const char *text, size_t len)
{
	PyObject *list = PyList_New(0);
	const char *p = text, *end = text + len, *start = text;
	while (list && p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *next = nl ? nl + 1 : end;
		if (next < end && starts_diagnostic(next, end)) {
			PyObject *s = PyUnicode_DecodeUTF8(start, next - start - 1, "replace");
			if (!s || PyList_Append(list, s) < 0)
				Py_CLEAR(list);
			Py_XDECREF(s);
			start = next;
		}
		p = next;
	}
	if (list && end > start) {
		size_t n = (size_t)(end - start);
		if (end[-1] == '\n')
			n--;
		PyObject *s = PyUnicode_DecodeUTF8(start, (Py_ssize_t)n, "replace");
		if (!s || PyList_Append(list, s) < 0)
			Py_CLEAR(list);
		Py_XDECREF(s);
	}
	return list;
}

PyObject *py_raise(hloi_status st, hloi_context *ctx, const char *what)
{
	PyObject *cls = st == HLOI_EPARSE	 ? py_ParseError
			: st == HLOI_ETYPE	 ? py_CheckError
			: st == HLOI_EUNSUPPORTED ? py_UnsupportedError
			: st == HLOI_ENOMEM	 ? py_MemoryLimitError
			: st == HLOI_EINVAL	 ? py_InvalidError
			: st == HLOI_EIO	 ? py_IOError
			: st == HLOI_ESTOPPED	 ? py_StoppedError
						 : py_Error;
	py_memout mo;
	char *text = NULL;
	size_t len = 0;
	if (ctx && py_memout_open(&mo) == 0) {
		hloi_context_print_diagnostics(ctx, mo.f, 0);
		if (fclose(mo.f) == 0) {
			text = mo.buf;
			len = mo.len;
		} else {
			free(mo.buf);
		}
	}
	PyErr_Clear();
	while (len > 0 && text[len - 1] == '\n')
		len--;
	PyObject *diags = split_diagnostics(text ? text : "", len);
	PyObject *msg;
	if (len > 0)
		msg = PyUnicode_DecodeUTF8(text, (Py_ssize_t)len, "replace");
	else if (st == HLOI_ENOMEM && hloi_alloc_last_failure())
		msg = PyUnicode_FromFormat("%s: out of memory (an allocation of %zu bytes failed)",
					   what ? what : "hloi", hloi_alloc_last_failure());
	else
		msg = PyUnicode_FromFormat("%s: %s", what ? what : "hloi", hloi_status_name(st));
	free(text);
	PyObject *exc = msg ? PyObject_CallOneArg(cls, msg) : NULL;
	Py_XDECREF(msg);
	if (exc && diags) {
		PyObject *name = PyUnicode_FromString(hloi_status_name(st));
		if (PyObject_SetAttrString(exc, "diagnostics", diags) < 0 || !name ||
		    PyObject_SetAttrString(exc, "status", name) < 0)
			Py_CLEAR(exc);
		Py_XDECREF(name);
	}
	Py_XDECREF(diags);
	if (exc) {
		PyErr_SetObject(cls, exc);
		Py_DECREF(exc);
	}
	return NULL;
}
