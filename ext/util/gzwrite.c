/*
** gzwrite.c — a gzip stream written to a file descriptor: ISA-L's igzip at
** level 1 when built with it, else zlib's deflate at level 6.  Contract in
** gzwrite.h.
*/
#include "gzwrite.h"
#include "profsum_int.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>
#ifdef PROFSUM_USE_ISAL
#include <isa-l/igzip_lib.h>
#else
#include <zlib.h>
#endif

#define GZ_OUT_BUF 65536
/* Input is gathered into pieces of this size before it is compressed:
** igzip, called with a few hundred bytes at a time (an event each), moved
** about 16 KiB of its own state per call. */
#define GZ_IN_BUF (256*1024)
/* The most given to the compressor at once: its input counts are 32 bits. */
#define GZ_PIECE ((size_t)1<<30)

struct ProfsumGzOut {
  int fd;
  int bFailed;              /* a call failed: the stream is spoiled */
  int err;                  /* errno of the failed write, 0 otherwise */
#ifdef PROFSUM_USE_ISAL
  struct isal_zstream z;
  unsigned char *aLevel;    /* level 1's working memory (ISAL_DEF_LVL1_DEFAULT) */
#else
  z_stream z;
  int bInit;                /* deflateInit2 succeeded */
#endif
  size_t nIn;               /* bytes waiting in aIn */
  unsigned char aIn[GZ_IN_BUF];
  unsigned char aOut[GZ_OUT_BUF];
};

/* Write the n bytes of g->aOut to the file.  0 or 1 (g->err set). */
static int gzDrain(ProfsumGzOut *g, size_t n){
  size_t off = 0;
  while( off<n ){
    ssize_t w = write(g->fd, g->aOut+off, n-off);
    if( w<0 ){
      if( errno==EINTR ) continue;
      g->err = errno;
      g->bFailed = 1;
      return 1;
    }
    off += (size_t)w;
  }
  return 0;
}

#ifdef PROFSUM_USE_ISAL

/* Compress what is in g->z's input (all of it, and the end of the stream
** when bEnd), writing each full buffer.  0 or 1. */
static int gzRun(ProfsumGzOut *g, int bEnd){
  g->z.end_of_stream = (uint16_t)(bEnd ? 1 : 0);
  for(;;){
    int rc;
    g->z.next_out = g->aOut;
    g->z.avail_out = sizeof(g->aOut);
    rc = isal_deflate(&g->z);
    if( rc!=COMP_OK ){ g->bFailed = 1; return 1; }
    if( gzDrain(g, sizeof(g->aOut) - g->z.avail_out) ) return 1;
    if( bEnd ){
      if( g->z.internal_state.state==ZSTATE_END ) return 0;
    }else if( g->z.avail_in==0 && g->z.avail_out>0 ){
      return 0;
    }
  }
}

/* See gzwrite.h. */
int profsumGzOutOpen(int fd, ProfsumGzOut **pp){
  ProfsumGzOut *g = profsumMallocZero(sizeof(*g));
  *pp = 0;
  if( g==0 ) return SQLITE_NOMEM;
  g->aLevel = profsumMallocZero(ISAL_DEF_LVL1_DEFAULT);
  if( g->aLevel==0 ){ sqlite3_free(g); return SQLITE_NOMEM; }
  g->fd = fd;
  isal_deflate_init(&g->z);
  g->z.level = 1;
  g->z.level_buf = g->aLevel;
  g->z.level_buf_size = ISAL_DEF_LVL1_DEFAULT;
  g->z.gzip_flag = IGZIP_GZIP;
  g->z.flush = NO_FLUSH;
  *pp = g;
  return SQLITE_OK;
}

/* Compress the n bytes at p (n <= GZ_PIECE; not the end).  0 or 1. */
static int gzCompress(ProfsumGzOut *g, const void *p, size_t n){
  g->z.next_in = (uint8_t*)p;
  g->z.avail_in = (uint32_t)n;
  return gzRun(g, 0);
}

