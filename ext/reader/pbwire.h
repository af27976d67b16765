/*
** pbwire.h — reading protobuf's wire format from a bounded window of
** input (pbwire.c), under the XSpace decoder of xplane_pb.c.
**
** The input is a plain file (pread into an owned buffer, read ahead and
** refilled as the reader moves), memory (the window is the whole input)
** or a gzip stream (ProfsumSrc of gz.c: the window only moves forward).
** Offsets are absolute everywhere: the byte at offset off, once fetched,
** is PBW_AT(p, off).  Reads are bounded by the message they are in (end)
** and by protobuf's limits; a length is checked against the bytes left
** before anything is read or allocated for it.
**
** Errors are sticky: the first one is kept in p->rc with its message in
** p->zErr ("<func>: '<path>': byte <off> (<where>): <text>"), and every
** later call that reports one returns it.  Message kinds are small ints
** chosen by the caller: p->azMsg names them, p->xFieldName names their
** fields, p->xWhere says where the reader is; kind 0 is the outermost
** message, whose end is the end of the file.
**
** Conventions: SQLite's allocator only; no globals.
*/
#ifndef PROFSUM_PBWIRE_H
#define PROFSUM_PBWIRE_H

#include "profsum_int.h"
#include "profsum_reader.h"

#include <endian.h>
#include <string.h>

/* Input sources (PbwIn.eSrc). */
#define PBW_SRC_FILE 0
#define PBW_SRC_MEM  1
#define PBW_SRC_GZIP 2

/* A decode error (the input is not valid protobuf of the expected kind). */
#define PBW_BAD PROFSUM_RC_DAMAGED
/* protobuf refuses a length of 2^31-1 or more. */
#define PBW_MAX_LEN    ((int64_t)0x7ffffffe)
/* protobuf's nesting limit (messages and groups). */
#define PBW_MAX_DEPTH  100

/* The input of a decoder and its sticky error.  Zero it, set fd to -1,
** the naming fields and zPath (sqlite3_malloc'd, freed by pbwClose),
** then open it with pbwOpenFile or pbwOpenMem. */
typedef struct PbwIn PbwIn;
struct PbwIn {
  const char *zFunc;       /* SQL function, for messages (static) */
  char *zPath;             /* path or name, for messages (owned) */
  const char *const *azMsg;                    /* name of each message kind */
  const char *(*xFieldName)(int eMsg, int f);  /* field name, or 0 */
  void (*xWhere)(const void *pCtx, char *z, int nz);  /* " (plane 0, ...)" */
  const void *pWhereCtx;   /* argument of xWhere */

  int rc;                  /* sticky error */
  char *zErr;              /* its message (owned) */

  int eSrc;                /* PBW_SRC_* */
  int fd;                  /* FILE: the descriptor */
  ProfsumSrc *pGz;         /* GZIP: the inflating source */
  int gzEof;               /* GZIP: the stream ended */
  int64_t nFile;           /* FILE/MEM: size; GZIP: INT64_MAX (unknown) */
  const unsigned char *aW; /* the window: bytes [winOff, winOff+nWin) */
  int64_t winOff, nWin;
  unsigned char *aWinBuf;  /* FILE/GZIP: the window's buffer (owned) */
  int64_t nWinAlloc;
};

/* Pointer to byte off of the input (fetched before: inside the window). */
#define PBW_AT(p, off) ((p)->aW + ((off) - (p)->winOff))

/* Open zPath: a gzip file (by its magic bytes) as a stream, any other
** regular file for pread.  SQLITE_OK, or an error code with the sticky
** error set (SQLITE_CANTOPEN, PROFSUM_RC_FILEIO, SQLITE_NOMEM, ...). */
int pbwOpenFile(PbwIn *p, const char *zPath);
/* Read a[0..n) (kept by the caller until pbwClose): gzip data as a
** stream, anything else directly.  SQLITE_OK or an error code. */
int pbwOpenMem(PbwIn *p, const unsigned char *a, int64_t n);
/* Let a plain file's window buffer go when it grew over nMax bytes. */
void pbwWinDrop(PbwIn *p, int64_t nMax);
/* Close the file or stream and free the window, zErr and zPath. */
void pbwClose(PbwIn *p);

