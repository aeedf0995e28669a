// SWIG interface over include/gpuu.h: the low-level module gpuu.gpuu_c (with
// its extension _gpuu_c). The Pythonic package gpuu builds on it.
//
// What the typemaps do, so that the Python side never handles raw memory:
//   - a gpuu_status other than GPUU_OK raises the exception class registered
//     for it (gpuu.errors), carrying gpuu_last_error() read on the same thread
//     right after the call; functions returning a status give None or their
//     out-values instead;
//   - out-handles (gpuu_graph** ...) and scalar out-values come back as
//     return values, in argument order;
//   - (const void* data, size_t size) takes any C-contiguous buffer (numpy
//     arrays, bytes) without a copy; (void* data, size_t size) writes straight
//     into a writable C-contiguous buffer;
//   - shapes, value ids, attributes, compile specs and partition denials/pins/
//     op costs are plain Python sequences, converted for the call only;
//   - const char* members of option structs keep an interned copy (bounded by
//     the number of distinct strings), so they never dangle and never leak
//     per assignment.
// The GIL is released around every C call (-threads): gpuu may log from its
// own threads, and the log trampoline takes the GIL.
%module(package="gpuu") gpuu_c

%{
#include "gpuu.h"

#include <cstring>
#include <deque>
#include <mutex>
#include <set>
#include <string>
#include <vector>

// Exception classes by status, registered by the Python package at import.
static PyObject* gpuu_py_error_classes[GPUU_ERROR_INTERNAL + 1] = {nullptr};

static void gpuu_py_raise(gpuu_status status) {
  if (PyErr_Occurred()) return;  // a Python argument was refused before gpuu ran: keep that error
  const char* message = gpuu_last_error();
  if (!message || !*message) message = gpuu_status_string(status);
  int code = static_cast<int>(status);
  PyObject* cls = (code > 0 && code <= GPUU_ERROR_INTERNAL) ? gpuu_py_error_classes[code] : nullptr;
  if (!cls) {
    PyErr_Format(PyExc_RuntimeError, "gpuu status %d (%s): %s", code, gpuu_status_string(status), message);
    return;
  }
  // "replace": a message quoting a non-UTF-8 path must still arrive as the error.
  PyObject* text = PyUnicode_DecodeUTF8(message, static_cast<Py_ssize_t>(strlen(message)), "replace");
  if (!text) return;
  PyObject* exc = PyObject_CallFunction(cls, "Oi", text, code);
  Py_DECREF(text);
  if (!exc) return;  // the constructor's own error stays set
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc)), exc);
  Py_DECREF(exc);
}

// Interned copies for const char* members of option structs (see above).
static const char* gpuu_py_intern(const char* s) {
  if (!s) return nullptr;
  static std::mutex mutex;
  static std::set<std::string>* strings = new std::set<std::string>();  // never freed: pointers escape to C
  std::lock_guard<std::mutex> lock(mutex);
  return strings->insert(s).first->c_str();
}

// Reads a Python sequence of ints into `out`; sets a TypeError naming `what`.
template <typename Int>
static bool gpuu_py_int_list(PyObject* obj, const char* what, std::vector<Int>* out) {
  PyObject* seq = PySequence_Fast(obj, "");
  if (!seq) {
    PyErr_Format(PyExc_TypeError, "%s must be a sequence of integers", what);
    return false;
  }
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  out->clear();
  out->reserve(static_cast<size_t>(n));
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* item = PySequence_Fast_GET_ITEM(seq, i);
    if (PyBool_Check(item) || !PyIndex_Check(item)) {
      PyErr_Format(PyExc_TypeError, "%s[%zd] must be an integer, got %s", what, i, Py_TYPE(item)->tp_name);
      Py_DECREF(seq);
      return false;
    }
    long long v = PyLong_AsLongLong(item);
    if (v == -1 && PyErr_Occurred()) {
      Py_DECREF(seq);
      return false;
    }
    if (static_cast<long long>(static_cast<Int>(v)) != v) {
      PyErr_Format(PyExc_OverflowError, "%s[%zd] = %lld does not fit", what, i, v);
      Py_DECREF(seq);
      return false;
    }
    out->push_back(static_cast<Int>(v));
  }
  Py_DECREF(seq);
  return true;
}

static PyObject* gpuu_py_list_from(const int32_t* ids, size_t n) {
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(n));
  if (!list) return nullptr;
  for (size_t i = 0; i < n; ++i) PyList_SET_ITEM(list, static_cast<Py_ssize_t>(i), PyLong_FromLong(ids[i]));
  return list;
}

static PyObject* gpuu_py_list_from64(const int64_t* v, size_t n) {
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(n));
  if (!list) return nullptr;
  for (size_t i = 0; i < n; ++i) PyList_SET_ITEM(list, static_cast<Py_ssize_t>(i), PyLong_FromLongLong(v[i]));
  return list;
}

// A str (UTF-8) or None (NULL) as a C string kept in `keep`.
static bool gpuu_py_cstr(PyObject* obj, const char* what, std::deque<std::string>* keep, const char** out,
                         bool allow_none) {
  if (obj == Py_None && allow_none) {
    *out = nullptr;
    return true;
  }
  if (!PyUnicode_Check(obj)) {
    PyErr_Format(PyExc_TypeError, "%s must be a str, got %s", what, Py_TYPE(obj)->tp_name);
    return false;
  }
  Py_ssize_t n = 0;
  const char* s = PyUnicode_AsUTF8AndSize(obj, &n);
  if (!s) return false;
  keep->emplace_back(s, static_cast<size_t>(n));
  *out = keep->back().c_str();
  return true;
}

