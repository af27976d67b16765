/*
** pbwire.c — the protobuf wire level under the XSpace decoder (contract
** in pbwire.h): a bounded window of input bytes over a plain file (pread,
** read ahead), memory or a gzip stream; varints, tags, lengths, fixed64,
** skipping any field by wire type (groups included); UTF-8 checks; the
** sticky error with its message.  The checks are those protobuf's parser
** makes.  Nothing here knows the XSpace messages: their names come from
** the caller (PbwIn.azMsg, xFieldName, xWhere).
*/
#include "profsum_int.h"
#include "profsum_reader.h"
#include "pbwire.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Bytes read ahead of a request from a plain file.  (Can be set at
** compile time: the fuzz target makes it tiny, so that small inputs move
** the window too.) */
#ifndef PROFSUM_XP_READAHEAD
# define PROFSUM_XP_READAHEAD (256*1024)
#endif
#define PBW_READAHEAD ((int64_t)PROFSUM_XP_READAHEAD)

/* ------------------------------------------------------------------ */
/* Errors                                                              */
/* ------------------------------------------------------------------ */

/* Name of field f of message kind eMsg for messages, or 0. */
static const char *pbwFieldName(const PbwIn *p, int eMsg, int f){
  return p->xFieldName ? p->xFieldName(eMsg, f) : 0;
}

/* Record the sticky error rc with the message "<func>: '<path>': byte
** <off> (<where>): <text>" (no byte part when off < 0; <where> from
** p->xWhere).  Returns rc (SQLITE_NOMEM when the message cannot be made),
** or the error already recorded. */
int pbwErr(PbwIn *p, int rc, int64_t off, const char *zFmt, ...){
  va_list ap;
  char *zMsg;
  char zWhere[200];
  if( p->rc ) return p->rc;
  va_start(ap, zFmt);
  zMsg = sqlite3_vmprintf(zFmt, ap);
  va_end(ap);
  p->rc = rc;
  if( zMsg==0 ){ p->rc = SQLITE_NOMEM; return SQLITE_NOMEM; }
  zWhere[0] = 0;
  if( p->xWhere ) p->xWhere(p->pWhereCtx, zWhere, sizeof(zWhere));
  if( off>=0 ){
    p->zErr = sqlite3_mprintf("%s: '%s': byte %lld%s: %s", p->zFunc, p->zPath,
                              (long long)off, zWhere, zMsg);
  }else{
    p->zErr = sqlite3_mprintf("%s: '%s': %s", p->zFunc, p->zPath, zMsg);
  }
  sqlite3_free(zMsg);
  if( p->zErr==0 ) p->rc = SQLITE_NOMEM;
  return p->rc;
}


/* Out of memory: the sticky error, without a message (SQLite says it). */
int pbwNoMem(PbwIn *p){
  if( p->rc==0 ) p->rc = SQLITE_NOMEM;
  return p->rc;
}


/* ------------------------------------------------------------------ */
/* Input                                                               */
/* ------------------------------------------------------------------ */

/* Grow the window buffer to at least n bytes (keeping its contents). */
static int pbwWinGrow(PbwIn *p, int64_t n){
  unsigned char *a;
  int64_t nNew = (n + 0xffff) & ~(int64_t)0xffff;
  if( nNew<=p->nWinAlloc ) return SQLITE_OK;
  a = sqlite3_realloc64(p->aWinBuf, (sqlite3_uint64)nNew);
  if( a==0 ) return pbwNoMem(p);
  p->aWinBuf = a;
  p->nWinAlloc = nNew;
  if( p->eSrc!=PBW_SRC_MEM ) p->aW = a;
  return SQLITE_OK;
}

