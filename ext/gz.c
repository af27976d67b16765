/*
** gz.c — the byte source under the trace scanner: a file (plain or gzip) or
** a memory buffer, delivered as a stream of decompressed bytes.
**
** gzip is detected by its magic bytes (1f 8b), never by the file name.
** Multi-member gzip (concatenated members, as `cat a.gz b.gz` or pigz
** produce) is decoded member after member; trailing zero padding after the
** last member is accepted; any other trailing bytes are an error.  A gzip
** stream that ends before its last member is complete is an error
** ("truncated gzip data"), as is corrupt data.
**
** Memory: one fixed input buffer (PROFSUM_GZ_INBUF bytes) plus zlib's state
** (about 44 KiB); nothing grows with the file.
**
** Errors are returned as sqlite3_malloc'd text without the SQL function
** prefix, e.g. "'run1.json.gz': gzip data error at byte 18234 (invalid
** stored block lengths)"; the caller prefixes the function name.
*/
#include "profsum_int.h"
#include "profsum_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define PROFSUM_GZ_INBUF (256*1024)

struct ProfsumSrc {
  int fd;                       /* File descriptor, or -1 for a memory source */
  char *zPath;                  /* Path as given (for messages) */
  const unsigned char *aMem;    /* Memory source: the bytes (not owned) */
  size_t nMem;                  /* Memory source: number of bytes */
  size_t iMem;                  /* Memory source: bytes handed out so far */
  int isGzip;                   /* 1 if the data is gzip */
  int zInit;                    /* 1 once inflateInit2 succeeded */
  int zEnd;                     /* 1 after Z_STREAM_END of the current member */
  int eof;                      /* 1 when the raw input is exhausted */
  z_stream z;                   /* Inflate state (gzip only) */
  int64_t nRawIn;               /* Raw (compressed) bytes read so far */
  int64_t nFileSize;            /* Size of the file in bytes (or nMem) */
  unsigned char *aIn;           /* Raw input buffer (PROFSUM_GZ_INBUF) */
  size_t nIn;                   /* Valid bytes in aIn */
  size_t iIn;                   /* Next unread byte in aIn (plain mode) */
};

/* Fill aIn from the raw source.  Returns SQLITE_OK (nIn==0 at EOF) or an
** error with *pzErr set. */
static int srcFillRaw(ProfsumSrc *p, char **pzErr){
  p->iIn = 0;
  p->nIn = 0;
  if( p->eof ) return SQLITE_OK;
  if( p->fd<0 ){
    size_t n = p->nMem - p->iMem;
    if( n>PROFSUM_GZ_INBUF ) n = PROFSUM_GZ_INBUF;
    memcpy(p->aIn, p->aMem + p->iMem, n);
    p->iMem += n;
    p->nIn = n;
  }else{
    for(;;){
      ssize_t got = read(p->fd, p->aIn, PROFSUM_GZ_INBUF);
      if( got<0 ){
        if( errno==EINTR ) continue;
        *pzErr = sqlite3_mprintf("'%s': read error at byte %lld (%s)",
                                 p->zPath, (long long)p->nRawIn, strerror(errno));
        return SQLITE_IOERR;
      }
      p->nIn = (size_t)got;
      break;
    }
  }
  if( p->nIn==0 ) p->eof = 1;
  p->nRawIn += (int64_t)p->nIn;
  return SQLITE_OK;
}

/* Allocate the source object and detect the format from the first bytes. */
static int srcStart(ProfsumSrc *p, char **pzErr){
  int rc;
  p->aIn = sqlite3_malloc64(PROFSUM_GZ_INBUF);
  if( p->aIn==0 ) return SQLITE_NOMEM;
  rc = srcFillRaw(p, pzErr);
  if( rc ) return rc;
  if( p->nIn==0 ){
    *pzErr = sqlite3_mprintf("'%s': empty file", p->zPath);
    return SQLITE_ERROR;
  }
  if( p->nIn>=2 && p->aIn[0]==0x1f && p->aIn[1]==0x8b ){
    p->isGzip = 1;
    memset(&p->z, 0, sizeof(p->z));
    if( inflateInit2(&p->z, 15+16)!=Z_OK ) return SQLITE_NOMEM;
    p->zInit = 1;
    p->z.next_in = p->aIn;
    p->z.avail_in = (uInt)p->nIn;
  }
  return SQLITE_OK;
}

