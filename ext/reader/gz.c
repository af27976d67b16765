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
** Memory: one fixed input buffer (PROFSUM_GZ_INBUF bytes) plus the
** inflater's state (zlib about 44 KiB, ISA-L 87 KiB), plus, in threaded
** mode, a ring of 4 or PROFSUM_RING_N buffers of 32 to 256 KiB each, sized by
** the file (ringSlotCount, ringSlotSize); nothing grows with the length of
** the stream.
**
** Threads.  For a gzip file of PROFSUM_THREAD_MIN bytes or more, a producer
** thread reads and inflates into the ring while the caller parses the
** previous buffer: on two cores decompression and parsing overlap.  The
** bytes delivered are the same in both modes (set PROFSUM_THREADS=0 in the
** environment to disable the thread, e.g. to compare).  Errors met by the
** producer are delivered in stream order, after the good bytes before them.
** A reader that moves to a thread of its own (the JSON scan pipe) may hand
** the inflating back to itself (profsumSrcRingEnd): the producer stops
** after the slot it is filling, the slots filled are read first, then the
** reader inflates as it reads, straight into its own buffer.
**
** SHA-256.  profsumSrcHashInit() makes the source hash the raw file bytes
** as it reads them (in the producer thread when there is one).  A reader
** on a thread whose consumer waits at times may leave the hashing behind
** (profsumSrcHashBehind): the rest of the file, from where the reader is,
** is then hashed by a second read (shabg.c), a step at a time by a thread
** that would wait (profsumSrcHashSome) or by a thread at the idle
** scheduling class, and finished by profsumSrcHashHex().
**
** Stop checks.  A source asks the stop check of the thread that opened it
** (profsumStopPush, profsum_reader.h) every PROFSUM_STOP_BYTES bytes it
** delivers, and fails with SQLITE_INTERRUPT when told to stop: every
** reader of a trace hears an interrupt within a few MB of data.
**
** Errors are returned as sqlite3_malloc'd text without the SQL function
** prefix, e.g. "'run1.json.gz': gzip data error at byte 18234 (invalid
** stored block lengths)"; the caller prefixes the function name.
**
** Damaged gzip (corrupt data, a truncated stream, trailing garbage) is
** PROFSUM_RC_DAMAGED, a read error PROFSUM_RC_FILEIO (profsum_int.h says
** why neither is the plain SQLite code).
*/
#include "profsum_int.h"
#include "profsum_reader.h"
#include "hash.h"
#include "shabg.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#ifdef PROFSUM_USE_ISAL
# include <isa-l/igzip_lib.h>
#endif

/* Raw bytes per read(): as fast as larger reads, and less memory touched
** in every scan (docs/performance.md, appendix). */
#define PROFSUM_GZ_INBUF (64*1024)
/* Ring geometry (chosen by measurement: docs/performance.md,
** appendix): small buffers overlap inflate and parse from the first buffer
** on, so a small trace gains from the thread as a large one does.  A
** buffer is 1/32 of the gzip file rounded up to 16 KiB, from 32 to 256 KiB
** (ringSlotSize): 256 KiB for large files, where smaller buffers mean more
** hand-overs; below PROFSUM_SMALL_FILE bytes on disk the ring has 4
** buffers, as more held memory at the import's peak without gain. */
#define PROFSUM_RING_N   8                   /* buffers in the ring, at most */
#define PROFSUM_RING_MIN (32*1024)           /* bytes per ring buffer: at least */
#define PROFSUM_RING_MAX (256*1024)          /* ... and at most */
#define PROFSUM_THREAD_MIN (128*1024)        /* gzip files smaller: no thread */

/* One buffer of the ring. */
typedef struct RingSlot {
  unsigned char *a;             /* Ring.szSlot bytes */
  size_t n;                     /* valid bytes */
  int rc;                       /* SQLITE_OK, or the error after the bytes */
  char *zErr;                   /* error text (owned) when rc != OK */
  int eof;                      /* 1: the stream ends after these bytes */
  int64_t nCpuNs;               /* the producer's CPU time once it was
                                ** filled (ns) */
} RingSlot;

