#ifndef IRISGW_CPOSTGRES_SHIM_H
#define IRISGW_CPOSTGRES_SHIM_H
#include <libpq-fe.h>
#endif