/* The end of the stream.  0 or 1. */
static int gzEnd(ProfsumGzOut *g){
  g->z.next_in = 0;
  g->z.avail_in = 0;
  return gzRun(g, 1);
}

/* See gzwrite.h. */
void profsumGzOutFree(ProfsumGzOut *g){
  if( g==0 ) return;
  sqlite3_free(g->aLevel);
  sqlite3_free(g);
}

#else /* zlib */

/* Deflate with flush (Z_NO_FLUSH or Z_FINISH) until the input is taken
** (and, for Z_FINISH, the stream ended), writing each buffer.  0 or 1. */
static int gzRun(ProfsumGzOut *g, int flush){
  int zrc;
  do{
    g->z.next_out = g->aOut;
    g->z.avail_out = sizeof(g->aOut);
    zrc = deflate(&g->z, flush);
    if( zrc==Z_STREAM_ERROR ){ g->bFailed = 1; return 1; }
    if( gzDrain(g, sizeof(g->aOut) - g->z.avail_out) ) return 1;
  }while( g->z.avail_out==0 || (flush==Z_FINISH && zrc!=Z_STREAM_END) );
  return 0;
}

/* See gzwrite.h. */
int profsumGzOutOpen(int fd, ProfsumGzOut **pp){
  ProfsumGzOut *g = profsumMallocZero(sizeof(*g));
  *pp = 0;
  if( g==0 ) return SQLITE_NOMEM;
  g->fd = fd;
  if( deflateInit2(&g->z, 6, Z_DEFLATED, 15+16, 8, Z_DEFAULT_STRATEGY)!=Z_OK ){
    sqlite3_free(g);
    return SQLITE_NOMEM;
  }
  g->bInit = 1;
  *pp = g;
  return SQLITE_OK;
}

/* Compress the n bytes at p (n <= GZ_PIECE; not the end).  0 or 1. */
static int gzCompress(ProfsumGzOut *g, const void *p, size_t n){
  g->z.next_in = (Bytef*)p;
  g->z.avail_in = (uInt)n;
  while( g->z.avail_in>0 ){
    if( gzRun(g, Z_NO_FLUSH) ) return 1;
  }
  return 0;
}

/* The end of the stream.  0 or 1. */
static int gzEnd(ProfsumGzOut *g){
  return gzRun(g, Z_FINISH);
}

/* See gzwrite.h. */
void profsumGzOutFree(ProfsumGzOut *g){
  if( g==0 ) return;
  if( g->bInit ) deflateEnd(&g->z);
  sqlite3_free(g);
}

#endif

/* See gzwrite.h. */
int profsumGzOutPut(ProfsumGzOut *g, const void *p, size_t n){
  const unsigned char *a = (const unsigned char*)p;
  if( g->bFailed ) return 1;
  if( g->nIn + n <= sizeof(g->aIn) ){
    memcpy(g->aIn + g->nIn, a, n);
    g->nIn += n;
    return 0;
  }
  if( g->nIn>0 ){
    /* fill the piece up and compress it */
    size_t k = sizeof(g->aIn) - g->nIn;
    memcpy(g->aIn + g->nIn, a, k);
    a += k; n -= k;
    g->nIn = 0;
    if( gzCompress(g, g->aIn, sizeof(g->aIn)) ) return 1;
  }
  while( n>=sizeof(g->aIn) ){
    size_t k = n > GZ_PIECE ? GZ_PIECE : n;
    if( gzCompress(g, a, k) ) return 1;
    a += k; n -= k;
  }
  memcpy(g->aIn, a, n);
  g->nIn = n;
  return 0;
}

/* See gzwrite.h. */
int profsumGzOutFinish(ProfsumGzOut *g){
  if( g->bFailed ) return 1;
  if( g->nIn>0 ){
    size_t n = g->nIn;
    g->nIn = 0;
    if( gzCompress(g, g->aIn, n) ) return 1;
  }
  return gzEnd(g);
}

/* See gzwrite.h. */
int profsumGzOutErrno(const ProfsumGzOut *g){
  return g ? g->err : 0;
}
