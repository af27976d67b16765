/*
** xplane_intake.c — stage A's XPlane reader: an XSpace file (.xplane.pb,
** plain or gzip) walked with the decoder of xplane_pb.h and fed to the
** summary engine through engine_intake.h (summary-v1-spec §6.1).
**
** An XSpace file is read as the reference's XPlane reader reads it: plane
** i is pid i+1, line j of a plane has tid = its id, or j+1 when that is 0,
** and each line is its own track, its kind decided by its own name (two
** lines with one tid stay two tracks).  An event is accepted when its data
** is an offset, its duration is positive and its metadata is registered
** (a non-empty display_name or name, the shown name).  Its times are the
** reference's doubles, ts = double(timestamp_ns)/1000 + double(offset_ps)/1e6
** and dur = double(duration_ps)/1e6, which the engine keeps for every
** event and decides every order, nesting and gap on, beside the exact
** picoseconds timestamp_ns*1000 + offset_ps and duration_ps.  The stats
** named below are mapped (metadata's stats, then the event's: the last
** wins) into the fields a JSON event has in args.  The reference treats
** "aggregated" lines (host, Steps, other device lines) apart from the
** "detailed" ones only to save work: their results differ in float
** rounding only, so every line goes through the engine as a JSON track does.
**
** Where the reference refuses the file, this reader goes on and says so
** (quality warnings and diagnostics): a line out of timeline order is
** sorted by the engine (kind xplane_unsorted_line), a string field that
** is not UTF-8 is read with U+FFFD (kind invalid_utf8).
**
** The read is a pipeline: a producer (a thread of its own when threads
** are allowed) runs the decoder, the insights' reading of stats (their
** first step) and the engine-free part of the intake, writing items
** (planes, lines, events with their texts and insights records, the
** decoder's diagnostics, the end) into batches; the calling thread takes
** them from a ring of XP_NSLOT batches and does what touches the engine.
** The insights' per-op records (their second step, profsumInsXpApply)
** are applied batch after batch, in order, by whichever side gets to a
** batch first: the producer while it would wait for a free batch (the
** engine side then sets the pace), else the engine side once it has
** taken the batch (xpInsNext, xpConsume).  Items keep the order of the one-thread walk, so every row,
** diagnostic and error is the same with PROFSUM_THREADS=0 (where each
** batch is consumed as soon as it is full).  The engine side also does
** the ordering's per-line work (the sorted check, the nesting sweep) on
** each line's events as they come, batch by batch, while the producer
** decodes on (profsumEngTrackPart and profsumEngTrackDone, engine_order.c).
*/
#include "profsum_int.h"
#include "profsum_reader.h"
#include "engine_intake.h"
#include "pytext.h"
#include "xplane_pb.h"
#include "hash.h"
#include "shabg.h"
#include "insights.h"
#include "growarray.h"

#include <math.h>
#if defined(__SSE2__)
# include <emmintrin.h>      /* xpCommit's streaming stores */
#endif
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define XK_TF_OP       0
#define XK_NAME        1
#define XK_SOURCE      2
#define XK_SOURCE_FILE 3
#define XK_FILE_NAME   4
#define XK_LONG_NAME   5
#define XK_RUN_ID      6
#define XK_STEP_NUM    7
#define XK_STEP        8
#define XK_N           9

/* The XK_* of stat name z[0..n), or -1: told apart by length first (this
** runs for every stat of every event). */
static int xpKeyOf(const char *z, int64_t n){
  switch( n ){
    case 4:
      if( memcmp(z, "name", 4)==0 ) return XK_NAME;
      if( memcmp(z, "step", 4)==0 ) return XK_STEP;
      break;
    case 5:  if( memcmp(z, "tf_op", 5)==0 ) return XK_TF_OP; break;
    case 6:
      if( memcmp(z, "source", 6)==0 ) return XK_SOURCE;
      if( memcmp(z, "run_id", 6)==0 ) return XK_RUN_ID;
      break;
    case 8:  if( memcmp(z, "step_num", 8)==0 ) return XK_STEP_NUM; break;
    case 9:
      if( memcmp(z, "file_name", 9)==0 ) return XK_FILE_NAME;
      if( memcmp(z, "long_name", 9)==0 ) return XK_LONG_NAME;
      break;
    case 11: if( memcmp(z, "source_file", 11)==0 ) return XK_SOURCE_FILE; break;
  }
  return -1;
}

/* Map the stats a[0..n) that have a value and a known, non-empty name
** into ap[XK_*] (a later stat replaces an earlier one), each as the
** reference sees it (profsumXpStatRef): compressed_str_value is a field
** it does not know, so a stat holding only that has no value, and one
** where it came after another value member has that member's value (a
** copy in aView[k], which must outlive ap). */
static void xpMapStats(const ProfsumXpStat *a, int n, const ProfsumXpStat **ap, ProfsumXpStat *aView){
  int i, k;
  for(i=0; i<n; i++){
    const ProfsumXpStat *st = &a[i];
    if( st->zName==0 || st->nName==0 || st->eType==PROFSUM_XV_NONE ) continue;
    if( (k = xpKeyOf(st->zName, st->nName))>=0 ){
      const ProfsumXpStat *v = profsumXpStatRef(st, &aView[k]);
      if( v ) ap[k] = v;
    }
  }
}

/* What an event takes from its stats (string ids, -1: absent). */
typedef struct XpDerived {
  int32_t name, tfop, source, sig, runid;
  int32_t hostMem;      /* the long text names host memory (profsumEngSig) */
  int hasStep;
  int64_t step;
  int32_t keyTrk, key;  /* the event key these fields made on track keyTrk
                        ** (profsumEngAdd), -1 -1 until one is made */
} XpDerived;

/* The file's SHA-256 (trace provenance), computed beside the decoding
** (shabg.c: on a thread at the idle scheduling class when threads are
** allowed, finished by the import's thread; else at once, before the
** decoding). */
typedef struct XpHash {
  char zHex[65];
  sqlite3_int64 nSize;
  char *zErr;                 /* the hash's error message (sqlite3_malloc'd) */
  int rc;
  ProfsumShaBg *pBg;          /* the hash under way, or NULL */
} XpHash;

/* Finish the hash; then h->rc says how it went.  Called once or more. */
static void xpHashJoin(XpHash *h){
  if( h->pBg ){
    h->rc = profsumShaBgFinish(h->pBg, h->zHex, &h->nSize, &h->zErr);
    h->pBg = 0;
  }
}

/* Start hashing zPath into h (zPath must outlive the hash). */
static void xpHashStart(XpHash *h, const char *zPath){
  int bThread = profsumThreadsAllowed();
  memset(h, 0, sizeof(*h));
  h->rc = profsumShaBgOpen(zPath, bThread, &h->pBg, &h->zErr);
  if( h->rc==SQLITE_OK && !bThread ) xpHashJoin(h);    /* at once */
}

/* ------------------------------------------------------------------ */
/* The items the decoding side hands to the engine side                */
/* ------------------------------------------------------------------ */

/* What an event's stats give, as slices [o, o+n) of its batch's bytes
** (n<0: absent), made by the decoding side; the engine side interns them,
** in the order the fields are listed (the order of their string ids). */
typedef struct XpTxt {
  int64_t oName, nName;   /* the shown name: display_name, else name */
  int64_t oTfop, nTfop;   /* tf_op (the XlaModule rule applied) */
  int64_t oSrc, nSrc;     /* source */
  int64_t oSig, nSig;     /* the long name its shape signature comes from */
  int rawHostMem;         /* the metadata's raw name names host memory
                          ** (profsumEngHasHostMem), as xprof reads it */
  int64_t oRun, nRun;     /* run_id as text */
  int hasStep;            /* step_num / step */
  int64_t step;
} XpTxt;

#define XI_EVENT    0   /* an XEvent */
#define XI_PLANE    1   /* the start of a plane */
#define XI_LINE     2   /* the start of a line */
#define XI_DIAG     3   /* a diagnostic of the decoder */
#define XI_UNSORTED 4   /* the next event is its line's first out of order */
#define XI_END      5   /* the end of the walk (XpPipe.prRc says how) */

#define XC_SKIP     0   /* an event the summary leaves out silently */
#define XC_ZERO     1   /* left out: duration_ps 0 (a diagnostic) */
#define XC_NEG      2   /* left out: duration_ps < 0 (a diagnostic) */
#define XC_TAKE     3   /* accepted */

