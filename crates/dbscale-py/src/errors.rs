//! The one place where core errors become Python exceptions: `CoreError(kind, message, hint)`.
//! The Python package maps `kind` onto its own exception tree.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::PyErr;

create_exception!(
    _core,
    CoreError,
    PyException,
    "An error from the native engine: (kind, message, hint)."
);

pub fn to_py_err(error: dbscale_core::Error) -> PyErr {
    CoreError::new_err((error.kind(), error.to_string(), error.hint()))
}