// Node attributes from a sequence of (name, kind, value) triples.
struct GpuuPyAttrs {
  std::vector<gpuu_attr> attrs;
  std::deque<std::string> strings;          // names and string values (deque: stable references)
  std::deque<std::vector<int64_t>> ints;    // one per INTS attribute
  std::deque<std::vector<double>> floats;   // one per FLOATS attribute
};

static bool gpuu_py_attrs(PyObject* obj, GpuuPyAttrs* a) {
  if (obj == Py_None) return true;
  PyObject* seq = PySequence_Fast(obj, "attrs must be a sequence of (name, kind, value) tuples");
  if (!seq) return false;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  a->attrs.resize(static_cast<size_t>(n));
  bool ok = true;
  for (Py_ssize_t i = 0; ok && i < n; ++i) {
    PyObject* item = PySequence_Fast_GET_ITEM(seq, i);
    PyObject *name = nullptr, *kind = nullptr, *value = nullptr;
    if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 3) {
      PyErr_Format(PyExc_TypeError, "attrs[%zd] must be a (name, kind, value) tuple", i);
      ok = false;
      break;
    }
    name = PyTuple_GET_ITEM(item, 0);
    kind = PyTuple_GET_ITEM(item, 1);
    value = PyTuple_GET_ITEM(item, 2);
    gpuu_attr& out = a->attrs[static_cast<size_t>(i)];
    gpuu_attr_init(&out);
    const char* dummy = nullptr;
    if (!gpuu_py_cstr(name, "attribute name", &a->strings, &dummy, false)) {
      ok = false;
      break;
    }
    out.name = a->strings.back().c_str();
    long k = PyLong_AsLong(kind);
    if (k == -1 && PyErr_Occurred()) {
      ok = false;
      break;
    }
    out.kind = static_cast<gpuu_attr_kind>(k);
    switch (k) {
      case GPUU_ATTR_INT: {
        if (PyBool_Check(value) || !PyIndex_Check(value)) {
          PyErr_Format(PyExc_TypeError, "attribute '%s' is INT but its value is %s", out.name, Py_TYPE(value)->tp_name);
          ok = false;
          break;
        }
        out.i = PyLong_AsLongLong(value);
        ok = !(out.i == -1 && PyErr_Occurred());
        break;
      }
      case GPUU_ATTR_FLOAT: {
        out.f = PyFloat_AsDouble(value);
        ok = !(out.f == -1.0 && PyErr_Occurred());
        break;
      }
      case GPUU_ATTR_STRING: {
        ok = gpuu_py_cstr(value, "a string attribute", &a->strings, &dummy, false);
        if (ok) out.s = a->strings.back().c_str();
        break;
      }
      case GPUU_ATTR_INTS: {
        a->ints.emplace_back();
        ok = gpuu_py_int_list(value, "an ints attribute", &a->ints.back());
        if (ok) {
          out.ints = a->ints.back().data();
          out.count = a->ints.back().size();
        }
        break;
      }
      case GPUU_ATTR_FLOATS: {
        a->floats.emplace_back();
        PyObject* fseq = PySequence_Fast(value, "a floats attribute must be a sequence");
        if (!fseq) {
          ok = false;
          break;
        }
        for (Py_ssize_t j = 0; ok && j < PySequence_Fast_GET_SIZE(fseq); ++j) {
          double d = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(fseq, j));
          if (d == -1.0 && PyErr_Occurred()) ok = false;
          a->floats.back().push_back(d);
        }
        Py_DECREF(fseq);
        if (ok) {
          out.floats = a->floats.back().data();
          out.count = a->floats.back().size();
        }
        break;
      }
      default:
        // Unknown kinds go to the C side, which names the attribute in its refusal.
        break;
    }
  }
  Py_DECREF(seq);
  return ok;
}

// Shared-spec entries from a sequence of (key: str, value: bytes-like or str).
struct GpuuPySpecs {
  std::vector<gpuu_compile_spec> specs;
  std::deque<std::string> keys;
  std::deque<std::string> values;
};

static bool gpuu_py_specs(PyObject* obj, GpuuPySpecs* s) {
  PyObject* seq = PySequence_Fast(obj, "specs must be a sequence of (key, value) pairs");
  if (!seq) return false;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  bool ok = true;
  for (Py_ssize_t i = 0; ok && i < n; ++i) {
    PyObject* item = PySequence_Fast_GET_ITEM(seq, i);
    PyObject* pair = PySequence_Fast(item, "");
    if (!pair || PySequence_Fast_GET_SIZE(pair) != 2) {
      PyErr_Clear();
      PyErr_Format(PyExc_TypeError, "specs[%zd] must be a (key, value) pair", i);
      Py_XDECREF(pair);
      ok = false;
      break;
    }
    PyObject* key = PySequence_Fast_GET_ITEM(pair, 0);
    PyObject* value = PySequence_Fast_GET_ITEM(pair, 1);
    const char* dummy = nullptr;
    ok = gpuu_py_cstr(key, "a compile-spec key", &s->keys, &dummy, false);
    if (ok) {
      if (PyUnicode_Check(value)) {
        Py_ssize_t len = 0;
        const char* text = PyUnicode_AsUTF8AndSize(value, &len);
        ok = text != nullptr;
        if (ok) s->values.emplace_back(text, static_cast<size_t>(len));
      } else {
        Py_buffer view;
        ok = PyObject_GetBuffer(value, &view, PyBUF_SIMPLE) == 0;
        if (ok) {
          s->values.emplace_back(static_cast<const char*>(view.buf), static_cast<size_t>(view.len));
          PyBuffer_Release(&view);
        }
      }
    }
    Py_DECREF(pair);
  }
  Py_DECREF(seq);
  if (!ok) return false;
  for (size_t i = 0; i < s->keys.size(); ++i) {
    gpuu_compile_spec c;
    gpuu_compile_spec_init(&c);
    c.key = s->keys[i].c_str();
    c.value = s->values[i].data();
    c.value_size = s->values[i].size();
    s->specs.push_back(c);
  }
  return true;
}