/* The reference's doubles of a taken event (µs): the line's start
** (xpLineUs, once per line), the event's start and duration.  Both sides
** of the pipe make them here, so they get the same bits: the decoding
** side for its order check, the engine side for the engine. */
static double xpLineUs(int64_t tsNs){ return (double)tsNs / 1000.0; }
static void xpEvDoubles(double lineUs, int64_t offsetPs, int64_t durPs, double *pTs, double *pDur){
  *pTs = lineUs + (double)offsetPs / 1e6;
  *pDur = (double)durPs / 1e6;
}

/* One item.  Strings are slices of the batch's bytes. */
typedef struct XpItem {
  _Alignas(64) uint8_t eKind;   /* XI_* (an item is one cache line: xpCommit) */
  uint8_t eClass;         /* XI_EVENT: XC_* */
  uint8_t bChecked;       /* XI_EVENT: the stop request was checked at its
                          ** XI_UNSORTED item */
  uint8_t bNoStat;        /* XI_EVENT: no stats of its own (its derived
                          ** fields are its metadata's, kept per plane) */
  int16_t iTxt;           /* XI_EVENT: its XpTxt in the batch, -1: none */
  uint8_t nIns;           /* XI_EVENT: its insights records, the next nIns
                          ** of the batch's aIns (taken in item order) */
  uint8_t bInsMeta;       /* XI_EVENT: instead, its one record is an op of
                          ** insights metadata entry u.ev.insMeta (the
                          ** usual record: 8 bytes here, not 80 in aIns) */
  int64_t idx;            /* event ordinal; plane / line index; diag idx */
  int64_t iOffset;        /* byte offset (events, diagnostics) */
  union {
    struct { int64_t iMeta, ts, dur, insMeta; } ev;               /* XI_EVENT (ts: offset_ps); the
                          ** reference's doubles of its start and dur are
                          ** made on the engine side (xpEvDoubles) */
    struct { double fTs; } un;                                    /* XI_UNSORTED */
    struct { int64_t nMeta, oName, nName; int isDev; } pl;        /* XI_PLANE */
    struct { int64_t tid, tsNs, oName, nName; } ln;               /* XI_LINE */
    struct { const char *zKind; int64_t oDetail, nDetail; } dg;   /* XI_DIAG (nDetail<0: none) */
  } u;
} XpItem;
_Static_assert(sizeof(XpItem)==64, "an item is one cache line");

#define XP_NSLOT      8          /* batches in the ring */
#define XP_WAKE       (XP_NSLOT/2)   /* a waiting side is woken once this
                                 ** many batches are ready (free) */
#define XP_BATCH_N    1024       /* items (and XpTxt) per batch */
#define XP_BATCH_BYTES 65536     /* a batch ends once its bytes pass this */
#define XP_AHEAD_BYTES 1024      /* how far ahead of its writes the producer
                                 ** asks for a batch's lines (xpAhead) */

/* One batch: items, their derived texts and the bytes of their strings
** (grown to the largest batch's need, then reused). */
typedef struct XpBatch {
  _Alignas(64) XpItem *a;         /* each batch on cache lines of its own: the
                                  ** producer writes its counts per item while
                                  ** the consumer reads the batch beside it;
                                  ** a: on a 64-byte boundary in pItemMem */
  void *pItemMem;
  int n;
  XpTxt *aTxt; int nTxt;
  ProfsumInsXpOp *aIns; int nIns; /* what the insights do once the batch
                                  ** is handed over (profsumInsXpApply;
                                  ** made at the first, XP_BATCH_N of them) */
  char *aByte; int64_t nByte, nAlloc;
  size_t aAhead[3];               /* bytes of aTxt, aIns, aByte asked for
                                  ** (xpAhead) since the batch was emptied
                                  ** (the items are streamed: xpCommit) */
  int insState;                   /* its insights' records: XS_OPEN, XS_BUSY
                                  ** (a side applies them), XS_DONE (under
                                  ** XpPipe.mu with a producer thread) */
  int insRc;                      /* XS_DONE: how that went */
} XpBatch;

#define XS_OPEN 0
#define XS_BUSY 1
#define XS_DONE 2

/* What the engine side keeps: the engine, the plane and line being read,
** the per-plane memo of derived fields, the unsorted lines. */
typedef struct XpWalk {
  ProfsumEngine *e;
  ProfsumXp *p;                   /* for the warnings, once the walk is over */
  const char *zFunc;
  int64_t *aMc;                   /* per event_metadata entry of the plane (iMeta): its
                                  ** aDer index + 1 (events without stats), 0 not yet */
  int64_t nMc, nAllocMc;          /* entries of aMc in use (the plane's), allocated */
  XpDerived *aDer; int64_t nDer, nAllocDer;
  int64_t nUnsortedLines;
  char *zFirstUnsorted;           /* the first unsorted line's message */
  /* the current plane and line */
  int64_t iPlane, pid, iLine, tid, tsNs;
  double lineUs;                  /* xpLineUs(tsNs) */
  int32_t proc, thread, trk;
  int isDev, isDevOp;
  char *zErr;                     /* the decoder's message, taken at XI_END */
} XpWalk;

/* The pipe between the decoding side (the producer: decoder, insights,
** the engine-free part of the intake) and the engine side (the consumer,
** the calling thread).  With a thread, batches go through a ring of
** XP_NSLOT; without, each batch is consumed as soon as it is full. */
typedef struct XpPipe {
  XpBatch aSlot[XP_NSLOT];
  int iFill;                      /* the producer's batch */
  int iHead;                      /* the consumer's next batch */
  int nPub;                       /* published batches not yet released */
  int bThread;                    /* a producer thread runs */
  int bStop;                      /* the consumer stopped: the producer ends */
  int bProdWait, bConsWait;       /* a side waits (the other signals then only) */
  int bEnded;                     /* the producer thread returned */
  int bBarrier;                   /* the producer waits for the ring to drain */
  int stopFlag;                   /* bStop, read without the mutex (atomics):
                                  ** by xpPush, and by the producer thread's
                                  ** stop check, which the sources it opens
                                  ** (gzip) ask */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  pthread_t thread;
  int cRc;                        /* without a thread: the consumer's last code */
  /* set before the walk, read by both sides */
  const char *zPath;
  const char *zFunc;
  unsigned xpFlags;               /* PROFSUM_XP_* of its decoder */
  ProfsumXp *p;
  struct ProfsumInsights *pIns;
  XpWalk *w;
  /* the producer's (on lines of their own: written per event) */
  _Alignas(64) int prRc;          /* its end: SQLITE_DONE or an error code */
  char *prErr;                    /* its message (sqlite3_malloc'd) or 0 */
  int64_t nBadUtf8;               /* string fields read with U+FFFD */
  int64_t nNonFinite;             /* stat mappings the reference cannot read
                                  ** (xpNonFinite): a NaN or infinite
                                  ** step_num, step or run_id double */
  int64_t oFirstNonFinite;        /* the first one's byte offset */
  unsigned char *aShip;           /* per iMeta of the plane: its texts were sent */
  int64_t nShip, nAllocShip;
  char *aScr; int64_t nScr, nAllocScr;   /* an event's texts before they go in a batch */
  XpItem stage;                   /* the item being made (xpPush gives it) */
  XpItem *pStageTo;               /* its place in the batch, 0: none (xpCommit) */
  /* The insights' second step, batch after batch (xpInsRun): the next
  ** batch whose records are to be applied (under mu), and the start of
  ** the line the last one applied was in (the side that holds the claim
  ** only). */
  _Alignas(64) int insNext;
  int64_t insTsNs;
} XpPipe;

static int xpConsume(XpPipe *q, XpBatch *b);

/* Make room in the producer's batch for one item (and an XpTxt when
** bTxt, nIns insights records) and nByte bytes: publish the batch first
** when it is full.  The item, or 0 when the consumer stopped (or out of
** memory: q->prRc). */
static XpItem *xpPush(XpPipe *q, int bTxt, int nIns, int64_t nByte);

/* Empty batch b for the producer to fill again. */
static void xpBatchEmpty(XpBatch *b){
  b->insState = XS_OPEN;
  b->insRc = SQLITE_OK;
  b->n = b->nTxt = b->nIns = 0;
  b->nByte = 0;
  memset(b->aAhead, 0, sizeof(b->aAhead));
}

/* Write the item being made (q->stage) to its place in the batch, with
** stores that bypass the cache: the batch's lines were last read by the
** engine side's core, and ordinary stores must first take each line
** back, which stalled the decoding side (docs/performance-log.md, "XPlane:
** the decoding side's stall").  The caller fences before the batch is
** handed over (xpFlush). */
static void xpCommit(XpPipe *q){
  XpItem *pTo = q->pStageTo;
  if( pTo==0 ) return;
#if defined(__SSE2__)
  {
    const __m128i *s = (const __m128i*)&q->stage;
    __m128i *d = (__m128i*)pTo;
    _mm_stream_si128(d, _mm_loadu_si128(s));
    _mm_stream_si128(d+1, _mm_loadu_si128(s+1));
    _mm_stream_si128(d+2, _mm_loadu_si128(s+2));
    _mm_stream_si128(d+3, _mm_loadu_si128(s+3));
  }
#else
  memcpy(pTo, &q->stage, sizeof(XpItem));
#endif
  q->pStageTo = 0;
}