/* FILE: read the window from off: n bytes at least, read ahead up to
** PBW_READAHEAD, never past the size the file had when opened.  Bytes that
** the size promised and pread does not deliver: the file shrank. */
static int pbwFileFill(PbwIn *p, int64_t off, int64_t n){
  int64_t want = n > PBW_READAHEAD ? n : PBW_READAHEAD;
  int64_t keep = 0, got;
  int rc;
  if( want > p->nFile - off ) want = p->nFile - off;
  if( want > p->nWinAlloc ){
    /* beyond the read-ahead size: exactly what is asked for */
    rc = pbwWinGrow(p, want);
    if( rc ) return rc;
  }
  if( off>=p->winOff && off < p->winOff + p->nWin ){
    keep = p->winOff + p->nWin - off;
    if( keep>want ) keep = want;
    memmove(p->aWinBuf, p->aWinBuf + (off - p->winOff), (size_t)keep);
  }
  p->winOff = off;
  p->nWin = keep;
  got = keep;
  while( got<want ){
    int64_t nAsk = want - got;
    ssize_t r;
    if( nAsk > 0x40000000 ) nAsk = 0x40000000;
    r = pread(p->fd, p->aWinBuf + got, (size_t)nAsk, (off_t)(off + got));
    if( r<0 ){
      if( errno==EINTR ) continue;
      p->nWin = 0;
      return pbwErr(p, PROFSUM_RC_FILEIO, -1, "read error at byte %lld (%s)",
                   (long long)(off + got), strerror(errno));
    }
    if( r==0 ) break;
    got += r;
  }
  p->nWin = got;
  if( got<n ){
    return pbwErr(p, PROFSUM_RC_FILEIO, -1, "the file shrank while it was read "
                 "(it had %lld bytes; it ends before byte %lld)",
                 (long long)p->nFile, (long long)(off + n));
  }
  return SQLITE_OK;
}

/* A message of gz.c without its leading "'<path>': " (pbwErr adds it). */
static const char *pbwSrcMsg(PbwIn *p, const char *zE){
  size_t n = strlen(p->zPath);
  if( zE[0]=='\'' && strncmp(zE+1, p->zPath, n)==0 && strncmp(zE+1+n, "': ", 3)==0 ){
    return zE + n + 4;
  }
  return zE;
}

/* GZIP: move the window forward to start at off (dropping the bytes
** before it, inflating and dropping any between), then inflate until it
** holds n bytes or the stream ends.  The buffer grows with the bytes that
** arrive, so a length that claims more than the stream has allocates no
** more than the stream gives. */
static int pbwGzFill(PbwIn *p, int64_t off, int64_t n){
  int rc;
  char *zE = 0;
  if( off < p->winOff ){
    return pbwErr(p, SQLITE_INTERNAL, off, "internal: gzip input read backwards");
  }
  if( p->nWinAlloc==0 ){
    rc = pbwWinGrow(p, 64*1024);
    if( rc ) return rc;
  }
  if( off <= p->winOff + p->nWin ){
    int64_t keep = p->winOff + p->nWin - off;
    memmove(p->aWinBuf, p->aWinBuf + (off - p->winOff), (size_t)keep);
    p->nWin = keep;
  }else{
    int64_t skip = off - (p->winOff + p->nWin);
    while( skip>0 && !p->gzEof ){
      size_t g = 0;
      int64_t nAsk = skip < p->nWinAlloc ? skip : p->nWinAlloc;
      rc = profsumSrcRead(p->pGz, p->aWinBuf, (size_t)nAsk, &g, &zE);
      if( rc ) goto gz_error;
      if( g==0 ) p->gzEof = 1;
      skip -= (int64_t)g;
    }
    p->nWin = 0;
  }
  p->winOff = off;
  while( p->nWin < n && !p->gzEof ){
    size_t g = 0;
    if( p->nWin==p->nWinAlloc ){
      int64_t nNew = p->nWinAlloc*2;
      if( nNew > n ) nNew = n;
      rc = pbwWinGrow(p, nNew);
      if( rc ) return rc;
    }
    rc = profsumSrcRead(p->pGz, p->aWinBuf + p->nWin, (size_t)(p->nWinAlloc - p->nWin), &g, &zE);
    if( rc ) goto gz_error;
    if( g==0 ) p->gzEof = 1;
    p->nWin += (int64_t)g;
  }
  return SQLITE_OK;
gz_error:
  if( zE ){
    pbwErr(p, rc, -1, "%s", pbwSrcMsg(p, zE));
    sqlite3_free(zE);
    return p->rc;
  }
  return pbwErr(p, rc, -1, "%s", sqlite3_errstr(rc));
}

