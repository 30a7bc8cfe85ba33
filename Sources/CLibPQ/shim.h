#ifndef RELATE_CLIBPQ_SHIM_H
#define RELATE_CLIBPQ_SHIM_H
#include <libpq-fe.h>
#endif