/* The insights' records of batch b, in item order (profsumInsXpApply):
** the second step of the batch's events.  Whichever side holds the claim
** (xpInsRun) runs it; the line's start carries over from the batch
** before in q->insTsNs.  SQLITE_OK or SQLITE_NOMEM. */
static int xpInsApply(XpPipe *q, const XpBatch *b){
  const XpItem *aItem = b->a;
  const ProfsumInsXpOp *aIns = b->aIns;
  int i, iIns = 0, rc = SQLITE_OK;
  for(i=0; i<b->n && rc==SQLITE_OK; i++){
    const XpItem *it = &aItem[i];
    if( it->eKind==XI_LINE ){
      q->insTsNs = it->u.ln.tsNs;
    }else if( it->eKind==XI_EVENT ){
      if( it->bInsMeta ){
        /* the usual record: an op (of a taken event) of a metadata entry */
        ProfsumInsXpOp op;
        op.fl = PROFSUM_INSOP_META;
        op.iMeta = it->u.ev.insMeta;
        rc = profsumInsXpApply(q->pIns, &op, (profsum_ps)q->insTsNs*1000 + it->u.ev.ts, it->u.ev.dur);
      }else if( it->nIns>0 ){
        /* its records, in order: a record of an op (OWN, META) comes
        ** with a taken event only, whose start and dur the item holds;
        ** the others read neither */
        int k, bTake = it->eClass==XC_TAKE;
        for(k=0; k<it->nIns && rc==SQLITE_OK; k++){
          rc = profsumInsXpApply(q->pIns, &aIns[iIns++],
                                 bTake ? (profsum_ps)q->insTsNs*1000 + it->u.ev.ts : 0,
                                 bTake ? it->u.ev.dur : 0);
        }
      }
    }
  }
  return rc;
}

/* Batches whose insights' records the producer applied, since the
** process started (profsumXpInsByProducer). */
static int64_t nInsByProducer = 0;

/* See summary_engine.h. */
int64_t profsumXpInsByProducer(void){
  return __atomic_load_n(&nInsByProducer, __ATOMIC_RELAXED);
}

/* Apply the records of slot i, the next batch to apply (q->insNext, its
** state XS_OPEN), with q->mu held: claimed (XS_BUSY), applied with the
** mutex let go, which is held again on return; then the batch after it is
** the next to apply, and a side that waits for it hears of it.
** bProducer: the producer runs it (counted). */
static void xpInsRun(XpPipe *q, int i, int bProducer){
  XpBatch *b = &q->aSlot[i];
  int rc;
  b->insState = XS_BUSY;
  pthread_mutex_unlock(&q->mu);
  rc = xpInsApply(q, b);
  if( bProducer ) __atomic_add_fetch(&nInsByProducer, 1, __ATOMIC_RELAXED);
  pthread_mutex_lock(&q->mu);
  b->insRc = rc;
  b->insState = XS_DONE;
  q->insNext = (i+1) % XP_NSLOT;
  pthread_cond_broadcast(&q->cv);
}

/* The producer, with q->mu held: apply the records of the next batch to
** apply, when it is handed over and no side has taken it yet.  1 when it
** did. */
static int xpInsNext(XpPipe *q){
  int i = q->insNext;
  if( (i - q->iHead + XP_NSLOT) % XP_NSLOT>=q->nPub || q->aSlot[i].insState!=XS_OPEN ) return 0;
  xpInsRun(q, i, 1);
  return 1;
}

/* Hand the producer's batch over and get an empty one.  0 to go on, 1
** when the consumer stopped. */
static int xpFlush(XpPipe *q){
  XpBatch *b = &q->aSlot[q->iFill];
  int stop = 0;
  xpCommit(q);
#if defined(__SSE2__)
  _mm_sfence();                   /* the streamed items before the hand-over */
#endif
  if( !q->bThread ){
    int rc = xpConsume(q, b);
    xpBatchEmpty(b);
    if( rc!=SQLITE_OK ){ q->cRc = rc; q->bStop = 1; q->stopFlag = 1; }
    return q->bStop;
  }
  pthread_mutex_lock(&q->mu);
  q->nPub++;
  if( q->bConsWait && q->nPub>=XP_WAKE ) pthread_cond_signal(&q->cv);
  q->iFill = (q->iFill+1) % XP_NSLOT;
#ifdef PROFSUM_XP_INS_EAGER
  /* (a test build: the producer applies what it can at once, so that the
  ** tests run this side's apply whatever the threads' speeds) */
  while( !q->bStop && xpInsNext(q) ){}
#endif
  if( q->nPub==XP_NSLOT && !q->bStop ){
    /* the ring is full: wait until half of it is free (one wake-up per
    ** half ring, not per batch), applying the insights' records of the
    ** batches handed over meanwhile, in order, where the engine side has
    ** not yet */
    while( q->nPub>XP_NSLOT/2 && !q->bStop ){
      if( xpInsNext(q) ) continue;
      q->bProdWait = 1;
      pthread_cond_wait(&q->cv, &q->mu);
      q->bProdWait = 0;
    }
  }
  stop = q->bStop;
  pthread_mutex_unlock(&q->mu);
  xpBatchEmpty(&q->aSlot[q->iFill]);
  return stop;
}

/* Wait until the consumer has taken every item made so far (the plane's
** metadata, which the items' strings were copied from, may go then).
** 0 to go on, 1 when the consumer stopped. */
static int xpBarrier(XpPipe *q){
  int stop;
  if( q->aSlot[q->iFill].n>0 && xpFlush(q) ) return 1;
  if( !q->bThread ) return q->bStop;
  pthread_mutex_lock(&q->mu);
  q->bBarrier = 1;
  if( q->bConsWait ) pthread_cond_signal(&q->cv);
  while( q->nPub>0 && !q->bStop ){
    q->bProdWait = 1;
    pthread_cond_wait(&q->cv, &q->mu);
    q->bProdWait = 0;
  }
  q->bBarrier = 0;
  stop = q->bStop;
  pthread_mutex_unlock(&q->mu);
  return stop;
}

/* Ask for the cache lines of the array a (nCap bytes) from where the
** writes are (nUsed bytes in) to XP_AHEAD_BYTES beyond, those not asked
** for yet (*pDone: the bytes asked for so far).  The consumer's core read
** these lines when the slot last went round; taking each back only as it
** is written stalled the decoding side on every one (up to a quarter of
** its time on this project's test machines), where asked for ahead the
** transfers overlap. */
static void xpAhead(const void *a, size_t nUsed, size_t nCap, size_t *pDone){
  size_t i = *pDone>nUsed ? *pDone : nUsed, end = nUsed + XP_AHEAD_BYTES;
  if( end>nCap ) end = nCap;            /* an array not made yet: nCap 0 */
  if( i>=end ) return;
  for(i &= ~(size_t)63; i<end; i+=64) profsumPrefetchW((uintptr_t)a + i);
  *pDone = end;
}

static XpItem *xpPush(XpPipe *q, int bTxt, int nIns, int64_t nByte){
  XpBatch *b = &q->aSlot[q->iFill];
  XpItem *it;
  if( __atomic_load_n(&q->stopFlag, __ATOMIC_RELAXED) ) return 0;
  xpCommit(q);                    /* the item made before this one */
  if( b->n>=XP_BATCH_N || (bTxt && b->nTxt>=XP_BATCH_N) || b->nIns+nIns>XP_BATCH_N
   || (b->n>0 && b->nByte+nByte>XP_BATCH_BYTES) ){
    if( xpFlush(q) ) return 0;
    b = &q->aSlot[q->iFill];
  }
  if( nIns>0 && b->aIns==0 ){
    b->aIns = sqlite3_malloc64(sizeof(ProfsumInsXpOp)*XP_BATCH_N);
    if( b->aIns==0 ){ q->prRc = SQLITE_NOMEM; return 0; }
  }
  if( b->nByte+nByte>b->nAlloc ){
    int64_t nNew = b->nAlloc ? b->nAlloc : 16384;
    char *a;
    while( nNew<b->nByte+nByte ) nNew *= 2;
    a = sqlite3_realloc64(b->aByte, (sqlite3_uint64)nNew);
    if( a==0 ){ q->prRc = SQLITE_NOMEM; return 0; }
    b->aByte = a; b->nAlloc = nNew;
  }
  xpAhead(b->aTxt, sizeof(XpTxt)*(size_t)b->nTxt, sizeof(XpTxt)*XP_BATCH_N, &b->aAhead[0]);
  xpAhead(b->aIns, sizeof(ProfsumInsXpOp)*(size_t)b->nIns,
          b->aIns ? sizeof(ProfsumInsXpOp)*XP_BATCH_N : 0, &b->aAhead[1]);
  xpAhead(b->aByte, (size_t)b->nByte, (size_t)b->nAlloc, &b->aAhead[2]);
  q->pStageTo = &b->a[b->n++];
  it = &q->stage;
  memset(it, 0, sizeof(*it));
  it->iTxt = -1;
  return it;
}

