/*
** hash.h — SHA-256 for trace provenance, MD5 and base64 for W&B artifact
** digests, and a fast 64-bit hash of bytes for in-memory hash tables
** (hash.c).
*/
#ifndef PROFSUM_HASH_H
#define PROFSUM_HASH_H

#include "profsum_int.h"

/* What SHA-256 and MD5 keep of the input between calls (both hash
** 64-byte blocks). */
typedef struct ProfsumHashBlock {
  uint64_t nTotal;            /* bytes hashed */
  unsigned char buf[64];      /* partial block */
  size_t nBuf;                /* bytes in buf */
} ProfsumHashBlock;

typedef struct ProfsumSha256 {
  uint32_t h[8];              /* chaining state */
  ProfsumHashBlock b;
} ProfsumSha256;

/* A 64-bit hash of z[0..n) for hash tables (not a digest: no defence
** against chosen inputs).  Eight bytes per step, each folded in by a
** 64x64->128-bit multiply, then a final mix, so every bit of the input
** reaches the low bits that pick a slot; several callers key entries by
** this hash and the length alone, so it must mix well.  About a byte per
** instruction on long texts (a byte-at-a-time hash showed in profiles);
** from 64 bytes on, four words per step in independent chains. */
uint64_t profsumBytesHash(const char *z, int64_t n);

void profsumSha256Init(ProfsumSha256 *s);
void profsumSha256Update(ProfsumSha256 *s, const unsigned char *p, size_t n);
/* Which block code hashes: "x86 SHA extensions" or "portable". */
const char *profsumSha256Impl(void);
/* Finish and write 64 lower-case hex digits plus a NUL into zHex[65]. */
void profsumSha256Hex(ProfsumSha256 *s, char *zHex);

/* SHA-256 of the bytes of file zPath (as stored on disk), and its size
** (in shabg.c, whose steps it takes in the calling thread).
** Errors: *pzErr = "'path': reason" (no function prefix). */
int profsumSha256File(const char *zPath, char *zHex, sqlite3_int64 *pnSize, char **pzErr);

/* ---------------------------------------------------------------------
** MD5 (RFC 1321).  W&B identifies artifact files by the base64 of their
** MD5 (wandb-http.md §3.2); it is an integrity check against corruption,
** not a defence against a hostile server (which sends the digests too).
*/
typedef struct ProfsumMd5 {
  uint32_t h[4];              /* chaining state */
  ProfsumHashBlock b;
} ProfsumMd5;

void profsumMd5Init(ProfsumMd5 *s);
void profsumMd5Update(ProfsumMd5 *s, const void *p, size_t n);
/* Finish: write the 16 digest bytes into aOut. */
void profsumMd5Final(ProfsumMd5 *s, unsigned char *aOut);

/* ---------------------------------------------------------------------
** Base64, standard alphabet (A-Z a-z 0-9 + /) with '=' padding.
**
** profsumBase64Encode(): write the encoding of the n bytes at p, plus a
**   NUL, into zOut, which must hold PROFSUM_BASE64_LEN(n)+1 bytes.  Returns
**   the length written (without the NUL).
** profsumBase64Decode(): decode the nIn characters at zIn (strict: length
**   a multiple of 4, padding only at the end, no whitespace) into aOut,
**   which holds nOutMax bytes.  Returns the decoded length, or -1 when the
**   text is not strict base64 or does not fit.
*/
#define PROFSUM_BASE64_LEN(n) ((((n)+2)/3)*4)
size_t profsumBase64Encode(const unsigned char *p, size_t n, char *zOut);
long profsumBase64Decode(const char *zIn, size_t nIn, unsigned char *aOut, size_t nOutMax);

#endif