/* The producer/consumer state of threaded mode. */
typedef struct Ring {
  pthread_t thread;             /* the producer */
  pthread_mutex_t mu;
  pthread_cond_t cv;            /* signalled when a waiter can go on */
  RingSlot aSlot[PROFSUM_RING_N];
  int nSlot;                    /* slots in use, from aSlot[0] (ringSlotCount) */
  size_t szSlot;                /* bytes per slot (ringSlotSize) */
  int iHead;                    /* next slot the consumer reads */
  int nFull;                    /* filled slots not yet consumed */
  size_t iOff;                  /* consumer offset inside aSlot[iHead] */
  int stop;                     /* consumer asks the producer to stop */
  int handBack;                 /* consumer asks it to stop where it is,
                                ** the stream left to the consumer */
  int handedBack;               /* it did: after the full slots, the
                                ** consumer reads directly */
  int done;                     /* producer finished (EOF or error) */
  int joined;                   /* the thread was joined already */
  int prodWait;                 /* the producer waits for free slots */
  int consWait;                 /* the consumer waits for a full slot */
} Ring;

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
  int isRegular;                /* a regular file (pread works) */
  unsigned char *aIn;           /* Raw input buffer (PROFSUM_GZ_INBUF) */
  size_t nIn;                   /* Valid bytes in aIn */
  size_t iIn;                   /* Next unread byte in aIn (plain mode) */
  ProfsumSha256 *pSha;          /* hashing the raw bytes, or NULL */
  size_t nShaPending;           /* aIn[0..nShaPending) not hashed yet (see
                                ** profsumSrcHashInit) */
  ProfsumShaBg *pShaBg;         /* the hash left behind the reading
                                ** (profsumSrcHashBehind), or NULL */
#ifdef PROFSUM_USE_ISAL
  struct inflate_state *pIsal;  /* ISA-L inflater (z keeps the cursors) */
#endif
  Ring *pRing;                  /* threaded mode, or NULL */
  int64_t nCpuTaken;            /* threaded mode: nCpuNs of the last slot
                                ** the reader took bytes from */
  int64_t nRingStartNs;         /* threaded mode: when the thread started */
  int triedThread;              /* 1 once the first read decided the mode */
  int noThread;                 /* profsumSrcNoThread() was called */
  ProfsumStopCheck stop;        /* the opening thread's stop check */
  int64_t nSinceStop;           /* bytes delivered since it was last asked */
  int stopped;                  /* 1 once it said stop: every read fails */
};

/* The stop check of each thread (see profsumStopPush). */
static _Thread_local ProfsumStopCheck tlStop;

/* See profsum_reader.h. */
ProfsumStopCheck profsumStopPush(ProfsumStopCheckFn xStop, void *pArg){
  ProfsumStopCheck prev = tlStop;
  tlStop.xStop = xStop;
  tlStop.pArg = pArg;
  return prev;
}

/* See profsum_reader.h. */
void profsumStopPop(ProfsumStopCheck prev){
  tlStop = prev;
}

/* See profsum_reader.h. */
int profsumStopAsk(void){
  return tlStop.xStop!=0 && tlStop.xStop(tlStop.pArg)!=0;
}

/* Hash the bytes of aIn that profsumSrcHashInit() left for later: before
** aIn is overwritten, or when the hash is asked for. */
static void srcHashPending(ProfsumSrc *p){
  if( p->nShaPending ){
    profsumSha256Update(p->pSha, p->aIn, p->nShaPending);
    p->nShaPending = 0;
  }
}

/* Read up to n raw bytes from the source (file or memory) into a, at the
** current position: *pnGot bytes, 0 at the end (then p->eof is set).  The
** bytes are counted in nRawIn and hashed (after what aIn left pending:
** the caller calls srcHashPending first).  Returns SQLITE_OK or an error
** with *pzErr set. */
static int srcReadRaw(ProfsumSrc *p, unsigned char *a, size_t n, size_t *pnGot, char **pzErr){
  size_t got;
  if( p->fd<0 ){
    got = p->nMem - p->iMem;
    if( got>n ) got = n;
    memcpy(a, p->aMem + p->iMem, got);
    p->iMem += got;
  }else{
    ssize_t r;
    if( n>(size_t)0x40000000 ) n = 0x40000000;
    while( (r = read(p->fd, a, n))<0 ){
      if( errno!=EINTR ){
        *pzErr = sqlite3_mprintf("'%s': read error at byte %lld (%s)",
                                 p->zPath, (long long)p->nRawIn, strerror(errno));
        return PROFSUM_RC_FILEIO;
      }
    }
    got = (size_t)r;
  }
  if( got==0 ) p->eof = 1;
  p->nRawIn += (int64_t)got;
  if( p->pSha && got && p->pShaBg==0 ) profsumSha256Update(p->pSha, a, got);
  *pnGot = got;
  return SQLITE_OK;
}