/* Copy z[0..n) to the end of the producer's batch bytes (room made by
** xpPush), NUL-terminated: its offset. */
static int64_t xpPutBytes(XpPipe *q, const char *z, int64_t n){
  XpBatch *b = &q->aSlot[q->iFill];
  int64_t o = b->nByte;
  if( n>0 ) memcpy(b->aByte+o, z, (size_t)n);
  b->aByte[o+n] = 0;
  b->nByte += n+1;
  return o;
}

/* Diagnostics of the XSpace decoder (producer side): an XI_DIAG item,
** under the kind and detail the decoder gives (profsum_diagnostics lists
** the same); invalid UTF-8 is also counted for its quality warning (the
** reference fails the file for it). */
static void xpDiag(void *pCtx, int64_t idx, int64_t off, const char *zKind, const char *zDetail){
  XpPipe *q = (XpPipe*)pCtx;
  int64_t n = zDetail ? (int64_t)strlen(zDetail) : 0;
  XpItem *it;
  if( strcmp(zKind, "invalid_utf8")==0 ) q->nBadUtf8++;
  it = xpPush(q, 0, 0, n+1);
  if( it==0 ) return;
  it->eKind = XI_DIAG;
  it->idx = idx;
  it->iOffset = off;
  it->u.dg.zKind = zKind;
  it->u.dg.nDetail = zDetail ? n : -1;
  it->u.dg.oDetail = xpPutBytes(q, zDetail ? zDetail : "", n);
}

/* Append z[0..n) to the producer's scratch bytes: its offset, or -1 when
** out of memory. */
static int64_t xpScr(XpPipe *q, const char *z, int64_t n){
  int64_t o = q->nScr;
  char *a = profsumGrowArray(q->aScr, q->nScr+n, &q->nAllocScr, 1, 256);
  if( a==0 ) return -1;
  q->aScr = a;
  if( n>0 ) memcpy(q->aScr+o, z, (size_t)n);
  q->aScr[o+n] = 0;
  q->nScr += n+1;
  return o;
}

/* The text of stat st when its value is a string (str, bytes with U+FFFD
** for what is not UTF-8, ref: the referenced name or the key in decimal),
** copied to the scratch bytes (*po, *pn): 1.  0 when st is 0 or holds a
** number, or on an error (*pRc). */
static int xpStr(XpPipe *q, const ProfsumXpStat *st, int64_t *po, int64_t *pn, int *pRc){
  const char *z = 0; int64_t n = 0;
  *pRc = SQLITE_OK;
  if( st==0 ) return 0;
  if( st->eType==PROFSUM_XV_STR ){
    z = st->z; n = st->n;
  }else if( st->eType==PROFSUM_XV_BYTES || st->eType==PROFSUM_XV_REF ){
    if( (*pRc = profsumXpStatText(q->p, st, &z, &n))!=SQLITE_OK ) return 0;
    if( z==0 ) return 0;
  }else{
    return 0;
  }
  if( (*po = xpScr(q, z, n))<0 ){ *pRc = SQLITE_NOMEM; return 0; }
  *pn = n;
  return 1;
}

/* 1 when the stats mapped into ap make the reference fail (summary §6.1:
** its int() of a step_num or step double, or its str(int()) of a run_id
** double, of a NaN or an infinity raises): the first of step_num, step
** that it would read (an integer, a double, a string int() reads) is such
** a double, or run_id is.  The reference computes these for every named
** event metadata and for every event it takes that has stats, and stops
** on the file; profsum reads the value as absent. */
static int xpNonFinite(XpPipe *q, const ProfsumXpStat *const *ap){
  const ProfsumXpStat *st = ap[XK_RUN_ID];
  int k;
  if( st && st->eType==PROFSUM_XV_DOUBLE && !isfinite(st->rVal) ) return 1;
  for(k=XK_STEP_NUM; k<=XK_STEP; k++){
    const char *z = 0;
    int64_t n = 0, v;
    st = ap[k];
    if( st==0 ) continue;
    if( st->eType==PROFSUM_XV_INT64 || st->eType==PROFSUM_XV_UINT64 ) return 0;
    if( st->eType==PROFSUM_XV_DOUBLE ) return !isfinite(st->rVal);
    if( st->eType==PROFSUM_XV_STR ){ z = st->z; n = st->n; }
    else if( (st->eType==PROFSUM_XV_BYTES || st->eType==PROFSUM_XV_REF)
          && profsumXpStatText(q->p, st, &z, &n)!=SQLITE_OK ) return 0;
    if( z && profsumPyInt(z, n, &v)!=-1 ) return 0;  /* a step: read no further */
  }
  return 0;
}

/* Count a stat mapping of xpNonFinite at byte offset off. */
static void xpNonFiniteAt(XpPipe *q, const ProfsumXpStat *const *ap, int64_t off){
  if( xpNonFinite(q, ap) && q->nNonFinite++==0 ) q->oFirstNonFinite = off;
}