// ---- the Python log callback --------------------------------------------
static PyObject* gpuu_py_log_callable = nullptr;  // strong reference, or NULL

static void gpuu_py_log_trampoline(void*, gpuu_log_level level, const char* component, const char* message) {
  if (!Py_IsInitialized()) return;
  PyGILState_STATE gil = PyGILState_Ensure();
  PyObject* callable = gpuu_py_log_callable;
  if (callable) {
    Py_INCREF(callable);
    const char* c = component ? component : "";
    const char* m = message ? message : "";
    PyObject* r = PyObject_CallFunction(callable, "iNN", static_cast<int>(level),
                                        PyUnicode_DecodeUTF8(c, static_cast<Py_ssize_t>(strlen(c)), "replace"),
                                        PyUnicode_DecodeUTF8(m, static_cast<Py_ssize_t>(strlen(m)), "replace"));
    if (!r) {
      PyErr_WriteUnraisable(callable);  // a logger must not turn into an error inside gpuu
    }
    Py_XDECREF(r);
    Py_DECREF(callable);
  }
  PyGILState_Release(gil);
}
%}

%include "stdint.i"

// ---- status codes become exceptions ---------------------------------------
%typemap(out) gpuu_status {
  if ($1 != GPUU_OK) {
    gpuu_py_raise($1);
    SWIG_fail;
  }
  $result = SWIG_Py_Void();
}

// ---- out-handles -------------------------------------------------------------
%define GPUU_OUT_HANDLE(TYPE)
%typemap(in, numinputs=0) TYPE** out (TYPE* handle = nullptr) { $1 = &handle; }
%typemap(argout) TYPE** out {
  $result = SWIG_Python_AppendOutput($result, SWIG_NewPointerObj(SWIG_as_voidptr(handle$argnum), $*1_descriptor, 0));
}
%enddef
GPUU_OUT_HANDLE(gpuu_graph)
GPUU_OUT_HANDLE(gpuu_partition)
GPUU_OUT_HANDLE(gpuu_program)
GPUU_OUT_HANDLE(gpuu_session)
GPUU_OUT_HANDLE(gpuu_context)

// ---- scalar out-values -------------------------------------------------------
%define GPUU_OUT_SCALAR(TYPE, NAME, CONVERT)
%typemap(in, numinputs=0) TYPE* NAME (TYPE value = TYPE()) { $1 = &value; }
%typemap(argout) TYPE* NAME { $result = SWIG_Python_AppendOutput($result, CONVERT(value$argnum)); }
%enddef
GPUU_OUT_SCALAR(int32_t, out_value, PyLong_FromLong)
GPUU_OUT_SCALAR(int32_t, node, PyLong_FromLong)
GPUU_OUT_SCALAR(int32_t, type, PyLong_FromLong)
GPUU_OUT_SCALAR(size_t, out, PyLong_FromSize_t)
GPUU_OUT_SCALAR(size_t, region, PyLong_FromSize_t)
GPUU_OUT_SCALAR(size_t, vgf_count, PyLong_FromSize_t)
GPUU_OUT_SCALAR(size_t, index, PyLong_FromSize_t)
GPUU_OUT_SCALAR(int32_t, update, PyLong_FromLong)
GPUU_OUT_SCALAR(int64_t, dim_min, PyLong_FromLongLong)
GPUU_OUT_SCALAR(int64_t, dim_max, PyLong_FromLongLong)
GPUU_OUT_SCALAR(int64_t, dim_example, PyLong_FromLongLong)
GPUU_OUT_SCALAR(int64_t, size, PyLong_FromLongLong)
// Backend ids come back as str (borrowed from the partition, copied here).
%typemap(in, numinputs=0) const char** out (const char* value = nullptr), const char** backend (const char* value = nullptr) {
  $1 = ($1_ltype)&value;  // SWIG drops the pointee's const
}
%typemap(argout) const char** out, const char** backend {
  $result = SWIG_Python_AppendOutput($result, value$argnum ? PyUnicode_FromString(value$argnum) : (Py_INCREF(Py_None), Py_None));
}
// gpuu_graph_value_dtype's dtype and the gpuu_*_from_name parses come back as ints.
GPUU_OUT_SCALAR(gpuu_dtype, out, PyLong_FromLong)
GPUU_OUT_SCALAR(gpuu_log_level, out, PyLong_FromLong)
GPUU_OUT_SCALAR(gpuu_context_mode, out, PyLong_FromLong)
GPUU_OUT_SCALAR(gpuu_sync_mode, out, PyLong_FromLong)
GPUU_OUT_SCALAR(gpuu_prefer, out, PyLong_FromLong)
GPUU_OUT_SCALAR(gpuu_vgf_path, out, PyLong_FromLong)