/* Fill aIn from the raw source.  Returns SQLITE_OK (nIn==0 at EOF) or an
** error with *pzErr set. */
static int srcFillRaw(ProfsumSrc *p, char **pzErr){
  srcHashPending(p);
  p->iIn = 0;
  p->nIn = 0;
  if( p->eof ) return SQLITE_OK;
  return srcReadRaw(p, p->aIn, PROFSUM_GZ_INBUF, &p->nIn, pzErr);
}

/* Plain file: read up to nOut bytes at the file position straight into
** aOut (aIn is consumed).  *pnGot is 0 at the end of the file.  Returns
** SQLITE_OK or an error with *pzErr set. */
static int srcReadPlainInto(ProfsumSrc *p, unsigned char *aOut, size_t nOut,
                            size_t *pnGot, char **pzErr){
  srcHashPending(p);
  return srcReadRaw(p, aOut, nOut, pnGot, pzErr);
}

/* Out of memory opening the source zPath: SQLITE_NOMEM, with *pzErr
** naming the file (when that message can be made). */
static int srcNomem(const char *zPath, char **pzErr){
  *pzErr = sqlite3_mprintf("'%s': out of memory opening it", zPath);
  return SQLITE_NOMEM;
}

/* Allocate the source object and detect the format from the first bytes. */
static int srcStart(ProfsumSrc *p, char **pzErr){
  int rc;
  p->aIn = sqlite3_malloc64(PROFSUM_GZ_INBUF);
  if( p->aIn==0 ) return srcNomem(p->zPath, pzErr);
  rc = srcFillRaw(p, pzErr);
  if( rc ) return rc;
  if( p->nIn==0 ){
    *pzErr = sqlite3_mprintf("'%s': empty file", p->zPath);
    return SQLITE_ERROR;
  }
  if( p->nIn>=2 && p->aIn[0]==0x1f && p->aIn[1]==0x8b ){
    p->isGzip = 1;
    memset(&p->z, 0, sizeof(p->z));
#ifdef PROFSUM_USE_ISAL
    p->pIsal = sqlite3_malloc64(sizeof(struct inflate_state));
    if( p->pIsal==0 ) return srcNomem(p->zPath, pzErr);
    isal_inflate_init(p->pIsal);
    p->pIsal->crc_flag = ISAL_GZIP;      /* parse the gzip header, check the CRC */
#else
    if( inflateInit2(&p->z, 15+16)!=Z_OK ) return srcNomem(p->zPath, pzErr);
    p->zInit = 1;
#endif
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
  if( p==0 ) return srcNomem(zPath, pzErr);
  memset(p, 0, sizeof(*p));
  p->fd = -1;
  p->stop = tlStop;
  p->zPath = sqlite3_mprintf("%s", zPath);
  if( p->zPath==0 ){ sqlite3_free(p); return srcNomem(zPath, pzErr); }
  p->fd = open(zPath, O_RDONLY|O_CLOEXEC);
  if( p->fd<0 ){
    *pzErr = sqlite3_mprintf("'%s': cannot open (%s)", zPath, strerror(errno));
    profsumSrcClose(p);
    return SQLITE_CANTOPEN;
  }
  if( fstat(p->fd, &st)!=0 ){
    *pzErr = sqlite3_mprintf("'%s': cannot stat (%s)", zPath, strerror(errno));
    profsumSrcClose(p);
    return PROFSUM_RC_FILEIO;
  }
  if( S_ISDIR(st.st_mode) ){
    *pzErr = sqlite3_mprintf("'%s': is a directory, not a trace file "
                             "(profsum_find_traces(%Q) lists the traces under it)", zPath, zPath);
    profsumSrcClose(p);
    return SQLITE_CANTOPEN;
  }
  p->nFileSize = (int64_t)st.st_size;
  p->isRegular = S_ISREG(st.st_mode);
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
  if( p==0 ) return srcNomem(zName ? zName : "<memory>", pzErr);
  memset(p, 0, sizeof(*p));
  p->fd = -1;
  p->stop = tlStop;
  p->aMem = a;
  p->nMem = n;
  p->nFileSize = (int64_t)n;
  p->zPath = sqlite3_mprintf("%s", zName ? zName : "<memory>");
  if( p->zPath==0 ){ sqlite3_free(p); return srcNomem(zName ? zName : "<memory>", pzErr); }
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

/* Start the next gzip member. */
static int infReset(ProfsumSrc *p){
#ifdef PROFSUM_USE_ISAL
  isal_inflate_reset(p->pIsal);
  p->pIsal->crc_flag = ISAL_GZIP;
  return Z_OK;
#else
  return inflateReset(&p->z);
#endif
}

/* One inflate step on the cursors of p->z.  Returns zlib codes: Z_OK
** (progress or a need for input/output), Z_STREAM_END (member complete),
** Z_BUF_ERROR (no progress), or an error with *pzMsg set. */
static int infStep(ProfsumSrc *p, const char **pzMsg){
#ifdef PROFSUM_USE_ISAL
  struct inflate_state *s = p->pIsal;
  int rc;
  uInt inBefore = p->z.avail_in, outBefore = p->z.avail_out;
  s->next_in = p->z.next_in;
  s->avail_in = p->z.avail_in;
  s->next_out = p->z.next_out;
  s->avail_out = p->z.avail_out;
  rc = isal_inflate(s);
  p->z.next_in = s->next_in;
  p->z.avail_in = s->avail_in;
  p->z.next_out = s->next_out;
  p->z.avail_out = s->avail_out;
  if( rc<0 ){
    switch( rc ){
      case ISAL_INVALID_BLOCK: *pzMsg = "invalid deflate block"; break;
      case ISAL_INVALID_SYMBOL: *pzMsg = "invalid deflate symbol"; break;
      case ISAL_INVALID_LOOKBACK: *pzMsg = "invalid distance too far back"; break;
      case ISAL_INVALID_WRAPPER: *pzMsg = "incorrect header check"; break;
      case ISAL_UNSUPPORTED_METHOD: *pzMsg = "unknown compression method"; break;
      case ISAL_INCORRECT_CHECKSUM: *pzMsg = "incorrect data check"; break;
      default: *pzMsg = "data error"; break;
    }
    return Z_DATA_ERROR;
  }
  if( s->block_state==ISAL_BLOCK_FINISH ) return Z_STREAM_END;
  if( p->z.avail_in==inBefore && p->z.avail_out==outBefore ) return Z_BUF_ERROR;
  return Z_OK;
#else
  int rc = inflate(&p->z, Z_NO_FLUSH);
  if( rc!=Z_OK && rc!=Z_STREAM_END && rc!=Z_BUF_ERROR ){
    *pzMsg = p->z.msg ? p->z.msg : zError(rc);
  }
  return rc;
#endif
}

/* Read decompressed bytes in the calling thread (see profsumSrcRead). */
static int srcReadDirect(ProfsumSrc *p, unsigned char *aOut, size_t nOut,
                         size_t *pnGot, char **pzErr){
  int rc;
  *pnGot = 0;
  if( !p->isGzip ){
    while( *pnGot==0 ){
      size_t n;
      if( p->iIn>=p->nIn && p->fd>=0 && !p->eof && nOut>=PROFSUM_GZ_INBUF ){
        /* A plain file and a large request: read straight into the
        ** caller's buffer, without the copy through aIn (a 100 MB plain
        ** scan: one memcpy of the file less). */
        return srcReadPlainInto(p, aOut, nOut, pnGot, pzErr);
      }
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
        return PROFSUM_RC_DAMAGED;
      }
      if( infReset(p)!=Z_OK ){
        *pzErr = sqlite3_mprintf("'%s': out of memory at byte %lld (starting a gzip member)",
            p->zPath, (long long)(p->nRawIn - p->z.avail_in));
        return SQLITE_NOMEM;
      }
      p->zEnd = 0;
    }
    if( p->z.avail_in==0 ){
      rc = srcFillRaw(p, pzErr);
      if( rc ) return rc;
      if( p->nIn==0 ){
        *pzErr = sqlite3_mprintf("'%s': truncated gzip data at byte %lld "
            "(the compressed stream ends before its end marker: the file is cut off, e.g. copied "
            "while the profiler was still writing it; copy it again once the capture is complete)",
            p->zPath, (long long)p->nRawIn);
        return PROFSUM_RC_DAMAGED;
      }
      p->z.next_in = p->aIn;
      p->z.avail_in = (uInt)p->nIn;
    }
    {
      const char *zMsg = 0;
      zrc = infStep(p, &zMsg);
      if( zrc==Z_STREAM_END ){
        p->zEnd = 1;
      }else if( zrc==Z_BUF_ERROR ){
        /* No progress possible: needs more input (handled above) or output. */
        if( p->z.avail_out==0 ) break;
      }else if( zrc!=Z_OK ){
        *pzErr = sqlite3_mprintf("'%s': gzip data error at byte %lld (%s)",
            p->zPath, (long long)(p->nRawIn - p->z.avail_in), zMsg ? zMsg : "data error");
        return zrc==Z_MEM_ERROR ? SQLITE_NOMEM : PROFSUM_RC_DAMAGED;
      }
    }
  }
  *pnGot = nOut - p->z.avail_out;
  return SQLITE_OK;
}

/* A clock's time in nanoseconds (0 where it cannot be read). */
static int64_t clockNs(clockid_t id){
  struct timespec t;
  if( clock_gettime(id, &t) ) return 0;
  return (int64_t)t.tv_sec*1000000000 + t.tv_nsec;
}

/* The producer thread: fill ring slots until EOF, an error, or stop. */
static void *ringProducer(void *pArg){
  ProfsumSrc *p = (ProfsumSrc*)pArg;
  Ring *r = p->pRing;
  int iTail = 0, nFirst = 0;
  for(;;){
    RingSlot *slot;
    size_t n = 0;
    int rc = SQLITE_OK;
    char *zErr = 0;
    int nAhead;
    pthread_mutex_lock(&r->mu);
    if( r->nFull==r->nSlot && !r->stop && !r->handBack ){
      /* The ring is full: wait until half of it is free, then fill those
      ** slots in a row (the consumer wakes this thread once per half ring,
      ** not once per slot: a wake-up is a system call of the parse). */
      r->prodWait = 1;
      while( r->nFull>r->nSlot/2 && !r->stop && !r->handBack ) pthread_cond_wait(&r->cv, &r->mu);
      r->prodWait = 0;
    }
    if( r->stop ){ r->done = 1; pthread_cond_broadcast(&r->cv); pthread_mutex_unlock(&r->mu); break; }
    if( r->handBack ){ r->handedBack = 1; pthread_mutex_unlock(&r->mu); break; }
    nAhead = r->nFull;         /* slots the reader has yet to take */
    pthread_mutex_unlock(&r->mu);
    slot = &r->aSlot[iTail];
    if( nFirst<r->nSlot ){
      /* its first fill: map its pages in one call, in this thread (ext/prefault.c) */
      nFirst++;
      profsumPrefault(slot->a, r->szSlot);
    }
    /* Fill the slot as far as possible (the slot is ours until published). */
    while( n<r->szSlot ){
      size_t got = 0;
      rc = srcReadDirect(p, slot->a + n, r->szSlot - n, &got, &zErr);
      if( rc || got==0 ) break;
      n += got;
    }
    slot->n = n;
    slot->rc = rc;
    slot->zErr = zErr;
    slot->nCpuNs = clockNs(CLOCK_THREAD_CPUTIME_ID);
    /* With half the ring or more filled ahead of the reader, the slot's
    ** lines go to the shared cache before the reader takes them (it is
    ** slower to fetch them from this core's); with less, the reader may
    ** be waiting, and the slot goes to it at once. */
    if( nAhead>=r->nSlot/2 ) profsumCacheDemote(slot->a, n);
    slot->eof = (rc!=SQLITE_OK) || n<r->szSlot;
    pthread_mutex_lock(&r->mu);
    r->nFull++;
    if( slot->eof ) r->done = 1;
    if( r->consWait ) pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
    if( slot->eof ) break;
    iTail = (iTail+1) % r->nSlot;
  }
  return 0;
}

/* See profsum_reader.h. */
int profsumThreadsAllowed(void){
  const char *zEnv = getenv("PROFSUM_THREADS");
  if( sqlite3_threadsafe()==0 || (zEnv && zEnv[0]=='0') ) return 0;
  /* A threadsafe build started in single-thread mode at run time
  ** (SQLITE_CONFIG_SINGLETHREAD) has no-op mutexes, so sqlite3_malloc() is
  ** not safe from two threads; its no-op mutex is the pointer 8 (in release
  ** builds of SQLite: a SQLITE_DEBUG build's no-op mutexes are real
  ** objects, and this check does not see its single-thread mode). */
  return sqlite3_mutex_alloc(SQLITE_MUTEX_STATIC_MEM)!=(sqlite3_mutex*)8;
}

/* Bytes per ring slot for a gzip file of nFile bytes: 1/32 of the file,
** rounded up to 16 KiB, from PROFSUM_RING_MIN to PROFSUM_RING_MAX. */
static size_t ringSlotSize(int64_t nFile){
  int64_t sz = (nFile/32 + 16383) & ~(int64_t)16383;
  if( sz<PROFSUM_RING_MIN ) sz = PROFSUM_RING_MIN;
  if( sz>PROFSUM_RING_MAX ) sz = PROFSUM_RING_MAX;
  return (size_t)sz;
}

/* Buffers in the ring for a gzip file of nFile bytes (see PROFSUM_SMALL_FILE). */
static int ringSlotCount(int64_t nFile){
  return nFile<PROFSUM_SMALL_FILE ? 4 : PROFSUM_RING_N;
}

/* Start threaded mode for a large gzip file (best effort: on any failure
** the source simply stays single-threaded). */
static void srcMaybeThread(ProfsumSrc *p){
  Ring *r;
  int i;
  if( !p->isGzip || p->fd<0 || p->nFileSize<PROFSUM_THREAD_MIN ) return;
  if( !profsumThreadsAllowed() ) return;
  r = sqlite3_malloc64(sizeof(Ring));
  if( r==0 ) return;
  memset(r, 0, sizeof(*r));
  r->szSlot = ringSlotSize(p->nFileSize);
  r->nSlot = ringSlotCount(p->nFileSize);
  for(i=0; i<r->nSlot; i++){
    r->aSlot[i].a = sqlite3_malloc64(r->szSlot);
    if( r->aSlot[i].a==0 ) goto fail;
  }
  if( pthread_mutex_init(&r->mu, 0) ) goto fail;
  if( pthread_cond_init(&r->cv, 0) ){ pthread_mutex_destroy(&r->mu); goto fail; }
  p->pRing = r;
  p->nRingStartNs = clockNs(CLOCK_MONOTONIC);
  if( pthread_create(&r->thread, 0, ringProducer, p) ){
    p->pRing = 0;
    pthread_cond_destroy(&r->cv);
    pthread_mutex_destroy(&r->mu);
    goto fail;
  }
  /* named, for those who look at an import's threads (ps, perf, tests) */
  pthread_setname_np(r->thread, "profsum-inflate");
  return;
fail:
  for(i=0; i<PROFSUM_RING_N; i++) sqlite3_free(r->aSlot[i].a);
  sqlite3_free(r);
}

/* Stop and join the producer, free the ring. */
static void srcStopThread(ProfsumSrc *p){
  Ring *r = p->pRing;
  int i;
  if( r==0 ) return;
  pthread_mutex_lock(&r->mu);
  r->stop = 1;
  pthread_cond_broadcast(&r->cv);
  pthread_mutex_unlock(&r->mu);
  if( !r->joined ) pthread_join(r->thread, 0);
  pthread_cond_destroy(&r->cv);
  pthread_mutex_destroy(&r->mu);
  for(i=0; i<PROFSUM_RING_N; i++){
    sqlite3_free(r->aSlot[i].a);
    sqlite3_free(r->aSlot[i].zErr);
  }
  sqlite3_free(r);
  p->pRing = 0;
}

/* Ask the stop check once PROFSUM_STOP_BYTES bytes were delivered since
** it was last asked (see profsumStopPush).  SQLITE_INTERRUPT with *pzErr
** "interrupted" when it says stop (then at every later call), else
** SQLITE_OK. */
static int srcCheckStop(ProfsumSrc *p, char **pzErr){
  if( !p->stopped ){
    if( p->stop.xStop==0 || p->nSinceStop<PROFSUM_STOP_BYTES ) return SQLITE_OK;
    p->nSinceStop = 0;
    if( p->stop.xStop(p->stop.pArg)==0 ) return SQLITE_OK;
    p->stopped = 1;
  }
  *pzErr = sqlite3_mprintf("interrupted");
  return SQLITE_INTERRUPT;
}

/* See profsum_reader.h. */
int profsumSrcRead(ProfsumSrc *p, unsigned char *aOut, size_t nOut,
                   size_t *pnGot, char **pzErr){
  Ring *r;
  RingSlot *slot;
  size_t n;
  int rc;
  *pnGot = 0;
  rc = srcCheckStop(p, pzErr);
  if( rc ) return rc;
  if( !p->triedThread ){ p->triedThread = 1; if( !p->noThread ) srcMaybeThread(p); }
  r = p->pRing;
  if( r==0 ){
    rc = srcReadDirect(p, aOut, nOut, pnGot, pzErr);
    p->nSinceStop += (int64_t)*pnGot;
    return rc;
  }
  if( r->handedBack && r->nFull==0 ){
    /* the slots the producer filled are read: on from here directly */
    srcStopThread(p);
    rc = srcReadDirect(p, aOut, nOut, pnGot, pzErr);
    p->nSinceStop += (int64_t)*pnGot;
    return rc;
  }
  pthread_mutex_lock(&r->mu);
  while( r->nFull==0 && !r->done ){
    r->consWait = 1;
    pthread_cond_wait(&r->cv, &r->mu);
  }
  r->consWait = 0;
  if( r->nFull==0 ){                     /* done, nothing left */
    pthread_mutex_unlock(&r->mu);
    return SQLITE_OK;
  }
  pthread_mutex_unlock(&r->mu);
  slot = &r->aSlot[r->iHead];
  n = slot->n - r->iOff;
  if( n>nOut ) n = nOut;
  memcpy(aOut, slot->a + r->iOff, n);
  r->iOff += n;
  p->nCpuTaken = slot->nCpuNs;
  *pnGot = n;
  p->nSinceStop += (int64_t)n;
  if( r->iOff>=slot->n ){
    /* Slot consumed: deliver its error (after its bytes), or release it. */
    if( n==0 && slot->rc ){
      rc = slot->rc;
      *pzErr = slot->zErr;
      slot->zErr = 0;
      slot->rc = SQLITE_OK;
      return rc;
    }
    if( slot->rc==SQLITE_OK ){
      int wasEof = slot->eof;
      r->iOff = 0;
      pthread_mutex_lock(&r->mu);
      r->iHead = (r->iHead+1) % r->nSlot;
      r->nFull--;
      if( wasEof ){ r->nFull = 0; r->done = 1; }
      if( r->prodWait && r->nFull<=r->nSlot/2 ) pthread_cond_broadcast(&r->cv);
      pthread_mutex_unlock(&r->mu);
    }
  }
  return SQLITE_OK;
}

/* See profsum_reader.h. */
int profsumSrcHashInit(ProfsumSrc *p){
  if( p->triedThread || p->pSha ) return SQLITE_MISUSE;   /* too late / twice */
  p->pSha = sqlite3_malloc64(sizeof(ProfsumSha256));
  if( p->pSha==0 ) return SQLITE_NOMEM;
  profsumSha256Init(p->pSha);
  /* The first raw chunk was read when the source was opened: hashed when
  ** aIn is next refilled (by then in the inflate thread, when there is
  ** one) rather than here, where it would delay the first inflated bytes. */
  p->nShaPending = p->nIn;
  return SQLITE_OK;
}

/* See profsum_reader.h. */
int profsumSrcHashHex(ProfsumSrc *p, char *zHex){
  char *zErr = 0;
  if( p->pSha==0 ) return SQLITE_MISUSE;
  if( p->pRing ){
    /* The producer must be finished: it owns the raw state until then. */
    int done;
    pthread_mutex_lock(&p->pRing->mu);
    done = p->pRing->done;
    pthread_mutex_unlock(&p->pRing->mu);
    if( !done ) return SQLITE_MISUSE;
    /* (profsumSrcRingEnd may have joined it: it ended before the hand-back) */
    if( !p->pRing->joined ) pthread_join(p->pRing->thread, 0);
    p->pRing->joined = 1;
  }
  if( p->pShaBg ){
    /* left behind: the rest from where the reader was, to the end */
    int rc = profsumShaBgFinish(p->pShaBg, zHex, 0, &zErr);
    p->pShaBg = 0;
    if( rc ){ sqlite3_free(zErr); return PROFSUM_RC_FILEIO; }
    return SQLITE_OK;
  }
  /* Hash whatever the reader did not need (e.g. bytes after an error). */
  srcHashPending(p);
  while( !p->eof ){
    if( srcFillRaw(p, &zErr) ){ sqlite3_free(zErr); return PROFSUM_RC_FILEIO; }
  }
  profsumSha256Hex(p->pSha, zHex);
  return SQLITE_OK;
}

/* See profsum_reader.h. */
void profsumSrcHashBehind(ProfsumSrc *p){
  if( p->pSha==0 || p->pShaBg || p->fd<0 || !p->isRegular ) return;  /* (a
                                ** pipe cannot be read twice) */
  if( p->pRing && !p->pRing->joined ) return;   /* its producer reads */
  srcHashPending(p);            /* the bytes read so far are hashed */
  if( profsumShaBgStart(p->fd, p->zPath, p->nRawIn, p->pSha, 1, &p->pShaBg) ) p->pShaBg = 0;
}

/* See profsum_reader.h. */
int profsumSrcHashSome(ProfsumSrc *p){
  return p->pShaBg ? profsumShaBgHelp(p->pShaBg) : 0;
}

/* See profsum_reader.h. */
int profsumSrcIsGzip(ProfsumSrc *p){ return p->isGzip; }

/* See profsum_reader.h. */
void profsumSrcNoThread(ProfsumSrc *p){ p->noThread = 1; }

/* See profsum_reader.h. */
void profsumSrcRingEnd(ProfsumSrc *p){
  Ring *r = p->pRing;
  if( r==0 || r->joined ) return;
  pthread_mutex_lock(&r->mu);
  r->handBack = 1;
  pthread_cond_broadcast(&r->cv);
  pthread_mutex_unlock(&r->mu);
  /* it stops before its next slot, or has ended (done) */
  pthread_join(r->thread, 0);
  r->joined = 1;
}

/* See profsum_reader.h. */
ProfsumStopCheck profsumSrcSetStop(ProfsumSrc *p, ProfsumStopCheck stop){
  ProfsumStopCheck prev = p->stop;
  p->stop = stop;
  return prev;
}

/* See profsum_reader.h. */
double profsumSrcInflateShare(ProfsumSrc *p){
  int64_t nWall;
  if( !p->isGzip ) return 0.0;
  if( p->pRing==0 ) return 1.0;
  nWall = clockNs(CLOCK_MONOTONIC) - p->nRingStartNs;
  return nWall>0 ? (double)p->nCpuTaken/(double)nWall : 1.0;
}

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
  srcStopThread(p);
  sqlite3_free(p->pSha);
#ifdef PROFSUM_USE_ISAL
  sqlite3_free(p->pIsal);
#endif
  if( p->zInit ) inflateEnd(&p->z);
  profsumShaBgStop(p->pShaBg);           /* (it reads fd) */
  if( p->fd>=0 ) close(p->fd);
  sqlite3_free(p->aIn);
  sqlite3_free(p->zPath);
  sqlite3_free(p);
}