/* The texts of summary §6.1 of event ev (metadata m), from its metadata's
** stats and its own, into *t (slices of the scratch bytes, reset here). */
static int xpExtract(XpPipe *q, const ProfsumXpEvent *ev, const ProfsumXpEventMeta *m, XpTxt *t){
  const ProfsumXpStat *ap[XK_N];
  ProfsumXpStat aView[XK_N];
  int64_t o, n, oT, nT;
  int rc = SQLITE_OK, k;
  q->nScr = 0;
  memset(ap, 0, sizeof(ap));
  xpMapStats(m->aStat, m->nStat, ap, aView);
  xpMapStats(ev->aStat, ev->nStat, ap, aView);
  if( ev->nStat>0 ) xpNonFiniteAt(q, ap, ev->iOffset);   /* the metadata's alone: at the plane */
  t->nTfop = t->nSrc = t->nSig = t->nRun = -1;
  t->oTfop = t->oSrc = t->oSig = t->oRun = 0;
  t->rawHostMem = 0;
  t->hasStep = 0;
  t->step = 0;
  if( m->nDisplay>0 ){ t->oName = xpScr(q, m->zDisplay, m->nDisplay); t->nName = m->nDisplay; }
  else{ t->oName = xpScr(q, m->zName, m->nName); t->nName = m->nName; }
  if( t->oName<0 ) return SQLITE_NOMEM;
  /* tf_op, with the XlaModule rule */
  if( xpStr(q, ap[XK_TF_OP], &oT, &nT, &rc) && nT>0 ){
    int64_t a = 0, b = nT;
    const char *zT = q->aScr + oT;
    profsumPyStrip((const unsigned char*)zT, &a, &b);     /* Python's strip() */
    while( b>a && zT[b-1]==':' ) b--;
    if( b-a==9 && memcmp(zT+a, "XlaModule", 9)==0
     && xpStr(q, ap[XK_NAME], &o, &n, &rc) && n>0 ){
      t->oTfop = o; t->nTfop = n;
    }else if( rc==SQLITE_OK ){
      t->oTfop = oT; t->nTfop = nT;
    }
  }
  if( rc ) return rc;
  /* source: the first string of source, source_file, file_name */
  for(k=XK_SOURCE; k<=XK_FILE_NAME && rc==SQLITE_OK; k++){
    if( xpStr(q, ap[k], &o, &n, &rc) && n>0 ){
      t->oSrc = o; t->nSrc = n;
      break;
    }
  }
  if( rc ) return rc;
  /* long_name (its shape signature): the string, else the raw name when
  ** it differs from the shown name */
  {
    int has = xpStr(q, ap[XK_LONG_NAME], &o, &n, &rc) && n>0;
    /* the raw name's S(5), as xprof reads it: without a long_name stat the
    ** long text is the raw name (its flag comes with the signature), and
    ** without a display name the shown name is (the engine reads it) */
    t->rawHostMem = has && m->nDisplay>0 && profsumEngHasHostMem(m->zName, m->nName);
    if( rc ) return rc;
    if( !has && m->nDisplay>0 && (m->nName!=m->nDisplay || memcmp(m->zName, m->zDisplay, (size_t)m->nName)!=0) ){
      if( (o = xpScr(q, m->zName, m->nName))<0 ) return SQLITE_NOMEM;
      n = m->nName;
      has = n>0;
    }
    if( has ){ t->oSig = o; t->nSig = n; }
  }
  /* run_id: a string as is; a number → the decimal text of its integer
  ** part (toward zero) */
  {
    const ProfsumXpStat *st = ap[XK_RUN_ID];
    char zBuf[400];
    if( xpStr(q, st, &o, &n, &rc) ){
      t->oRun = o; t->nRun = n;
    }else if( rc==SQLITE_OK && st ){
      zBuf[0] = 0;
      if( st->eType==PROFSUM_XV_INT64 ) sqlite3_snprintf(sizeof(zBuf), zBuf, "%lld", (long long)st->iVal);
      else if( st->eType==PROFSUM_XV_UINT64 ) sqlite3_snprintf(sizeof(zBuf), zBuf, "%llu", (unsigned long long)st->uVal);
      else if( st->eType==PROFSUM_XV_DOUBLE && isfinite(st->rVal) ){
        double tr = trunc(st->rVal);
        if( tr==0.0 ) memcpy(zBuf, "0", 2);
        else snprintf(zBuf, sizeof(zBuf), "%.0f", tr);   /* exact: an integral double */
      }
      if( zBuf[0] ){
        n = (int64_t)strlen(zBuf);
        if( (o = xpScr(q, zBuf, n))<0 ) return SQLITE_NOMEM;
        t->oRun = o; t->nRun = n;
      }
    }
    if( rc ) return rc;
  }
  /* step_num, then step: an integer; a float toward zero; a string by
  ** Python int() (unparsable: the next key).  A value the reference reads
  ** but 64 bits cannot hold (an unsigned integer from 2^63, a float of
  ** 2^63 or more, such a string) ends the search with no step, as for
  ** JSON (docs/summary.md): the next key is not the reference's step. */
  for(k=XK_STEP_NUM; k<=XK_STEP && !t->hasStep; k++){
    const ProfsumXpStat *st = ap[k];
    int64_t v;
    int big = 0;
    if( st==0 ) continue;
    if( st->eType==PROFSUM_XV_INT64 ){ t->step = st->iVal; t->hasStep = 1; }
    else if( st->eType==PROFSUM_XV_UINT64 ){
      if( st->uVal<=(uint64_t)INT64_MAX ){ t->step = (int64_t)st->uVal; t->hasStep = 1; }
      else big = 1;
    }else if( st->eType==PROFSUM_XV_DOUBLE ){
      if( isfinite(st->rVal) && fabs(st->rVal)<0x1p63 ){ t->step = (int64_t)trunc(st->rVal); t->hasStep = 1; }
      else if( isfinite(st->rVal) ) big = 1;
    }else if( xpStr(q, st, &o, &n, &rc) ){
      int r = profsumPyInt(q->aScr+o, n, &v);
      if( r==0 ){ t->step = v; t->hasStep = 1; }
      else if( r==-2 ) big = 1;
    }
    if( rc ) return rc;
    if( big ) break;
  }
  return SQLITE_OK;
}

/* The slice z[0..n) of a plane's or line's name (the text zFmt with i
** when empty), pushed with an item of kind eKind: the item, or 0. */
static XpItem *xpPushNamed(XpPipe *q, int eKind, const char *z, int64_t n, const char *zFmt, int64_t i,
                           int64_t *po, int64_t *pn){
  char zBuf[40];
  XpItem *it;
  if( n==0 ){
    sqlite3_snprintf(sizeof(zBuf), zBuf, zFmt, (long long)i);
    z = zBuf;
    n = (int64_t)strlen(zBuf);
  }
  if( (it = xpPush(q, 0, 0, n+1))==0 ) return 0;
  it->eKind = (uint8_t)eKind;
  *po = xpPutBytes(q, z, n);
  *pn = n;
  return it;
}

#define XP_STOPPED (-1)   /* the producer ends: the consumer stopped */

/* What the producer's walk returns when a push failed: the producer's
** error, or XP_STOPPED (the consumer stopped the walk). */
static int xpPushFailed(const XpPipe *q){
  return q->prRc ? q->prRc : XP_STOPPED;
}

/* The producer's walk of the file: planes, lines, events into items. */
static int xpProduceWalk(XpPipe *q){
  ProfsumXp *p = 0;
  const ProfsumXpPlane *pl;
  const ProfsumXpLine *ln;
  const ProfsumXpEvent *ev;
  int rc;
  rc = profsumXpOpen(q->zFunc, q->zPath, q->xpFlags, xpDiag, q, &p, &q->prErr);
  q->p = p;
  if( rc ) return rc;
  for(;;){
    XpItem *it;
    if( xpBarrier(q) ) return XP_STOPPED;
    if( (rc = profsumXpNextPlane(p, &pl, &q->prErr))!=SQLITE_ROW ) break;
    if( (rc = profsumInsXpPlane(q->pIns, p, pl))!=SQLITE_OK ) return rc;
    if( pl->nEventMetadata>q->nAllocShip ){
      unsigned char *a = sqlite3_realloc64(q->aShip, (sqlite3_uint64)pl->nEventMetadata);
      if( a==0 ) return SQLITE_NOMEM;
      q->aShip = a;
      q->nAllocShip = pl->nEventMetadata;
    }
    q->nShip = pl->nEventMetadata;
    if( q->nShip>0 ) memset(q->aShip, 0, (size_t)q->nShip);
    {
      /* the reference reads the stats of every named event metadata */
      int64_t i;
      for(i=0; i<pl->nEventMetadata; i++){
        const ProfsumXpEventMeta *m = profsumXpEventMetaAt(p, i);
        const ProfsumXpStat *ap[XK_N];
        ProfsumXpStat aView[XK_N];
        if( m==0 || (m->nDisplay==0 && m->nName==0) || m->nStat==0 ) continue;
        memset(ap, 0, sizeof(ap));
        xpMapStats(m->aStat, m->nStat, ap, aView);
        xpNonFiniteAt(q, ap, m->iOffset);
      }
    }
    {
      int64_t o, n;
      if( (it = xpPushNamed(q, XI_PLANE, pl->zName, pl->nName, "xplane:%lld", pl->iPlane, &o, &n))==0 ) return xpPushFailed(q);
      it->idx = pl->iPlane;
      it->u.pl.nMeta = pl->nEventMetadata;
      it->u.pl.oName = o; it->u.pl.nName = n;
      it->u.pl.isDev = pl->nName>=8 && memcmp(pl->zName, "/device:", 8)==0;
    }
    while( (rc = profsumXpNextLine(p, &ln, &q->prErr))==SQLITE_ROW ){
      int hasPrev = 0, unsorted = 0;
      double prevTs = 0.0, prevEnd = 0.0;
      double lineUs = xpLineUs(ln->timestampNs);
      int64_t o, n;
      it = ln->nDisplay>0 ? xpPushNamed(q, XI_LINE, ln->zDisplay, ln->nDisplay, "", 0, &o, &n)
                          : xpPushNamed(q, XI_LINE, ln->zName, ln->nName, "xline:%lld", ln->iLine, &o, &n);
      if( it==0 ) return xpPushFailed(q);
      it->idx = ln->iLine;
      it->u.ln.tid = ln->id!=0 ? ln->id : ln->iLine + 1;
      it->u.ln.tsNs = ln->timestampNs;
      it->u.ln.oName = o; it->u.ln.nName = n;
      while( (rc = profsumXpNextEvent(p, &ev, &q->prErr))==SQLITE_ROW ){
        const ProfsumXpEventMeta *m = ev->pMeta;
        XpTxt t;
        ProfsumInsXpOp aOp[2];
        int hasTxt = 0, bChecked = 0, bNoStat = 0, nOp = 0, bInsMeta, k;
        double fTs = 0.0, fDur = 0.0;
        int eClass;
        if( (rc = profsumInsXpEvent(q->pIns, p, ev, aOp, &nOp))!=SQLITE_OK ) return rc;
        if( ev->eData!=PROFSUM_XD_OFFSET || ev->durationPs<=0 || m==0 || (m->nDisplay==0 && m->nName==0) ){
          eClass = XC_SKIP;
          if( ev->eData==PROFSUM_XD_OFFSET && m && ev->durationPs<=0 ) eClass = ev->durationPs<0 ? XC_NEG : XC_ZERO;
        }else{
          double fEnd;
          int bCache;
          eClass = XC_TAKE;
          xpEvDoubles(lineUs, ev->offsetPs, ev->durationPs, &fTs, &fDur);
          fEnd = fTs + fDur;
          if( hasPrev && (fTs<prevTs || (fTs==prevTs && fEnd>prevEnd)) && !unsorted ){
            unsorted = 1;
            if( (it = xpPush(q, 0, 0, 0))==0 ) return xpPushFailed(q);
            it->eKind = XI_UNSORTED;
            it->idx = ev->iEvent;
            it->iOffset = ev->iOffset;
            it->u.un.fTs = fTs;
            bChecked = 1;
          }
          hasPrev = 1; prevTs = fTs; prevEnd = fEnd;
          bNoStat = ev->nStat==0;
          bCache = bNoStat && m->iMeta>=0 && m->iMeta<q->nShip;
          if( !bCache || !q->aShip[m->iMeta] ){
            if( (rc = xpExtract(q, ev, m, &t))!=SQLITE_OK ) return rc;
            hasTxt = 1;
            if( bCache ) q->aShip[m->iMeta] = 1;
          }
        }
        /* the insights' records of this event go with it, applied
        ** (profsumInsXpApply) once the batch is handed over (xpInsApply) */
        bInsMeta = nOp==1 && aOp[0].fl==PROFSUM_INSOP_META;
        if( (it = xpPush(q, hasTxt, bInsMeta ? 0 : nOp, hasTxt ? q->nScr : 0))==0 ) return xpPushFailed(q);
        if( bInsMeta ){
          it->bInsMeta = 1;
          it->u.ev.insMeta = aOp[0].iMeta;
        }else if( nOp>0 ){
          XpBatch *b = &q->aSlot[q->iFill];
          for(k=0; k<nOp; k++) b->aIns[b->nIns++] = aOp[k];
          it->nIns = (uint8_t)nOp;
        }
        it->eKind = XI_EVENT;
        it->eClass = (uint8_t)eClass;
        it->bChecked = (uint8_t)bChecked;
        it->bNoStat = (uint8_t)bNoStat;
        it->idx = ev->iEvent;
        it->iOffset = ev->iOffset;
        if( eClass==XC_TAKE ){
          it->u.ev.iMeta = m->iMeta;
          it->u.ev.ts = ev->offsetPs;
          it->u.ev.dur = ev->durationPs;
        }
        if( hasTxt ){
          XpBatch *b = &q->aSlot[q->iFill];
          int64_t base = b->nByte;
          if( q->nScr>0 ) memcpy(b->aByte+base, q->aScr, (size_t)q->nScr);
          b->nByte += q->nScr;
          t.oName += base; t.oTfop += base; t.oSrc += base; t.oSig += base; t.oRun += base;
          it->iTxt = (int16_t)b->nTxt;
          b->aTxt[b->nTxt++] = t;
        }
      }
      if( rc!=SQLITE_DONE ) return rc;
    }
    if( rc!=SQLITE_DONE ) return rc;
  }
  if( q->prRc ) return q->prRc;          /* out of memory in xpPush */
  if( __atomic_load_n(&q->stopFlag, __ATOMIC_RELAXED) ) return XP_STOPPED;
  return rc;
}