// ---- out-structs: allocated here, returned as owned proxies ----------------
%define GPUU_OUT_STRUCT(TYPE)
%typemap(in, numinputs=0) TYPE* out (TYPE* fresh = nullptr) {
  fresh = new TYPE();
  fresh->struct_size = sizeof(TYPE);
  $1 = fresh;
}
%typemap(argout) TYPE* out {
  $result = SWIG_Python_AppendOutput(
      $result, SWIG_NewPointerObj(SWIG_as_voidptr(fresh$argnum), $1_descriptor, SWIG_POINTER_OWN));
  fresh$argnum = nullptr;
}
%typemap(freearg) TYPE* out { delete fresh$argnum; }
%enddef
GPUU_OUT_STRUCT(gpuu_shared_spec)
GPUU_OUT_STRUCT(gpuu_vulkan_handles)
GPUU_OUT_STRUCT(gpuu_execute_stats)
GPUU_OUT_STRUCT(gpuu_session_memory)

// Tensor info holds pointers borrowed from the session: copy them out at once.
%typemap(in, numinputs=0) gpuu_tensor_info* out (gpuu_tensor_info info) {
  info = gpuu_tensor_info();
  info.struct_size = sizeof(gpuu_tensor_info);
  $1 = &info;
}
%typemap(argout) gpuu_tensor_info* out {
  PyObject* shape = gpuu_py_list_from64(info$argnum.shape, info$argnum.rank);
  if (!shape) SWIG_fail;
  PyObject* t = Py_BuildValue("(siNn)", info$argnum.name ? info$argnum.name : "", static_cast<int>(info$argnum.dtype),
                              shape, static_cast<Py_ssize_t>(info$argnum.byte_size));
  if (!t) SWIG_fail;
  $result = SWIG_Python_AppendOutput($result, t);
}

// ---- buffers ---------------------------------------------------------------
%typemap(in) (const void* data, size_t size) (Py_buffer view, bool have_view = false) {
  if (PyObject_GetBuffer($input, &view, PyBUF_C_CONTIGUOUS) != 0) SWIG_fail;
  have_view = true;
  $1 = view.buf;
  $2 = static_cast<size_t>(view.len);
}
%typemap(freearg) (const void* data, size_t size) {
  if (have_view$argnum) PyBuffer_Release(&view$argnum);
}
%typemap(in) (void* data, size_t size) (Py_buffer view, bool have_view = false) {
  if (PyObject_GetBuffer($input, &view, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) != 0) SWIG_fail;
  have_view = true;
  $1 = view.buf;
  $2 = static_cast<size_t>(view.len);
}
%typemap(freearg) (void* data, size_t size) {
  if (have_view$argnum) PyBuffer_Release(&view$argnum);
}

// A program written to memory comes back as bytes; the C buffer is freed here.
%typemap(in, numinputs=0) (void** out_data, size_t* out_size) (void* data = nullptr, size_t size = 0) {
  $1 = &data;
  $2 = &size;
}
%typemap(argout) (void** out_data, size_t* out_size) {
  PyObject* bytes =
      PyBytes_FromStringAndSize(static_cast<const char*>(data$argnum), static_cast<Py_ssize_t>(size$argnum));
  gpuu_program_bytes_free(data$argnum);
  data$argnum = nullptr;
  if (!bytes) SWIG_fail;
  $result = SWIG_Python_AppendOutput($result, bytes);
}
%typemap(freearg) (void** out_data, size_t* out_size) { gpuu_program_bytes_free(data$argnum); }

// ---- sequences in --------------------------------------------------------
%typemap(in) (const int64_t* shape, size_t rank) (std::vector<int64_t> dims) {
  if ($input != Py_None && !gpuu_py_int_list($input, "shape", &dims)) SWIG_fail;
  $1 = dims.empty() ? nullptr : dims.data();
  $2 = dims.size();
}
// Dim sizes of a recording, and every input's shape end to end (dynamic sizes).
%apply (const int64_t* shape, size_t rank) { (const int64_t* sizes, size_t count), (const int64_t* shapes, size_t count) };
%typemap(in) (const int32_t* inputs, size_t n_inputs) (std::vector<int32_t> ids) {
  if (!gpuu_py_int_list($input, "inputs", &ids)) SWIG_fail;
  $1 = ($1_ltype)(ids.empty() ? nullptr : ids.data());  // SWIG drops the pointee's const
  $2 = ids.size();
}
%typemap(in) (const gpuu_attr* attrs, size_t n_attrs) (GpuuPyAttrs converted) {
  if (!gpuu_py_attrs($input, &converted)) SWIG_fail;
  $1 = converted.attrs.empty() ? nullptr : converted.attrs.data();
  $2 = converted.attrs.size();
}
%typemap(in) (const gpuu_compile_spec* specs, size_t count) (GpuuPySpecs converted) {
  if (!gpuu_py_specs($input, &converted)) SWIG_fail;
  $1 = converted.specs.empty() ? nullptr : converted.specs.data();
  $2 = converted.specs.size();
}