/* See profsum_reader.h. */
int profsumSrcOpenFile(const char *zPath, ProfsumSrc **pp, char **pzErr){
  ProfsumSrc *p;
  struct stat st;
  int rc;
  *pp = 0;
  p = sqlite3_malloc64(sizeof(*p));
  if( p==0 ) return SQLITE_NOMEM;
  memset(p, 0, sizeof(*p));
  p->fd = -1;
  p->zPath = sqlite3_mprintf("%s", zPath);
  if( p->zPath==0 ){ sqlite3_free(p); return SQLITE_NOMEM; }
  p->fd = open(zPath, O_RDONLY|O_CLOEXEC);
  if( p->fd<0 ){
    *pzErr = sqlite3_mprintf("'%s': cannot open (%s)", zPath, strerror(errno));
    profsumSrcClose(p);
    return SQLITE_CANTOPEN;
  }
  if( fstat(p->fd, &st)!=0 ){
    *pzErr = sqlite3_mprintf("'%s': cannot stat (%s)", zPath, strerror(errno));
    profsumSrcClose(p);
    return SQLITE_IOERR;
  }
  if( S_ISDIR(st.st_mode) ){
    *pzErr = sqlite3_mprintf("'%s': is a directory, not a trace file", zPath);
    profsumSrcClose(p);
    return SQLITE_CANTOPEN;
  }
  p->nFileSize = (int64_t)st.st_size;
#ifdef POSIX_FADV_SEQUENTIAL
  (void)posix_fadvise(p->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
  rc = srcStart(p, pzErr);
  if( rc ){ profsumSrcClose(p); return rc; }
  *pp = p;
  return SQLITE_OK;
}

/* See profsum_reader.h. */
int profsumSrcOpenMem(const unsigned char *a, size_t n, const char *zName,
                      ProfsumSrc **pp, char **pzErr){
  ProfsumSrc *p;
  int rc;
  *pp = 0;
  p = sqlite3_malloc64(sizeof(*p));
  if( p==0 ) return SQLITE_NOMEM;
  memset(p, 0, sizeof(*p));
  p->fd = -1;
  p->aMem = a;
  p->nMem = n;
  p->nFileSize = (int64_t)n;
  p->zPath = sqlite3_mprintf("%s", zName ? zName : "<memory>");
  if( p->zPath==0 ){ sqlite3_free(p); return SQLITE_NOMEM; }
  rc = srcStart(p, pzErr);
  if( rc ){ profsumSrcClose(p); return rc; }
  *pp = p;
  return SQLITE_OK;
}

/* True if every byte of a[0..n) is zero. */
static int allZero(const unsigned char *a, size_t n){
  size_t i;
  for(i=0; i<n; i++) if( a[i] ) return 0;
  return 1;
}

/* See profsum_reader.h. */
int profsumSrcRead(ProfsumSrc *p, unsigned char *aOut, size_t nOut,
                   size_t *pnGot, char **pzErr){
  int rc;
  *pnGot = 0;
  if( !p->isGzip ){
    while( *pnGot==0 ){
      size_t n;
      if( p->iIn>=p->nIn ){
        rc = srcFillRaw(p, pzErr);
        if( rc ) return rc;
        if( p->nIn==0 ) return SQLITE_OK;
      }
      n = p->nIn - p->iIn;
      if( n>nOut ) n = nOut;
      memcpy(aOut, p->aIn + p->iIn, n);
      p->iIn += n;
      *pnGot = n;
    }
    return SQLITE_OK;
  }
  if( nOut>(size_t)0x40000000 ) nOut = 0x40000000;
  p->z.next_out = aOut;
  p->z.avail_out = (uInt)nOut;
  while( p->z.avail_out>0 ){
    int zrc;
    if( p->zEnd ){
      /* Between members: more input means another member (or padding). */
      if( p->z.avail_in==0 ){
        rc = srcFillRaw(p, pzErr);
        if( rc ) return rc;
        if( p->nIn==0 ) break;                 /* clean end of the stream */
        p->z.next_in = p->aIn;
        p->z.avail_in = (uInt)p->nIn;
      }
      if( p->z.next_in[0]!=0x1f ){
        if( allZero(p->z.next_in, p->z.avail_in) ){
          p->z.avail_in = 0;                   /* zero padding: skip it */
          continue;
        }
        *pzErr = sqlite3_mprintf("'%s': trailing garbage after gzip data at byte %lld",
            p->zPath, (long long)(p->nRawIn - p->z.avail_in));
        return SQLITE_CORRUPT;
      }
      if( inflateReset(&p->z)!=Z_OK ) return SQLITE_NOMEM;
      p->zEnd = 0;
    }
    if( p->z.avail_in==0 ){
      rc = srcFillRaw(p, pzErr);
      if( rc ) return rc;
      if( p->nIn==0 ){
        *pzErr = sqlite3_mprintf("'%s': truncated gzip data at byte %lld "
            "(the compressed stream ends before its end marker)",
            p->zPath, (long long)p->nRawIn);
        return SQLITE_CORRUPT;
      }
      p->z.next_in = p->aIn;
      p->z.avail_in = (uInt)p->nIn;
    }
    zrc = inflate(&p->z, Z_NO_FLUSH);
    if( zrc==Z_STREAM_END ){
      p->zEnd = 1;
    }else if( zrc==Z_BUF_ERROR ){
      /* No progress possible: needs more input (handled above) or output. */
      if( p->z.avail_out==0 ) break;
    }else if( zrc!=Z_OK ){
      *pzErr = sqlite3_mprintf("'%s': gzip data error at byte %lld (%s)",
          p->zPath, (long long)(p->nRawIn - p->z.avail_in),
          p->z.msg ? p->z.msg : zError(zrc));
      return zrc==Z_MEM_ERROR ? SQLITE_NOMEM : SQLITE_CORRUPT;
    }
  }
  *pnGot = nOut - p->z.avail_out;
  return SQLITE_OK;
}

/* See profsum_reader.h. */
int profsumSrcIsGzip(ProfsumSrc *p){ return p->isGzip; }

/* See profsum_reader.h. */
int64_t profsumSrcFileSize(ProfsumSrc *p){ return p->nFileSize; }

/* See profsum_reader.h. */
int64_t profsumSrcRawPos(ProfsumSrc *p){
  return p->nRawIn - (p->isGzip ? (int64_t)p->z.avail_in : (int64_t)(p->nIn - p->iIn));
}

/* See profsum_reader.h. */
const char *profsumSrcPath(ProfsumSrc *p){ return p->zPath; }

/* See profsum_reader.h. */
void profsumSrcClose(ProfsumSrc *p){
  if( p==0 ) return;
  if( p->zInit ) inflateEnd(&p->z);
  if( p->fd>=0 ) close(p->fd);
  sqlite3_free(p->aIn);
  sqlite3_free(p->zPath);
  sqlite3_free(p);
}