/* The producer: the walk, then its end as an XI_END item (its code and
** message in q->prRc, q->prErr). */
static void xpProduce(XpPipe *q){
  int rc = xpProduceWalk(q);
  XpItem *it;
  if( rc==XP_STOPPED ) return;
  if( rc!=SQLITE_DONE && rc!=SQLITE_NOMEM && q->prErr==0 && q->p ){
    /* an error outside the walk's Next calls (a stat's bytes that could
    ** not be read): the decoder's message */
    q->prErr = profsumXpErrMsg(q->p);
  }
  q->prRc = rc;
  if( (it = xpPush(q, 0, 0, 0))==0 ) return;   /* stopped (or out of memory: prRc) */
  it->eKind = XI_END;
  xpFlush(q);
}

/* The producer thread's stop check (profsumStopPush): the consumer
** stopped. */
static int xpProducerStop(void *pArg){
  return __atomic_load_n(&((XpPipe*)pArg)->stopFlag, __ATOMIC_RELAXED);
}

/* The producer thread (pArg: the XpPipe): the walk under its own stop
** check, then bEnded for a consumer that waits. */
static void *xpProducerMain(void *pArg){
  XpPipe *q = (XpPipe*)pArg;
  ProfsumStopCheck prev = profsumStopPush(xpProducerStop, q);
  xpProduce(q);
  profsumStopPop(prev);
  pthread_mutex_lock(&q->mu);
  q->bEnded = 1;
  if( q->bConsWait ) pthread_cond_signal(&q->cv);
  pthread_mutex_unlock(&q->mu);
  return 0;
}

/* ------------------------------------------------------------------ */
/* The engine side                                                     */
/* ------------------------------------------------------------------ */

/* Start plane nMeta's memo of derived fields: one empty entry per
** event_metadata entry.  SQLITE_OK or SQLITE_NOMEM. */
static int xpPlaneMemo(XpWalk *w, int64_t n){
  w->nDer = 0;
  w->nMc = 0;
  if( n>w->nAllocMc ){
    int64_t *a = sqlite3_realloc64(w->aMc, sizeof(int64_t)*(sqlite3_uint64)n);
    if( a==0 ) return SQLITE_NOMEM;
    w->aMc = a;
    w->nAllocMc = n;
  }
  if( n>0 ) memset(w->aMc, 0, sizeof(int64_t)*(size_t)n);
  w->nMc = n;
  return SQLITE_OK;
}

/* Intern the texts t (slices of a) into the derived fields *d, in the
** order of their string ids. */
static int xpDeriveTxt(ProfsumEngine *e, const char *a, const XpTxt *t, XpDerived *d){
  int rc;
  d->tfop = d->source = d->sig = d->runid = -1;
  d->hostMem = 0;
  d->hasStep = t->hasStep;
  d->step = t->step;
  d->keyTrk = d->key = -1;
  if( (rc = profsumEngIntern(e, a+t->oName, t->nName, &d->name))!=SQLITE_OK ) return rc;
  if( t->nTfop>=0 && (rc = profsumEngIntern(e, a+t->oTfop, t->nTfop, &d->tfop))!=SQLITE_OK ) return rc;
  if( t->nSrc>=0 && (rc = profsumEngIntern(e, a+t->oSrc, t->nSrc, &d->source))!=SQLITE_OK ) return rc;
  if( t->nSig>=0 && (rc = profsumEngSig(e, d->name, a+t->oSig, t->nSig, &d->sig, &d->hostMem))!=SQLITE_OK ) return rc;
  if( t->rawHostMem ) d->hostMem = 1;
  if( t->nRun>=0 && (rc = profsumEngIntern(e, a+t->oRun, t->nRun, &d->runid))!=SQLITE_OK ) return rc;
  return SQLITE_OK;
}

/* The first event of the current line (ordinal idx, offset off, fTs) out
** of timeline order: its diagnostic, and the message kept for the quality
** warning when it is the file's first such line.  The reference's words
** name the kind of track it makes of the line (summary §6.1): a "trace"
** track for a device-op line, and in exclusive_global mode for any other
** device line but Steps (the mode is the document's, not the import's:
** both are given then), else an "XPlane" track. */
static int xpUnsortedLine(XpWalk *w, int64_t idx, int64_t off, double fTs){
  ProfsumEngine *e = w->e;
  const char *zThread = profsumEngStr(e, w->thread);
  int bGlobalOnly = w->isDev && !w->isDevOp
                 && profsumEngThreadKind(e, w->thread)!=PROFSUM_THREAD_STEPS;
  char *z = sqlite3_mprintf("line %lld '%s' of plane %lld '%s' (pid %lld, tid %lld): event %lld "
      "(ts %!.17g us) is not in timeline order (ts ascending, the longer first); the reference "
      "summarizer stops with 'Events on %s track (%lld, %lld) are not in timeline order.'%s; "
      "profsum sorted the line",
      (long long)w->iLine, zThread, (long long)w->iPlane, profsumEngStr(e, w->proc),
      (long long)w->pid, (long long)w->tid, (long long)idx, fTs,
      w->isDev && w->isDevOp ? "trace" : "XPlane", (long long)w->pid, (long long)w->tid,
      bGlobalOnly ? " ('Events on trace track ...' with breakdown_mode exclusive_global)" : "");
  if( z==0 ) return SQLITE_NOMEM;
  profsumEngDiag(e, idx, off, "xplane_unsorted_line", z);
  if( w->nUnsortedLines++==0 ) w->zFirstUnsorted = z; else sqlite3_free(z);
  return SQLITE_OK;
}