/* Make the bytes [off, off+n) readable at p->aW[off - p->winOff]: as many
** of them as the input has; *pnGot says how many (n unless the input ends
** first).  Returns SQLITE_OK or an I/O error. */
int pbwFetch(PbwIn *p, int64_t off, int64_t n, int64_t *pnGot){
  int rc;
  if( off>=p->winOff && n <= p->winOff + p->nWin - off ){
    *pnGot = n;
    return SQLITE_OK;
  }
  switch( p->eSrc ){
    case PBW_SRC_MEM:
      *pnGot = off>=p->nFile ? 0 : (n < p->nFile - off ? n : p->nFile - off);
      return SQLITE_OK;
    case PBW_SRC_FILE: {
      int64_t nHave = off>=p->nFile ? 0 : p->nFile - off;
      if( n>nHave ) n = nHave;
      rc = pbwFileFill(p, off, n);
      break;
    }
    default:
      rc = pbwGzFill(p, off, n);
      if( rc==SQLITE_OK && p->nWin < n ) n = p->nWin;
      break;
  }
  *pnGot = rc ? 0 : n;
  return rc;
}

/* Pointer to byte off of the input (fetched before: inside the window). */
#define PBW_AT(p, off) ((p)->aW + ((off) - (p)->winOff))

/* ------------------------------------------------------------------ */
/* Wire format                                                         */
/* ------------------------------------------------------------------ */

/* Read a varint at *pPos (inside a message ending at end).  eMsg names the
** message for errors. */
int pbwVarintSlow(PbwIn *p, int64_t *pPos, int64_t end, uint64_t *pv, int eMsg){
  int64_t pos = *pPos, avail = end - pos, got;
  int rc, k;
  if( avail > 10 ) avail = 10;
  if( avail <= 0 ) return pbwErr(p, PBW_BAD, pos, "%s: truncated varint", p->azMsg[eMsg]);
  rc = pbwFetch(p, pos, avail, &got);
  if( rc ) return rc;
  k = pbwDecVarint(PBW_AT(p, pos), got, pv);
  if( k==0 ) return pbwErr(p, PBW_BAD, pos, "%s: truncated varint", p->azMsg[eMsg]);
  if( k<0 ) return pbwErr(p, PBW_BAD, pos, "%s: varint longer than 10 bytes", p->azMsg[eMsg]);
  *pPos = pos + k;
  return SQLITE_OK;
}

/* Read a tag: field number and wire type.  Rejected as protobuf does:
** field number 0, wire types 6 and 7, a tag over 5 bytes or 32 bits. */
int pbwTagSlow(PbwIn *p, int64_t *pPos, int64_t end, int *pField, int *pWt, int eMsg){
  int64_t pos = *pPos;
  uint64_t v;
  int rc = pbwVarint(p, pPos, end, &v, eMsg);
  if( rc ) return rc;
  if( *pPos - pos > 5 || v > 0xffffffffULL ){
    return pbwErr(p, PBW_BAD, pos, "%s: tag longer than 32 bits", p->azMsg[eMsg]);
  }
  *pField = (int)(v >> 3);
  *pWt = (int)(v & 7);
  if( *pField==0 ) return pbwErr(p, PBW_BAD, pos, "%s: field number 0", p->azMsg[eMsg]);
  if( *pWt>5 ){
    return pbwErr(p, PBW_BAD, pos, "%s: invalid wire type %d (field %d)", p->azMsg[eMsg], *pWt, *pField);
  }
  return SQLITE_OK;
}

/* Read the length of a length-delimited field whose tag is at tagOff and
** check it against the bytes left in its message (and protobuf's 2 GiB
** limit) before anything is read or allocated for it. */
int pbwLenSlow(PbwIn *p, int64_t *pPos, int64_t end, int64_t *pLen,
               int eMsg, int f, int64_t tagOff){
  uint64_t v;
  int rc = pbwVarint(p, pPos, end, &v, eMsg);
  const char *zF = pbwFieldName(p, eMsg, f);
  if( rc ) return rc;
  if( v > (uint64_t)PBW_MAX_LEN ){
    return pbwErr(p, PBW_BAD, tagOff, "%s field %d%s%s%s: length %llu is over protobuf's limit "
                 "(2 GiB)", p->azMsg[eMsg], f, zF ? " (" : "", zF ? zF : "", zF ? ")" : "",
                 (unsigned long long)v);
  }
  if( (int64_t)v > end - *pPos ){
    return pbwErr(p, PBW_BAD, tagOff, "%s field %d%s%s%s: length %llu runs past the end of %s "
                 "(%lld bytes left)", p->azMsg[eMsg], f, zF ? " (" : "", zF ? zF : "",
                 zF ? ")" : "", (unsigned long long)v,
                 eMsg==0 ? "the file" : "its message", (long long)(end - *pPos));
  }
  *pLen = (int64_t)v;
  return SQLITE_OK;
}