/* Record the sticky error rc with its message (printf-style text);
** returns the sticky error code. */
int pbwErr(PbwIn *p, int rc, int64_t off, const char *zFmt, ...)
  __attribute__((format(printf, 4, 5)));
/* Out of memory: the sticky error, without a message.  Returns it. */
int pbwNoMem(PbwIn *p);

/* Make [off, off+n) readable at PBW_AT(p, off); *pnGot: how many of the
** bytes the input has (n unless it ends first).  SQLITE_OK or an I/O error. */
int pbwFetch(PbwIn *p, int64_t off, int64_t n, int64_t *pnGot);


/* The field readers: each reads at *pPos inside a message of kind eMsg
** ending at end, moves *pPos past what it read, and returns SQLITE_OK or
** the sticky error (PBW_BAD for bad data). */
int pbwVarintSlow(PbwIn *p, int64_t *pPos, int64_t end, uint64_t *pv, int eMsg);
/* A tag: *pField (> 0) and *pWt (0..5).  (pbwTag below: its inline fast
** path, this for the rest and every error.) */
int pbwTagSlow(PbwIn *p, int64_t *pPos, int64_t end, int *pField, int *pWt, int eMsg);
/* The length of field f (tag at tagOff), checked against end.  (pbwLen
** below: its inline fast path, this for the rest and every error.) */
int pbwLenSlow(PbwIn *p, int64_t *pPos, int64_t end, int64_t *pLen,
               int eMsg, int f, int64_t tagOff);
/* pbwNeed when the bytes are not all in the window (pbwNeed below). */
int pbwNeedSlow(PbwIn *p, int64_t off, int64_t n, int64_t tagOff, int eMsg, int f);
/* A fixed64, little-endian. */
int pbwFixed64(PbwIn *p, int64_t *pPos, int64_t end, uint64_t *pv, int eMsg);
/* Skip the value of field f with wire type wt (tag at tagOff); depth:
** nesting depth of the message it is in. */
int pbwSkip(PbwIn *p, int64_t *pPos, int64_t end, int f, int wt, int depth,
            int eMsg, int64_t tagOff);

/* Decode a varint from a[0..n) (n <= 10).  Returns the bytes used, 0 when
** a[0..n) ends inside it (truncated), -1 when it runs over 10 bytes.  Bits
** past 64 are dropped (as protobuf does). */
static inline int pbwDecVarint(const unsigned char *a, int64_t n, uint64_t *pv){
  uint64_t v = 0;
  int i;
  for(i=0; i<10; i++){
    if( i>=n ) return 0;
    v |= (uint64_t)(a[i] & 0x7f) << (7*i);
    if( a[i] < 0x80 ){ *pv = v; return i+1; }
  }
  return -1;
}

/* A varint read in place at a: n bytes of its message are left there
** (n > 0) and nRead (> 0) bytes are readable.  Returns the bytes it takes,
** or 0 when it is not whole in those bytes or runs over ten (the caller's
** slow path then reads it and says what is wrong).  When eight bytes are
** readable they are read at once: the first byte without its continuation
** bit ends the varint, and its 7-bit groups are packed by three shifts (no
** branch on the length, which varies from field to field). */
static inline int pbwVarintAt(const unsigned char *a, int64_t n, int64_t nRead, uint64_t *pv){
  int64_t m, i;
  uint64_t v;
  if( a[0]<0x80 ){ *pv = a[0]; return 1; }
  if( nRead>=8 ){
    uint64_t w, stop;
    memcpy(&w, a, 8);
    w = le64toh(w);
    stop = ~w & 0x8080808080808080ULL;
    if( stop ){
      int nb = __builtin_ctzll(stop)/8 + 1;        /* bytes of the varint */
      if( nb>n ) return 0;                         /* past its message */
      if( nb<8 ) w &= ((uint64_t)1 << (8*nb)) - 1;
      w = ((w & 0x7f007f007f007f00ULL) >> 1) | (w & 0x007f007f007f007fULL);
      w = ((w & 0x3fff00003fff0000ULL) >> 2) | (w & 0x00003fff00003fffULL);
      w = ((w & 0x0fffffff00000000ULL) >> 4) | (w & 0x000000000fffffffULL);
      *pv = w;
      return nb;
    }
  }
  m = n<nRead ? n : nRead;
  if( m>10 ) m = 10;
  v = a[0] & 0x7f;
  for(i=1; i<m; i++){
    v |= (uint64_t)(a[i] & 0x7f) << (7*i);
    if( a[i]<0x80 ){ *pv = v; return (int)i+1; }
  }
  return 0;
}