/* The stop check of event idx (every 16384th). */
static int xpStopCheck(XpWalk *w, int64_t idx){
  if( (idx & 0x3fff)==0 && profsumEngStopAsked(w->e) ){
    sqlite3_free(w->zErr);
    w->zErr = sqlite3_mprintf("%s: interrupted", w->zFunc);
    return SQLITE_INTERRUPT;
  }
  return SQLITE_OK;
}

/* The current line ended (a new line or plane starts, or the walk
** ends): its track, if it had events, is complete, and the engine
** finishes ordering it (profsumEngTrackDone; the events that came before
** were ordered batch by batch, profsumEngTrackPart). */
static void xpLineEnd(XpWalk *w){
  if( w->trk>=0 ) profsumEngTrackDone(w->e, w->trk);
  w->trk = -1;
}

/* Feed the items of batch b to the engine: SQLITE_OK (go on), SQLITE_DONE
** (the walk ended well), or an error code (w->zErr: its message, or 0 for
** the engine's own). */
static int xpConsume(XpPipe *q, XpBatch *b){
  XpWalk *w = q->w;
  ProfsumEngine *e = w->e;
  /* the batch's fields read once: it does not change while consumed */
  const char *aB = b->aByte;
  const XpItem *aItem = b->a;
  const XpTxt *aTxt = b->aTxt;
  const int nItem = b->n;
  int i, rc = SQLITE_OK;
  for(i=0; i<nItem && rc==SQLITE_OK; i++){
    const XpItem *it = &aItem[i];
    switch( it->eKind ){
      case XI_EVENT: {
        XpDerived dOwn, *pd;
        ProfsumEngEvent a;
        int32_t key = -1;
        if( !it->bChecked && (rc = xpStopCheck(w, it->idx))!=SQLITE_OK ) break;
        if( it->eClass!=XC_TAKE ){
          if( it->eClass!=XC_SKIP ){
            /* the kind and detail profsum_diagnostics(path) gives the event */
            if( it->eClass==XC_NEG ){
              profsumEngDiag(e, it->idx, it->iOffset, "negative_duration",
                             "X event with a negative dur: a row, but on no track");
            }else{
              profsumEngDiag(e, it->idx, it->iOffset, "zero_duration",
                             "X event with dur 0: a row, but on no track");
            }
          }
          break;
        }
        if( it->iTxt>=0 ){
          int64_t iMeta = it->u.ev.iMeta;
          if( (rc = xpDeriveTxt(e, aB, &aTxt[it->iTxt], &dOwn))!=SQLITE_OK ) break;
          pd = &dOwn;
          if( it->bNoStat && iMeta>=0 && iMeta<w->nMc ){
            XpDerived *aNew = profsumGrowArray(w->aDer, w->nDer, &w->nAllocDer, sizeof(XpDerived), 64);
            if( aNew==0 ){ rc = SQLITE_NOMEM; break; }
            w->aDer = aNew;
            w->aDer[w->nDer++] = dOwn;
            w->aMc[iMeta] = w->nDer;
            pd = &w->aDer[w->nDer-1];
          }
        }else{
          pd = &w->aDer[w->aMc[it->u.ev.iMeta]-1];
        }
        if( w->trk<0 ){
          if( (rc = profsumEngNewTrack(e, w->pid, w->tid, w->proc, w->thread, &w->trk))!=SQLITE_OK ) break;
          profsumEngTrackLineNs(e, w->trk, w->tsNs);
        }
        a.idx = it->idx;
        a.iOffset = it->iOffset;
        a.ts = (profsum_ps)w->tsNs*1000 + it->u.ev.ts;
        a.dur = it->u.ev.dur;
        xpEvDoubles(w->lineUs, it->u.ev.ts, it->u.ev.dur, &a.fTs, &a.fDur);
        a.trk = w->trk;
        a.name = pd->name;
        a.tfop = pd->tfop;
        a.source = pd->source;
        a.sig = pd->sig;
        a.hostMem = pd->hostMem;
        a.runid = pd->runid;
        a.hasStep = pd->hasStep;
        a.step = pd->step;
        a.key = pd->keyTrk==w->trk ? pd->key : -1;
        if( (rc = profsumEngAdd(e, &a, &key))!=SQLITE_OK ) break;
        if( key>=0 ){
          /* the next event of this metadata on this line: the same key
          ** (kept in the cache entry; an event's own copy is dropped) */
          pd->keyTrk = w->trk;
          pd->key = key;
        }
        break;
      }
      case XI_UNSORTED:
        if( (rc = xpStopCheck(w, it->idx))!=SQLITE_OK ) break;
        profsumEngOrderLater(e);        /* the engine sorts the line after the read */
        rc = xpUnsortedLine(w, it->idx, it->iOffset, it->u.un.fTs);
        break;
      case XI_DIAG:
        profsumEngDiag(e, it->idx, it->iOffset, it->u.dg.zKind, it->u.dg.nDetail<0 ? 0 : aB+it->u.dg.oDetail);
        break;
      case XI_PLANE:
        xpLineEnd(w);
        w->iPlane = it->idx;
        w->pid = it->idx + 1;
        w->isDev = it->u.pl.isDev;
        rc = profsumEngIntern(e, aB+it->u.pl.oName, it->u.pl.nName, &w->proc);
        if( rc==SQLITE_OK ) rc = profsumEngName(e, 0, w->pid, 0, w->proc);
        if( rc==SQLITE_OK ) rc = xpPlaneMemo(w, it->u.pl.nMeta);
        break;
      case XI_LINE: {
        xpLineEnd(w);
        w->iLine = it->idx;
        w->tid = it->u.ln.tid;
        w->tsNs = it->u.ln.tsNs;
        w->lineUs = xpLineUs(w->tsNs);
        rc = profsumEngIntern(e, aB+it->u.ln.oName, it->u.ln.nName, &w->thread);
        if( rc==SQLITE_OK ) rc = profsumEngName(e, 1, w->pid, w->tid, w->thread);
        if( rc ) break;
        w->isDevOp = profsumEngThreadKind(e, w->thread)==PROFSUM_THREAD_DEVOP;
        break;
      }
      case XI_END:
        rc = q->prRc;
        if( q->prErr ){ sqlite3_free(w->zErr); w->zErr = q->prErr; q->prErr = 0; }
        if( rc==SQLITE_OK ) rc = SQLITE_DONE;
        if( rc==SQLITE_DONE ) xpLineEnd(w);     /* the walk ended well */
        break;
    }
  }
  /* the line's events so far, ordered while the decoding side reads on */
  if( rc==SQLITE_OK && w->trk>=0 ) profsumEngTrackPart(e, w->trk);
  if( rc==SQLITE_OK || rc==SQLITE_DONE ){
    /* the batch's insights' records, unless the producer applied them (or
    ** does: wait for it) */
    int rcIns;
    if( !q->bThread ){
      rcIns = xpInsApply(q, b);
    }else{
      int i = (int)(b - q->aSlot);
      pthread_mutex_lock(&q->mu);
      while( b->insState==XS_BUSY ) pthread_cond_wait(&q->cv, &q->mu);
      /* (every batch before this one was applied before it was
      ** released: this one is the next to apply) */
      if( b->insState==XS_OPEN ) xpInsRun(q, i, 0);
      rcIns = b->insRc;
      pthread_mutex_unlock(&q->mu);
    }
    if( rcIns!=SQLITE_OK ) rc = rcIns;
  }
  return rc;
}