// ---- sequences out -------------------------------------------------------
// custom_shader has at most 64 outputs (the op registry's limit); other ops one.
%typemap(in, numinputs=0) (int32_t* outputs, size_t outputs_capacity, size_t* n_outputs)
    (std::vector<int32_t> ids, size_t n = 0) {
  ids.assign(256, -1);
  $1 = ids.data();
  $2 = ids.size();
  $3 = &n;
}
%typemap(argout) (int32_t* outputs, size_t outputs_capacity, size_t* n_outputs) {
  PyObject* list = gpuu_py_list_from(ids$argnum.data(), n$argnum);
  if (!list) SWIG_fail;
  $result = SWIG_Python_AppendOutput($result, list);
}
%typemap(in, numinputs=0) (int64_t* dims, size_t capacity, size_t* rank) (int64_t dims[GPUU_MAX_RANK], size_t r = 0) {
  $1 = dims;
  $2 = GPUU_MAX_RANK;
  $3 = &r;
}
%typemap(argout) (int64_t* dims, size_t capacity, size_t* rank) {
  PyObject* list = gpuu_py_list_from64(dims$argnum, r$argnum);
  if (!list) SWIG_fail;
  $result = SWIG_Python_AppendOutput($result, list);
}
%typemap(in, numinputs=0) (char* name, size_t name_size) (char buffer[512]) {
  buffer[0] = '\0';
  $1 = buffer;
  $2 = sizeof(buffer);
}
%typemap(argout) (char* name, size_t name_size) {
  $result = SWIG_Python_AppendOutput($result, PyUnicode_DecodeUTF8(buffer$argnum, strlen(buffer$argnum), "replace"));
}
// The id-array helpers below fill a vector; Python gets a list.
%typemap(in, numinputs=0) std::vector<int32_t>* ids_out (std::vector<int32_t> ids) { $1 = &ids; }
%typemap(argout) std::vector<int32_t>* ids_out {
  PyObject* list = gpuu_py_list_from(ids$argnum.data(), ids$argnum.size());
  if (!list) SWIG_fail;
  $result = SWIG_Python_AppendOutput($result, list);
}