/* Read a varint at *pPos (message end: end) into *pv and move *pPos past
** it: a varint that ends inside the window and the message inline
** (pbwVarintAt), the rest (and every error: truncated, over ten bytes) in
** pbwVarintSlow. */
static inline int pbwVarint(PbwIn *p, int64_t *pPos, int64_t end, uint64_t *pv, int eMsg){
  int64_t pos = *pPos, rel = pos - p->winOff;
  if( rel>=0 && rel<p->nWin && pos<end ){
    int k = pbwVarintAt(p->aW + rel, end - pos, p->nWin - rel, pv);
    if( k ){ *pPos = pos + k; return SQLITE_OK; }
  }
  return pbwVarintSlow(p, pPos, end, pv, eMsg);
}

/* Read a tag at *pPos: *pField (> 0) and *pWt (0..5).  A one-byte tag
** of a valid field and wire type in the window inline; the rest, and
** every rejected tag, in pbwTagSlow. */
static inline int pbwTag(PbwIn *p, int64_t *pPos, int64_t end, int *pField, int *pWt, int eMsg){
  int64_t pos = *pPos, rel = pos - p->winOff;
  if( rel>=0 && rel<p->nWin && pos<end ){
    unsigned c = p->aW[rel];
    if( c<0x80 && (c>>3)!=0 && (c&7)<=5 ){
      *pField = (int)(c>>3);
      *pWt = (int)(c&7);
      *pPos = pos+1;
      return SQLITE_OK;
    }
  }
  return pbwTagSlow(p, pPos, end, pField, pWt, eMsg);
}

/* Read the length of a length-delimited field whose tag is at tagOff and
** check it against the bytes left in its message (and protobuf's 2 GiB
** limit) before anything is read or allocated for it: a length that fits
** inline, the rest and every error in pbwLenSlow. */
static inline int pbwLen(PbwIn *p, int64_t *pPos, int64_t end, int64_t *pLen,
                         int eMsg, int f, int64_t tagOff){
  int64_t pos = *pPos, rel = pos - p->winOff;
  if( rel>=0 && rel+2<=p->nWin && pos+2<=end ){
    const unsigned char *a = p->aW + rel;
    int64_t v = -1, k = 0;
    if( a[0]<0x80 ){ v = a[0]; k = 1; }
    else if( a[1]<0x80 ){ v = (int64_t)(a[0]&0x7f) | ((int64_t)a[1]<<7); k = 2; }
    if( v>=0 && v <= end - (pos+k) ){
      *pLen = v;
      *pPos = pos+k;
      return SQLITE_OK;
    }
  }
  return pbwLenSlow(p, pPos, end, pLen, eMsg, f, tagOff);
}

/* Make the n bytes at off readable; fewer is an error naming field f of
** eMsg whose tag is at tagOff.  Bytes in the window already: inline. */
static inline int pbwNeed(PbwIn *p, int64_t off, int64_t n, int64_t tagOff, int eMsg, int f){
  if( off>=p->winOff && n <= p->winOff + p->nWin - off ) return SQLITE_OK;
  return pbwNeedSlow(p, off, n, tagOff, eMsg, f);
}

/* Offset of the first byte of a[0..n) that is not well-formed UTF-8, or n. */
int64_t pbwUtf8Check(const unsigned char *a, int64_t n);
/* a[0..n) with every maximal invalid subpart replaced by U+FFFD (as
** Python's decoder does), into o (room for n*3+1 bytes), NUL-terminated;
** *pn = its length. */
void pbwUtf8Fix(const unsigned char *a, int64_t n, unsigned char *o, int64_t *pn);

#endif /* PROFSUM_PBWIRE_H */
