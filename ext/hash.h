/*
** hash.h — SHA-256 for trace provenance (hash.c).
*/
#ifndef PROFSUM_HASH_H
#define PROFSUM_HASH_H

#include "profsum_int.h"

typedef struct ProfsumSha256 {
  uint32_t h[8];              /* chaining state */
  uint64_t nTotal;            /* bytes hashed */
  unsigned char buf[64];      /* partial block */
  size_t nBuf;                /* bytes in buf */
} ProfsumSha256;

void profsumSha256Init(ProfsumSha256 *s);
void profsumSha256Update(ProfsumSha256 *s, const unsigned char *p, size_t n);
/* Finish and write 64 lower-case hex digits plus a NUL into zHex[65]. */
void profsumSha256Hex(ProfsumSha256 *s, char *zHex);

/* SHA-256 of the bytes of file zPath (as stored on disk), and its size.
** Errors: *pzErr = "'path': reason" (no function prefix). */
int profsumSha256File(const char *zPath, char *zHex, sqlite3_int64 *pnSize, char **pzErr);

#endif
