/*
** gzwrite.h — a gzip stream written to a file descriptor (gzwrite.c).
**
** Built with ISA-L (PROFSUM_USE_ISAL), the stream is compressed by ISA-L's
** igzip at its level 1: about fifteen times the speed of zlib's level 6
** on trace JSON, for a file about a quarter larger (docs/performance.md,
** "Design choices that matter for speed").  Without ISA-L, zlib's
** deflate at level 6.  Either way the output is one gzip member that any
** gzip reader opens (gzip, zlib, Perfetto, TensorBoard).
**
** Use: profsumGzOutOpen, then profsumGzOutPut any number of times, then
** profsumGzOutFinish once; profsumGzOutFree in every case.  After a failed
** call the stream is spoiled: profsumGzOutErrno says why (an errno of
** write(2), or 0 for a compression error) and later calls fail at once.
** The file descriptor stays the caller's (never closed here).
**
** Conventions: SQLite's allocator only; one stream per thread at a time,
** streams independent of each other.
*/
#ifndef PROFSUM_GZWRITE_H
#define PROFSUM_GZWRITE_H

#include <stddef.h>

typedef struct ProfsumGzOut ProfsumGzOut;

/* A new stream onto fd in *pp.  SQLITE_OK, or SQLITE_NOMEM (*pp = 0). */
int profsumGzOutOpen(int fd, ProfsumGzOut **pp);

/* Add the n bytes at p to the stream: gathered into pieces of 256 KiB,
** each compressed when full, the compressed bytes written to the file as
** they come.  0 on success, 1 on a failed write or compression error. */
int profsumGzOutPut(ProfsumGzOut *g, const void *p, size_t n);

/* End the stream: the compressed rest and the gzip trailer written.  0 on
** success, 1 on failure.  Nothing may be put after it. */
int profsumGzOutFinish(ProfsumGzOut *g);

/* Why the last call failed: the errno of write(2), or 0 when compression
** itself failed (or nothing failed). */
int profsumGzOutErrno(const ProfsumGzOut *g);

/* Release g (0 allowed). */
void profsumGzOutFree(ProfsumGzOut *g);

#endif /* PROFSUM_GZWRITE_H */