// ---- struct members --------------------------------------------------------
%typemap(memberin) const char* { $1 = gpuu_py_intern($input); }
// The partition options' arrays travel through gpuu_py_graph_partition;
// callbacks and extension lists of external contexts have no Python meaning.
%ignore gpuu_partition_options::deny;
%ignore gpuu_partition_options::deny_count;
%ignore gpuu_partition_options::pins;
%ignore gpuu_partition_options::pin_count;
%ignore gpuu_partition_options::op_costs;
%ignore gpuu_partition_options::op_cost_count;
%ignore gpuu_partition_options::backends;
%ignore gpuu_partition_options::backend_count;
%ignore gpuu_external_context_desc::get_instance_proc_addr;
%ignore gpuu_external_context_desc::queue_lock;
%ignore gpuu_external_context_desc::queue_unlock;
%ignore gpuu_external_context_desc::queue_lock_user_data;
%ignore gpuu_external_context_desc::enabled_device_extensions;
%ignore gpuu_external_context_desc::enabled_device_extension_count;
%ignore gpuu_tensor_info;
%ignore gpuu_attr;
%ignore gpuu_compile_spec;
%ignore gpuu_partition_deny;
%ignore gpuu_partition_pin;
%ignore gpuu_partition_op_cost;
%ignore gpuu_set_log_callback;
%ignore gpuu_program_bytes_free;  // handled by gpuu_program_write_to_memory's typemap
// The id-array functions take (ids, capacity, count): replaced by the helpers below.
%ignore gpuu_graph_node_inputs;
%ignore gpuu_graph_node_outputs;
%ignore gpuu_graph_inputs;
%ignore gpuu_graph_outputs;
%ignore gpuu_graph_states;
// C's gpuu_X_init(p) is a macro over gpuu_X_init_sized(p, sizeof(*p)): Python
// keeps the short name and the size comes from the wrapped struct's type.
%ignore gpuu_backend_compile_specs;
%ignore gpuu_program_write_options::extra_shared_compile_specs;
%ignore gpuu_program_write_options::extra_shared_compile_spec_count;
%ignore gpuu_program_write_options::backend_compile_specs;
%ignore gpuu_program_write_options::backend_compile_specs_count;
// Backend options travel through gpuu_py_session_create, as (id, key, value) tuples.
%ignore gpuu_backend_option;
%ignore gpuu_session_options::backend_options;
%ignore gpuu_session_options::backend_option_count;
%typemap(in) (SWIGTYPE* STRUCT_OUT, size_t struct_size) {
  if (SWIG_ConvertPtr($input, (void**)&$1, $1_descriptor, 0) < 0) {
    SWIG_exception_fail(SWIG_TypeError, "in '$symname': expected a $*1_type");
  }
  $2 = sizeof(*$1);
}
%define GPUU_PY_INIT(TYPE, ARG)
%apply (SWIGTYPE* STRUCT_OUT, size_t struct_size) { (TYPE* ARG, size_t struct_size) };
%rename(TYPE ## _init) TYPE ## _init_sized;
%enddef
GPUU_PY_INIT(gpuu_context_overrides, overrides)
GPUU_PY_INIT(gpuu_shared_spec, spec)
GPUU_PY_INIT(gpuu_device_options, options)
GPUU_PY_INIT(gpuu_context_resolve_options, options)
GPUU_PY_INIT(gpuu_external_context_desc, desc)
GPUU_PY_INIT(gpuu_program_write_options, options)
GPUU_PY_INIT(gpuu_session_options, options)
GPUU_PY_INIT(gpuu_partition_options, options)
%ignore gpuu_partition_deny_init_sized;
%ignore gpuu_partition_pin_init_sized;
%ignore gpuu_partition_op_cost_init_sized;
%ignore gpuu_compile_spec_init_sized;
%ignore gpuu_attr_init_sized;
%ignore gpuu_backend_compile_specs_init_sized;
%ignore gpuu_backend_option_init_sized;

// gpuu_backends_load's count of registered backends is its Python result.
%typemap(in, numinputs=0) size_t* out_loaded (size_t loaded = 0) { $1 = &loaded; }
%typemap(argout) size_t* out_loaded { $result = SWIG_Python_AppendOutput($result, PyLong_FromSize_t(loaded$argnum)); }

%include "gpuu.h"

// ---- helpers that make the C conventions Pythonic -----------------------
%nothread gpuu_py_set_error_classes;
%nothread gpuu_py_set_log_callback;
%inline %{
// Registers the exception class for each failing status: `classes` maps a
// status code (int) to a class taking (message, status).
PyObject* gpuu_py_set_error_classes(PyObject* classes) {
  if (!PyDict_Check(classes)) {
    PyErr_SetString(PyExc_TypeError, "classes must be a dict {status: exception class}");
    return nullptr;
  }
  for (int code = 1; code <= GPUU_ERROR_INTERNAL; ++code) {
    PyObject* key = PyLong_FromLong(code);
    PyObject* cls = PyDict_GetItem(classes, key);  // borrowed
    Py_DECREF(key);
    if (!cls || !PyType_Check(cls) || !PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(cls),
                                                         reinterpret_cast<PyTypeObject*>(PyExc_Exception))) {
      PyErr_Format(PyExc_TypeError, "classes[%d] must be an Exception subclass", code);
      return nullptr;
    }
    Py_INCREF(cls);
    Py_XDECREF(gpuu_py_error_classes[code]);
    gpuu_py_error_classes[code] = cls;
  }
  Py_RETURN_NONE;
}

// Sends gpuu's log messages at `max_level` or more severe to callable(level,
// component, message), from whatever thread logs; None restores the default
// stderr logger.
PyObject* gpuu_py_set_log_callback(PyObject* callable, int max_level) {
  if (callable != Py_None && !PyCallable_Check(callable)) {
    PyErr_SetString(PyExc_TypeError, "the log callback must be callable or None");
    return nullptr;
  }
  if (callable == Py_None) {
    gpuu_set_log_callback(nullptr, nullptr, static_cast<gpuu_log_level>(max_level));
  } else {
    // Install the trampoline before swapping the callable: no window without a logger.
    Py_INCREF(callable);
    PyObject* old = gpuu_py_log_callable;
    gpuu_py_log_callable = callable;
    gpuu_set_log_callback(gpuu_py_log_trampoline, nullptr, static_cast<gpuu_log_level>(max_level));
    Py_XDECREF(old);
    Py_RETURN_NONE;
  }
  PyObject* old = gpuu_py_log_callable;
  gpuu_py_log_callable = nullptr;
  Py_XDECREF(old);
  Py_RETURN_NONE;
}

// The id-array functions, with the count-then-fill convention done here.
gpuu_status gpuu_py_graph_node_inputs(const gpuu_graph* graph, int32_t node, std::vector<int32_t>* ids_out) {
  size_t n = 0;
  gpuu_status s = gpuu_graph_node_inputs(graph, node, nullptr, 0, &n);
  if (s != GPUU_OK || n == 0) return s;
  ids_out->resize(n);
  return gpuu_graph_node_inputs(graph, node, ids_out->data(), n, &n);
}
gpuu_status gpuu_py_graph_node_outputs(const gpuu_graph* graph, int32_t node, std::vector<int32_t>* ids_out) {
  size_t n = 0;
  gpuu_status s = gpuu_graph_node_outputs(graph, node, nullptr, 0, &n);
  if (s != GPUU_OK || n == 0) return s;
  ids_out->resize(n);
  return gpuu_graph_node_outputs(graph, node, ids_out->data(), n, &n);
}
gpuu_status gpuu_py_graph_inputs(const gpuu_graph* graph, std::vector<int32_t>* ids_out) {
  size_t n = 0;
  gpuu_status s = gpuu_graph_inputs(graph, nullptr, 0, &n);
  if (s != GPUU_OK || n == 0) return s;
  ids_out->resize(n);
  return gpuu_graph_inputs(graph, ids_out->data(), n, &n);
}
gpuu_status gpuu_py_graph_outputs(const gpuu_graph* graph, std::vector<int32_t>* ids_out) {
  size_t n = 0;
  gpuu_status s = gpuu_graph_outputs(graph, nullptr, 0, &n);
  if (s != GPUU_OK || n == 0) return s;
  ids_out->resize(n);
  return gpuu_graph_outputs(graph, ids_out->data(), n, &n);
}
// The values that read the graph's states.
gpuu_status gpuu_py_graph_states(const gpuu_graph* graph, std::vector<int32_t>* ids_out) {
  size_t n = 0;
  gpuu_status s = gpuu_graph_states(graph, nullptr, 0, &n);
  ids_out->resize(s == GPUU_OK ? n : 0);
  return s == GPUU_OK && n ? gpuu_graph_states(graph, ids_out->data(), n, &n) : s;
}
%}