/* Make the n bytes at off readable; fewer is an error (a field that the
** data ends inside: only a gzip stream, whose end is not known before). */
int pbwNeedSlow(PbwIn *p, int64_t off, int64_t n, int64_t tagOff, int eMsg, int f){
  int64_t got;
  int rc = pbwFetch(p, off, n, &got);
  if( rc ) return rc;
  if( got<n ){
    const char *zF = pbwFieldName(p, eMsg, f);
    return pbwErr(p, PBW_BAD, tagOff, "%s field %d%s%s%s: length %lld runs past the end of "
                 "the data (%lld bytes left)", p->azMsg[eMsg], f, zF ? " (" : "",
                 zF ? zF : "", zF ? ")" : "", (long long)n, (long long)got);
  }
  return SQLITE_OK;
}

/* Skip len bytes at off after their length was checked: nothing to do
** but for a gzip stream at the top level, where the bytes must exist. */
static int pbwSkipBytes(PbwIn *p, int64_t off, int64_t len, int64_t tagOff, int eMsg, int f){
  while( p->eSrc==PBW_SRC_GZIP && len>0 ){
    int64_t n = len < 1024*1024 ? len : 1024*1024;
    int rc = pbwNeed(p, off, n, tagOff, eMsg, f);
    if( rc ) return rc;
    off += n;
    len -= n;
  }
  return SQLITE_OK;
}

/* Read a fixed64 (little-endian) at *pPos. */
int pbwFixed64(PbwIn *p, int64_t *pPos, int64_t end, uint64_t *pv, int eMsg){
  int64_t pos = *pPos, got;
  const unsigned char *a;
  int rc, i;
  uint64_t v = 0;
  if( end - pos < 8 ) return pbwErr(p, PBW_BAD, pos, "%s: truncated fixed64 field", p->azMsg[eMsg]);
  rc = pbwFetch(p, pos, 8, &got);
  if( rc ) return rc;
  if( got<8 ) return pbwErr(p, PBW_BAD, pos, "%s: truncated fixed64 field", p->azMsg[eMsg]);
  a = PBW_AT(p, pos);
  for(i=7; i>=0; i--) v = (v<<8) | a[i];
  *pv = v;
  *pPos = pos + 8;
  return SQLITE_OK;
}

/* Skip the value of a field with wire type wt whose tag (field f) was just
** read; depth is the nesting depth of the message it is in. */
int pbwSkip(PbwIn *p, int64_t *pPos, int64_t end, int f, int wt, int depth,
                  int eMsg, int64_t tagOff){
  uint64_t v;
  int64_t len;
  int rc;
  switch( wt ){
    case 0: return pbwVarint(p, pPos, end, &v, eMsg);
    case 1: return pbwFixed64(p, pPos, end, &v, eMsg);
    case 2:
      rc = pbwLen(p, pPos, end, &len, eMsg, f, tagOff);
      if( rc ) return rc;
      rc = pbwSkipBytes(p, *pPos, len, tagOff, eMsg, f);
      *pPos += len;
      return rc;
    case 5: {
      int64_t got;
      if( end - *pPos < 4 ) return pbwErr(p, PBW_BAD, *pPos, "%s: truncated fixed32 field", p->azMsg[eMsg]);
      rc = pbwFetch(p, *pPos, 4, &got);
      if( rc ) return rc;
      if( got<4 ) return pbwErr(p, PBW_BAD, *pPos, "%s: truncated fixed32 field", p->azMsg[eMsg]);
      *pPos += 4;
      return SQLITE_OK;
    }
    case 3:
      if( depth+1 > PBW_MAX_DEPTH ){
        return pbwErr(p, PBW_BAD, tagOff, "%s: groups nested deeper than %d levels",
                     p->azMsg[eMsg], PBW_MAX_DEPTH);
      }
      for(;;){
        int f2, wt2;
        int64_t t2 = *pPos;
        if( *pPos>=end ){
          return pbwErr(p, PBW_BAD, tagOff, "%s: group of field %d has no end-group tag",
                       p->azMsg[eMsg], f);
        }
        rc = pbwTag(p, pPos, end, &f2, &wt2, eMsg);
        if( rc ) return rc;
        if( wt2==4 ){
          if( f2!=f ){
            return pbwErr(p, PBW_BAD, t2, "%s: end-group tag of field %d closes the group of field %d",
                         p->azMsg[eMsg], f2, f);
          }
          return SQLITE_OK;
        }
        rc = pbwSkip(p, pPos, end, f2, wt2, depth+1, eMsg, t2);
        if( rc ) return rc;
      }
    default:   /* 4 */
      return pbwErr(p, PBW_BAD, tagOff, "%s: end-group tag of field %d without a group",
                   p->azMsg[eMsg], f);
  }
}

