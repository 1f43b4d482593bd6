#ifndef IRISGW_CSQLITE_SHIM_H
#define IRISGW_CSQLITE_SHIM_H
#include <sqlite3.h>
// SQLITE_TRANSIENT and SQLITE_STATIC cast an integer to a function pointer, which Swift
// cannot import as a constant: one inline function each.
static inline sqlite3_destructor_type CSQLite_transient(void) { return SQLITE_TRANSIENT; }
static inline sqlite3_destructor_type CSQLite_static(void) { return SQLITE_STATIC; }
#endif