/* Run the walk: with a producer thread when threads are allowed (and one
** can be made), else in this thread.  SQLITE_DONE or an error code (with
** w->zErr or the engine's message). */
static int xpRunPipe(XpPipe *q){
  int rc = SQLITE_OK, i;
  for(i=0; i<XP_NSLOT; i++){
    q->aSlot[i].pItemMem = sqlite3_malloc64(sizeof(XpItem)*XP_BATCH_N + 64);
    q->aSlot[i].a = q->aSlot[i].pItemMem==0 ? 0 : (XpItem*)profsumAlign64(q->aSlot[i].pItemMem);
    q->aSlot[i].aTxt = sqlite3_malloc64(sizeof(XpTxt)*XP_BATCH_N);
    if( q->aSlot[i].a==0 || q->aSlot[i].aTxt==0 ) return SQLITE_NOMEM;
    if( !profsumThreadsAllowed() ) break;     /* one batch is enough */
  }
  if( profsumThreadsAllowed() && pthread_mutex_init(&q->mu, 0)==0 ){
    if( pthread_cond_init(&q->cv, 0)==0 ){
      q->bThread = 1;
      if( pthread_create(&q->thread, 0, xpProducerMain, q)!=0 ){
        q->bThread = 0;
        pthread_cond_destroy(&q->cv);
      }
    }
    if( !q->bThread ) pthread_mutex_destroy(&q->mu);
  }
  if( !q->bThread ){
    xpProduce(q);
    rc = q->cRc;
    if( rc==SQLITE_OK ) rc = q->prRc ? q->prRc : SQLITE_DONE;   /* out of memory before XI_END */
    return rc;
  }
  for(;;){
    XpBatch *b;
    pthread_mutex_lock(&q->mu);
    /* an empty ring: wait until XP_WAKE batches are ready (one wake-up
    ** for them all), the producer waits for the ring to drain, or ended */
    if( q->nPub==0 && !q->bEnded ){
      q->bConsWait = 1;
      do{
        pthread_cond_wait(&q->cv, &q->mu);
      }while( q->nPub==0 ? !q->bEnded : (q->nPub<XP_WAKE && !q->bBarrier && !q->bEnded) );
      q->bConsWait = 0;
    }
    if( q->nPub==0 ){
      /* the producer ended without its XI_END item (out of memory) */
      pthread_mutex_unlock(&q->mu);
      rc = q->prRc ? q->prRc : SQLITE_NOMEM;
      break;
    }
    pthread_mutex_unlock(&q->mu);
    b = &q->aSlot[q->iHead];
    rc = xpConsume(q, b);
    pthread_mutex_lock(&q->mu);
    q->iHead = (q->iHead+1) % XP_NSLOT;
    q->nPub--;
    if( rc!=SQLITE_OK ){
      q->bStop = 1;
      __atomic_store_n(&q->stopFlag, 1, __ATOMIC_RELAXED);
    }
    if( q->bProdWait && (q->nPub<=XP_NSLOT/2 || q->bStop) ) pthread_cond_signal(&q->cv);
    pthread_mutex_unlock(&q->mu);
    if( rc!=SQLITE_OK ) break;
  }
  pthread_join(q->thread, 0);
  pthread_cond_destroy(&q->cv);
  pthread_mutex_destroy(&q->mu);
  q->bThread = 0;
  return rc;
}

/* Free what the pipe holds (the decoder excepted). */
static void xpPipeFree(XpPipe *q){
  int i;
  for(i=0; i<XP_NSLOT; i++){
    sqlite3_free(q->aSlot[i].pItemMem);
    sqlite3_free(q->aSlot[i].aTxt);
    sqlite3_free(q->aSlot[i].aIns);
    sqlite3_free(q->aSlot[i].aByte);
  }
  sqlite3_free(q->aShip);
  sqlite3_free(q->aScr);
  sqlite3_free(q->prErr);
}

/* The reader's quality warnings into pW: XSpace warnings, then errors
** (§4.1), then this reader's own (no timeline events, unsorted lines,
** invalid UTF-8, NaN or infinite step or run_id stats: q->nNonFinite).
** SQLITE_OK or SQLITE_NOMEM. */
static int xpWarnings(XpWalk *w, const XpPipe *q, sqlite3_str *pW){
  int64_t nBadUtf8 = q->nBadUtf8;
  const ProfsumXpStr *aS;
  int64_t n, i;
  int rc = SQLITE_OK;
  profsumXpStrings(w->p, PROFSUM_XP_WARNINGS, &aS, &n);
  for(i=0; i<n; i++) profsumEngWarnAppend(pW, aS[i].z, aS[i].n);
  profsumXpStrings(w->p, PROFSUM_XP_ERRORS, &aS, &n);
  for(i=0; i<n; i++) profsumEngWarnAppend(pW, aS[i].z, aS[i].n);
  if( profsumEngCount(w->e)==0 ){
    static const char zNo[] = "XPlane protobuf contained no direct timeline events with offset/duration data.";
    profsumEngWarnAppend(pW, zNo, (int64_t)sizeof(zNo)-1);
  }
  if( w->nUnsortedLines>0 ){
    char *z = sqlite3_mprintf("%lld XPlane %s not in timeline order, which the reference summarizer "
        "rejects (it needs each line sorted by ts, the longer event first); profsum sorted %s. "
        "First: %s. See profsum_diagnostic (kind xplane_unsorted_line).",
        (long long)w->nUnsortedLines, w->nUnsortedLines==1 ? "line is" : "lines are",
        w->nUnsortedLines==1 ? "it" : "them", w->zFirstUnsorted);
    if( z ){ profsumEngWarnAppend(pW, z, (int64_t)strlen(z)); sqlite3_free(z); }
    else rc = SQLITE_NOMEM;
  }
  if( nBadUtf8>0 ){
    char *z = sqlite3_mprintf("%lld string %s of the XPlane %s not valid UTF-8, which the reference "
        "summarizer rejects (a decode error: in a profile folder it reads the JSON trace instead); "
        "profsum read %s with U+FFFD. See profsum_diagnostic (kind invalid_utf8).",
        (long long)nBadUtf8, nBadUtf8==1 ? "field" : "fields",
        nBadUtf8==1 ? "is" : "are", nBadUtf8==1 ? "it" : "them");
    if( z ){ profsumEngWarnAppend(pW, z, (int64_t)strlen(z)); sqlite3_free(z); }
    else rc = SQLITE_NOMEM;
  }
  if( rc==SQLITE_OK && q->nNonFinite>0 ){
    char *z = sqlite3_mprintf("%lld step_num, step or run_id %s of the XPlane %s a NaN or infinite "
        "double, which the reference summarizer cannot read (Python's int() of it fails, and the "
        "whole summary with it); profsum read %s as absent. First at byte %lld.",
        (long long)q->nNonFinite, q->nNonFinite==1 ? "stat" : "stats",
        q->nNonFinite==1 ? "is" : "are", q->nNonFinite==1 ? "it" : "them", (long long)q->oFirstNonFinite);
    if( z ){ profsumEngWarnAppend(pW, z, (int64_t)strlen(z)); sqlite3_free(z); }
    else rc = SQLITE_NOMEM;
  }
  if( rc==SQLITE_OK && sqlite3_str_errcode(pW) ) rc = SQLITE_NOMEM;
  return rc;
}

/* See engine_intake.h. */
int profsumEngineReadXPlane(ProfsumEngine *e, const char *zPath){
  const char *zFunc = profsumEngFunc(e);
  sqlite3_str *pW = 0;
  XpWalk w;
  XpPipe q;
  XpHash hash;
  int rc;
  memset(&w, 0, sizeof(w));
  memset(&q, 0, sizeof(q));
  w.e = e;
  w.zFunc = zFunc;
  w.trk = -1;
  q.w = &w;
  q.zPath = zPath;
  q.zFunc = zFunc;
  q.xpFlags = PROFSUM_XP_LENIENT_UTF8 | (profsumEngDiagAll(e) ? PROFSUM_XP_ALLDETAILS : 0);
  q.pIns = profsumEngineInsights(e);
  xpHashStart(&hash, zPath);
  if( hash.pBg==0 && hash.rc ) goto hash_failed;
  rc = xpRunPipe(&q);
  w.p = q.p;
  if( rc==SQLITE_DONE ) rc = SQLITE_OK;
  if( rc==SQLITE_OK ) rc = profsumEngDiagRc(e);
  if( rc==SQLITE_OK ){
    pW = sqlite3_str_new(0);
    rc = xpWarnings(&w, &q, pW);
    xpHashJoin(&hash);
    if( rc==SQLITE_OK && hash.rc==SQLITE_OK ){
      rc = profsumEngFinish(e, profsumXpEventsSeen(q.p), "us", hash.zHex, hash.nSize, pW);
    }
  }else if( w.zErr ){
    /* the decoder's message (an error of the engine's, e.g. too many
    ** events, has its message set already) */
    profsumEngSetError(e, w.zErr);
    w.zErr = 0;
  }
  if( pW ) sqlite3_free(sqlite3_str_finish(pW));
  sqlite3_free(w.zErr);
  sqlite3_free(w.zFirstUnsorted);
  sqlite3_free(w.aDer);
  sqlite3_free(w.aMc);
  xpPipeFree(&q);
  profsumXpClose(q.p);
  xpHashJoin(&hash);
  if( hash.rc==SQLITE_OK ) return rc;
hash_failed:
  /* a file the hash cannot read: its error, whatever the decoding said
  ** (the hash ran first before it ran beside the decoding) */
  profsumEngSetError(e, sqlite3_mprintf("%s: %s", zFunc, hash.zErr ? hash.zErr : sqlite3_errstr(hash.rc)));
  sqlite3_free(hash.zErr);
  return hash.rc;
}