// Partitioning with denials (backend, op), pins (node, backend), costs
// (op, backend, cost) given as sequences of tuples, and a backend preference
// list of ids; backends are named by their id strings.
%{
// Splits sequence item `i` of `what` into a tuple of exactly n items.
static bool gpuu_py_tuple_items(PyObject* item, Py_ssize_t n, const char* what, Py_ssize_t i, PyObject** out) {
  if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != n) {
    PyErr_Format(PyExc_TypeError, "%s[%zd] must be a tuple of %zd items", what, i, n);
    return false;
  }
  for (Py_ssize_t k = 0; k < n; ++k) out[k] = PyTuple_GET_ITEM(item, k);
  return true;
}

template <typename Entry>
struct GpuuPyArray {
  std::deque<std::string> strings;  // deque: references stay valid while it grows
  std::vector<Entry> entries;
};

// Converts `obj` (a sequence of N-tuples, or None) with fill(parts, strings, &entry).
template <Py_ssize_t N, typename Entry, typename Fill>
static bool gpuu_py_array(PyObject* obj, const char* what, GpuuPyArray<Entry>* a, Fill fill) {
  if (obj == Py_None) return true;
  PyObject* seq = PySequence_Fast(obj, "");
  if (!seq) {
    PyErr_Format(PyExc_TypeError, "%s must be a sequence of tuples", what);
    return false;
  }
  bool ok = true;
  for (Py_ssize_t i = 0; ok && i < PySequence_Fast_GET_SIZE(seq); ++i) {
    PyObject* parts[N];
    Entry e = Entry();
    e.struct_size = static_cast<uint32_t>(sizeof(Entry));
    ok = gpuu_py_tuple_items(PySequence_Fast_GET_ITEM(seq, i), N, what, i, parts) && fill(parts, &a->strings, &e);
    if (ok) a->entries.push_back(e);
  }
  Py_DECREF(seq);
  return ok;
}

%}
%{
static bool gpuu_py_fill_deny(PyObject** p, std::deque<std::string>* s, gpuu_partition_deny* e) {
  return gpuu_py_cstr(p[0], "a backend id", s, &e->backend, false) &&
         gpuu_py_cstr(p[1], "a denied op", s, &e->op, false);
}

static bool gpuu_py_fill_pin(PyObject** p, std::deque<std::string>* s, gpuu_partition_pin* e) {
  return gpuu_py_cstr(p[0], "a pinned node name", s, &e->node, false) &&
         gpuu_py_cstr(p[1], "a backend id", s, &e->backend, false);
}

static bool gpuu_py_fill_backend_option(PyObject** p, std::deque<std::string>* s, gpuu_backend_option* e) {
  return gpuu_py_cstr(p[0], "a backend id", s, &e->backend, false) &&
         gpuu_py_cstr(p[1], "a backend option key", s, &e->key, false) &&
         gpuu_py_cstr(p[2], "a backend option value", s, &e->value, false);
}

static bool gpuu_py_fill_op_cost(PyObject** p, std::deque<std::string>* s, gpuu_partition_op_cost* e) {
  if (!gpuu_py_cstr(p[0], "an op name", s, &e->op, false) || !gpuu_py_cstr(p[1], "a backend id", s, &e->backend, false)) {
    return false;
  }
  e->cost = PyFloat_AsDouble(p[2]);
  return !PyErr_Occurred();
}
%}
%{
// One compile spec from a (key: str, value: bytes) tuple.
static bool gpuu_py_fill_spec(PyObject** p, std::deque<std::string>* s, gpuu_compile_spec* e) {
  if (!gpuu_py_cstr(p[0], "a compile spec key", s, &e->key, false)) return false;
  char* bytes = nullptr;
  Py_ssize_t n = 0;
  if (PyBytes_AsStringAndSize(p[1], &bytes, &n) < 0) return false;
  s->emplace_back(bytes, static_cast<size_t>(n));
  e->value = s->back().data();
  e->value_size = static_cast<size_t>(n);
  return true;
}

// The 0.3 compile-spec slots of gpuu_program_write_options, owned for the
// duration of one write: extra specs for every delegate, and per backend id.
struct GpuuPyWriteSpecs {
  GpuuPyArray<gpuu_compile_spec> shared;
  std::deque<GpuuPyArray<gpuu_compile_spec>> per_backend;
  std::deque<std::string> ids;
  std::vector<gpuu_backend_compile_specs> entries;

  bool fill(PyObject* shared_specs, PyObject* backend_specs, gpuu_program_write_options* o) {
    if (!gpuu_py_array<2>(shared_specs, "extra_shared_compile_specs", &shared, gpuu_py_fill_spec)) return false;
    if (backend_specs != Py_None) {
      PyObject* seq = PySequence_Fast(backend_specs, "backend_compile_specs must be a sequence of (id, specs)");
      if (!seq) return false;
      bool ok = true;
      for (Py_ssize_t i = 0; ok && i < PySequence_Fast_GET_SIZE(seq); ++i) {
        PyObject* parts[2];
        gpuu_backend_compile_specs e;
        gpuu_backend_compile_specs_init(&e);
        per_backend.emplace_back();
        ok = gpuu_py_tuple_items(PySequence_Fast_GET_ITEM(seq, i), 2, "backend_compile_specs", i, parts) &&
             gpuu_py_cstr(parts[0], "a backend id", &ids, &e.backend, false) &&
             gpuu_py_array<2>(parts[1], "a backend's compile specs", &per_backend.back(), gpuu_py_fill_spec);
        if (ok) {
          e.specs = per_backend.back().entries.empty() ? nullptr : per_backend.back().entries.data();
          e.count = per_backend.back().entries.size();
          entries.push_back(e);
        }
      }
      Py_DECREF(seq);
      if (!ok) return false;
    }
    o->extra_shared_compile_specs = shared.entries.empty() ? nullptr : shared.entries.data();
    o->extra_shared_compile_spec_count = shared.entries.size();
    o->backend_compile_specs = entries.empty() ? nullptr : entries.data();
    o->backend_compile_specs_count = entries.size();
    return true;
  }
};
%}
%inline %{
// gpuu_program_write with the compile-spec slots filled from Python lists:
// shared_specs [(key, bytes)], backend_specs [(backend id, [(key, bytes)])].
gpuu_status gpuu_py_program_write_with_specs(const gpuu_graph* graph, const gpuu_partition* partition,
                                             gpuu_program_write_options* options, PyObject* shared_specs,
                                             PyObject* backend_specs, const char* path) {
  if (!options) {
    PyErr_SetString(PyExc_TypeError, "options are required");
    return GPUU_ERROR_INVALID_ARGUMENT;
  }
  GpuuPyWriteSpecs specs;
  gpuu_program_write_options o = *options;
  if (!specs.fill(shared_specs, backend_specs, &o)) return GPUU_ERROR_INVALID_ARGUMENT;
  return gpuu_program_write(graph, partition, &o, path);
}
%}
%define GPUU_PARTITION_ARRAY(TYPE, PTR, COUNT, WHAT, N, FILL)
%typemap(in) (const TYPE* PTR, size_t COUNT) (GpuuPyArray<TYPE> arr) {
  if (!gpuu_py_array<N>($input, WHAT, &arr, FILL)) SWIG_fail;
  $1 = arr.entries.empty() ? nullptr : arr.entries.data();
  $2 = arr.entries.size();
}
%enddef
GPUU_PARTITION_ARRAY(gpuu_partition_deny, deny, deny_count, "deny", 2, gpuu_py_fill_deny)
GPUU_PARTITION_ARRAY(gpuu_partition_pin, pins, pin_count, "pins", 2, gpuu_py_fill_pin)
GPUU_PARTITION_ARRAY(gpuu_partition_op_cost, op_costs, op_cost_count, "op_costs", 3, gpuu_py_fill_op_cost)
GPUU_PARTITION_ARRAY(gpuu_backend_option, backend_options, backend_option_count, "backend_options", 3,
                     gpuu_py_fill_backend_option)
