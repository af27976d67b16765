/*
** strpool.h — a pool of interned byte strings: each distinct string is
** kept once, NUL-terminated, and named by its index (ids in the order the
** strings were first met), found again through an open-addressing hash.
*/
#ifndef PROFSUM_STRPOOL_H
#define PROFSUM_STRPOOL_H

#include "profsum_int.h"

typedef struct ProfsumStrPool {
  char **az;            /* the strings, NUL-terminated (owned) */
  int64_t *an;          /* their lengths */
  int32_t n, nAlloc;
  int32_t *aSlot;       /* hash slots: id + 1, 0 empty */
  int64_t nSlot;
  int64_t nBytes;       /* the strings' bytes in all */
  int64_t maxBytes;     /* > 0: the pool is full past this many bytes */
  int full;             /* set when a string was refused (maxBytes) */
} ProfsumStrPool;

/* The id of z[0..n) in *pId, interned when new.  With maxBytes > 0, *pId
** is -1 when the string is not there and the pool is full (or would be
** with it: the pool is marked full).  SQLITE_OK or SQLITE_NOMEM. */
int profsumStrPoolIntern(ProfsumStrPool *p, const char *z, int64_t n, int32_t *pId);

/* Free the pool's memory; the pool is empty after. */
void profsumStrPoolFree(ProfsumStrPool *p);

#endif /* PROFSUM_STRPOOL_H */