/* ------------------------------------------------------------------ */
/* UTF-8                                                               */
/* ------------------------------------------------------------------ */

/* Length of the well-formed UTF-8 sequence at a[0..n) (1..4), or, when it
** is not one, minus the length of its maximal invalid subpart (the bytes
** one U+FFFD replaces, as Python's decoder does). */
static int pbwUtf8Seq(const unsigned char *a, int64_t n){
  unsigned c = a[0], lo = 0x80, hi = 0xBF;
  if( c<0x80 ) return 1;
  if( c<0xC2 || c>0xF4 ) return -1;
  if( c<0xE0 ) return (n>=2 && a[1]>=0x80 && a[1]<=0xBF) ? 2 : -1;
  if( c==0xE0 ) lo = 0xA0;
  else if( c==0xED ) hi = 0x9F;
  else if( c==0xF0 ) lo = 0x90;
  else if( c==0xF4 ) hi = 0x8F;
  if( n<2 || a[1]<lo || a[1]>hi ) return -1;
  if( n<3 || a[2]<0x80 || a[2]>0xBF ) return -2;
  if( c<0xF0 ) return 3;
  if( n<4 || a[3]<0x80 || a[3]>0xBF ) return -3;
  return 4;
}

/* Offset of the first byte of a[0..n) that is not well-formed UTF-8, or n. */
int64_t pbwUtf8Check(const unsigned char *a, int64_t n){
  int64_t i = 0;
  while( i<n ){
    if( a[i]<0x80 ){
      /* ASCII runs, 8 bytes at a time */
      while( i+8<=n ){
        uint64_t w;
        memcpy(&w, a+i, 8);
        if( w & 0x8080808080808080ULL ) break;
        i += 8;
      }
      while( i<n && a[i]<0x80 ) i++;
    }else{
      int k = pbwUtf8Seq(a+i, n-i);
      if( k<0 ) return i;
      i += k;
    }
  }
  return n;
}

/* a[0..n) with every maximal invalid subpart replaced by U+FFFD, into o
** (room for n*3+1 bytes), NUL-terminated; *pn = its length. */
void pbwUtf8Fix(const unsigned char *a, int64_t n, unsigned char *o, int64_t *pn){
  int64_t i = 0, j = 0;
  while( i<n ){
    int k = pbwUtf8Seq(a+i, n-i);
    if( k>0 ){ memcpy(o+j, a+i, (size_t)k); j += k; i += k; }
    else{ o[j++] = 0xEF; o[j++] = 0xBF; o[j++] = 0xBD; i += -k; }
  }
  o[j] = 0;
  *pn = j;
}

/* ------------------------------------------------------------------ */

/* ------------------------------------------------------------------ */
/* Opening and closing                                                 */
/* ------------------------------------------------------------------ */

/* Set a gzip source up (the source's errors are prefixed as ours). */
static int pbwStartGzip(PbwIn *p, ProfsumSrc *pSrc){
  p->pGz = pSrc;
  p->eSrc = PBW_SRC_GZIP;
  p->nFile = INT64_MAX;
  p->winOff = 0;
  p->nWin = 0;
  return pbwWinGrow(p, 64*1024);
}