%typemap(in) (const char* const* backends, size_t backend_count)
    (std::deque<std::string> strings, std::vector<const char*> ids) {
  if ($input != Py_None) {
    PyObject* seq = PySequence_Fast($input, "backends must be a sequence of backend ids");
    if (!seq) SWIG_fail;
    bool ok = true;
    for (Py_ssize_t i = 0; ok && i < PySequence_Fast_GET_SIZE(seq); ++i) {
      const char* id = nullptr;
      ok = gpuu_py_cstr(PySequence_Fast_GET_ITEM(seq, i), "a backend id", &strings, &id, false);
      if (ok) ids.push_back(id);
    }
    Py_DECREF(seq);
    if (!ok) SWIG_fail;
  }
  $1 = ($1_ltype)(ids.empty() ? nullptr : ids.data());  // SWIG drops the pointee's const
  $2 = ids.size();
}
%inline %{
// gpuu_graph_partition with `options` (None: the defaults) plus the arrays.
gpuu_status gpuu_py_graph_partition(const gpuu_graph* graph, const gpuu_partition_options* options,
                                    const gpuu_partition_deny* deny, size_t deny_count,
                                    const gpuu_partition_pin* pins, size_t pin_count,
                                    const gpuu_partition_op_cost* op_costs, size_t op_cost_count,
                                    const char* const* backends, size_t backend_count,
                                    gpuu_partition** out) {
  gpuu_partition_options o;
  if (options) {
    o = *options;
  } else {
    gpuu_partition_options_init(&o);
  }
  o.deny = deny;
  o.deny_count = deny_count;
  o.pins = pins;
  o.pin_count = pin_count;
  o.op_costs = op_costs;
  o.op_cost_count = op_cost_count;
  o.backends = backends;
  o.backend_count = backend_count;
  return gpuu_graph_partition(graph, &o, out);
}
%}

%inline %{
// gpuu_session_create with `options` (None: the defaults) and the backend
// options as a sequence of (backend id, key, value) tuples.
gpuu_status gpuu_py_session_create(const gpuu_program* program, const gpuu_session_options* options,
                                   const gpuu_backend_option* backend_options, size_t backend_option_count,
                                   gpuu_session** out) {
  gpuu_session_options o;
  if (options) {
    o = *options;
  } else {
    gpuu_session_options_init(&o);
  }
  o.backend_options = backend_options;
  o.backend_option_count = backend_option_count;
  return gpuu_session_create(program, &o, out);
}
%}