/* See pbwire.h. */
int pbwOpenFile(PbwIn *p, const char *zPath){
  struct stat st;
  unsigned char aMagic[2];
  ssize_t r;
  int rc;
  /* O_NONBLOCK: a FIFO is refused below at once instead of waiting in
  ** open() for a writer (a regular file's reads ignore the flag) */
  p->fd = open(zPath, O_RDONLY|O_CLOEXEC|O_NONBLOCK);
  if( p->fd<0 ){
    pbwErr(p, SQLITE_CANTOPEN, -1, "cannot open (%s)", strerror(errno));
    return SQLITE_CANTOPEN;
  }
  if( fstat(p->fd, &st)!=0 ){
    pbwErr(p, PROFSUM_RC_FILEIO, -1, "cannot stat (%s)", strerror(errno));
    return PROFSUM_RC_FILEIO;
  }
  if( S_ISDIR(st.st_mode) ){
    pbwErr(p, SQLITE_CANTOPEN, -1, "is a directory, not an XPlane file");
    return SQLITE_CANTOPEN;
  }
  if( !S_ISREG(st.st_mode) ){
    pbwErr(p, SQLITE_CANTOPEN, -1, "not a regular file (an XPlane file is read "
          "at several places: write it to a file first)");
    return SQLITE_CANTOPEN;
  }
  p->nFile = (int64_t)st.st_size;
  do{ r = pread(p->fd, aMagic, 2, 0); }while( r<0 && errno==EINTR );
  if( r<0 ){
    pbwErr(p, PROFSUM_RC_FILEIO, -1, "read error at byte 0 (%s)", strerror(errno));
    return PROFSUM_RC_FILEIO;
  }
  if( r==2 && aMagic[0]==0x1f && aMagic[1]==0x8b ){
    /* gzip: no XSpace starts so (0x1f is field 3 with wire type 7) */
    ProfsumSrc *pSrc = 0;
    char *zE = 0;
    close(p->fd);
    p->fd = -1;
    rc = profsumSrcOpenFile(zPath, &pSrc, &zE);
    if( rc ){
      if( zE ) pbwErr(p, rc, -1, "%s", pbwSrcMsg(p, zE));
      sqlite3_free(zE);
      return rc;
    }
    return pbwStartGzip(p, pSrc);
  }
  p->eSrc = PBW_SRC_FILE;
#ifdef POSIX_FADV_SEQUENTIAL
  (void)posix_fadvise(p->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
  return SQLITE_OK;
}

/* See pbwire.h. */
int pbwOpenMem(PbwIn *p, const unsigned char *a, int64_t n){
  if( n>=2 && a[0]==0x1f && a[1]==0x8b ){
    ProfsumSrc *pSrc = 0;
    char *zE = 0;
    int rc = profsumSrcOpenMem(a, (size_t)n, p->zPath, &pSrc, &zE);
    if( rc ){
      if( zE ) pbwErr(p, rc, -1, "%s", pbwSrcMsg(p, zE));
      sqlite3_free(zE);
      return rc;
    }
    profsumSrcNoThread(pSrc);
    return pbwStartGzip(p, pSrc);
  }
  p->eSrc = PBW_SRC_MEM;
  p->aW = a;
  p->winOff = 0;
  p->nWin = n;
  p->nFile = n;
  return SQLITE_OK;
}

/* See pbwire.h. */
void pbwWinDrop(PbwIn *p, int64_t nMax){
  if( p->eSrc==PBW_SRC_FILE && p->nWinAlloc > nMax ){
    sqlite3_free(p->aWinBuf);
    p->aWinBuf = 0;
    p->aW = 0;
    p->nWinAlloc = 0;
    p->nWin = 0;
  }
}

/* See pbwire.h. */
void pbwClose(PbwIn *p){
  if( p->fd>=0 ) close(p->fd);
  profsumSrcClose(p->pGz);
  sqlite3_free(p->aWinBuf);
  sqlite3_free(p->zErr);
  sqlite3_free(p->zPath);
  p->fd = -1;
  p->pGz = 0;
  p->aWinBuf = 0;
  p->zErr = 0;
  p->zPath = 0;
}
