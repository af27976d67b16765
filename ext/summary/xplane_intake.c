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
** is not UTF-8 is read with U+FFFD (kind xplane_invalid_utf8).
*/
#include "profsum_int.h"
#include "profsum_reader.h"
#include "engine_intake.h"
#include "xplane_pb.h"
#include "hash.h"
#include "insights.h"

#include <math.h>
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
static const char *const azXpKey[XK_N] = {
  "tf_op", "name", "source", "source_file", "file_name", "long_name", "run_id", "step_num", "step"
};

/* Map the stats a[0..n) that have a value and a known, non-empty name
** into ap[XK_*] (a later stat replaces an earlier one).  A stat holding
** only compressed_str_value (a field the reference does not know) has no
** value. */
static void xpMapStats(const ProfsumXpStat *a, int n, const ProfsumXpStat **ap){
  int i, k;
  for(i=0; i<n; i++){
    const ProfsumXpStat *st = &a[i];
    if( st->zName==0 || st->nName==0 || st->eType==PROFSUM_XV_NONE || st->eType==PROFSUM_XV_CSTR ) continue;
    for(k=0; k<XK_N; k++){
      if( (int64_t)strlen(azXpKey[k])==st->nName && memcmp(azXpKey[k], st->zName, (size_t)st->nName)==0 ){
        ap[k] = st;
        break;
      }
    }
  }
}

/* Copy z[0..n) into the growing buffer *ppB (capacity *pnB), NUL-terminated. */
static int xpCopy(char **ppB, int64_t *pnB, const char *z, int64_t n){
  if( n+1>*pnB ){
    int64_t nNew = (n+1)*2;
    char *a = sqlite3_realloc64(*ppB, (sqlite3_uint64)nNew);
    if( a==0 ) return SQLITE_NOMEM;
    *ppB = a; *pnB = nNew;
  }
  if( n ) memcpy(*ppB, z, (size_t)n);
  (*ppB)[n] = 0;
  return SQLITE_OK;
}

/* The text of stat st when its value is a string (str, bytes with U+FFFD
** for what is not UTF-8, ref: the referenced name or the key in decimal),
** copied into *ppB (*pz, *pn): 1.  0 when st is 0 or holds a number. */
static int xpStr(ProfsumXp *p, const ProfsumXpStat *st, char **ppB, int64_t *pnB,
                 const char **pz, int64_t *pn, int *pRc){
  const char *z = 0; int64_t n = 0;
  *pRc = SQLITE_OK;
  if( st==0 ) return 0;
  if( st->eType==PROFSUM_XV_STR ){
    z = st->z; n = st->n;
  }else if( st->eType==PROFSUM_XV_BYTES || st->eType==PROFSUM_XV_REF ){
    if( (*pRc = profsumXpStatText(p, st, &z, &n))!=SQLITE_OK ) return 0;
    if( z==0 ) return 0;
  }else{
    return 0;
  }
  if( (*pRc = xpCopy(ppB, pnB, z, n))!=SQLITE_OK ) return 0;
  *pz = *ppB; *pn = n;
  return 1;
}

/* 1 for the ASCII characters of Python's str.isspace() (what strip()
** removes from an ASCII text). */
static int xpSpace(unsigned char c){
  return c==' ' || (c>=0x09 && c<=0x0d) || (c>=0x1c && c<=0x1f);
}

/* What an event takes from its stats (string ids, -1: absent). */
typedef struct XpDerived {
  int32_t name, tfop, source, sig, runid;
  int hasStep;
  int64_t step;
  int32_t keyTrk, key;  /* the event key these fields made on track keyTrk
                        ** (profsumEngAdd), -1 -1 until one is made */
} XpDerived;

/* The derived fields of summary §6.1 of event ev (name: its shown name's
** id), from its metadata's stats and its own. */
static int xpDerive(ProfsumEngine *e, ProfsumXp *p, const ProfsumXpEvent *ev, int32_t name,
                    XpDerived *d, char **apB, int64_t *anB){
  const ProfsumXpStat *ap[XK_N];
  const ProfsumXpEventMeta *m = ev->pMeta;
  const char *z, *zT; int64_t n, nT;
  int rc = SQLITE_OK, k;
  memset(ap, 0, sizeof(ap));
  xpMapStats(m->aStat, m->nStat, ap);
  xpMapStats(ev->aStat, ev->nStat, ap);
  d->name = name;
  d->tfop = d->source = d->sig = d->runid = -1;
  d->hasStep = 0;
  d->step = 0;
  d->keyTrk = d->key = -1;
  /* tf_op, with the XlaModule rule */
  if( xpStr(p, ap[XK_TF_OP], &apB[0], &anB[0], &zT, &nT, &rc) && nT>0 ){
    int64_t a = 0, b = nT;
    while( a<b && xpSpace((unsigned char)zT[a]) ) a++;
    while( b>a && xpSpace((unsigned char)zT[b-1]) ) b--;
    while( b>a && zT[b-1]==':' ) b--;
    if( b-a==9 && memcmp(zT+a, "XlaModule", 9)==0
     && xpStr(p, ap[XK_NAME], &apB[1], &anB[1], &z, &n, &rc) && n>0 ){
      rc = profsumEngIntern(e, z, n, &d->tfop);
    }else if( rc==SQLITE_OK ){
      rc = profsumEngIntern(e, zT, nT, &d->tfop);
    }
  }
  if( rc ) return rc;
  /* source: the first string of source, source_file, file_name */
  for(k=XK_SOURCE; k<=XK_FILE_NAME && rc==SQLITE_OK; k++){
    if( xpStr(p, ap[k], &apB[1], &anB[1], &z, &n, &rc) && n>0 ){
      rc = profsumEngIntern(e, z, n, &d->source);
      break;
    }
  }
  if( rc ) return rc;
  /* long_name (its shape signature): the string, else the raw name when
  ** it differs from the shown name */
  {
    int has = xpStr(p, ap[XK_LONG_NAME], &apB[1], &anB[1], &z, &n, &rc) && n>0;
    if( rc ) return rc;
    if( !has && m->nDisplay>0 && (m->nName!=m->nDisplay || memcmp(m->zName, m->zDisplay, (size_t)m->nName)!=0) ){
      z = m->zName; n = m->nName;
      has = n>0;
    }
    if( has && (rc = profsumEngSig(e, name, z, n, &d->sig))!=SQLITE_OK ) return rc;
  }
  /* run_id: a string as is; a number → the decimal text of its integer
  ** part (toward zero) */
  {
    const ProfsumXpStat *st = ap[XK_RUN_ID];
    char zBuf[400];
    if( xpStr(p, st, &apB[1], &anB[1], &z, &n, &rc) ){
      rc = profsumEngIntern(e, z, n, &d->runid);
    }else if( rc==SQLITE_OK && st ){
      zBuf[0] = 0;
      if( st->eType==PROFSUM_XV_INT64 ) sqlite3_snprintf(sizeof(zBuf), zBuf, "%lld", (long long)st->iVal);
      else if( st->eType==PROFSUM_XV_UINT64 ) sqlite3_snprintf(sizeof(zBuf), zBuf, "%llu", (unsigned long long)st->uVal);
      else if( st->eType==PROFSUM_XV_DOUBLE && isfinite(st->rVal) ){
        double t = trunc(st->rVal);
        if( t==0.0 ) memcpy(zBuf, "0", 2);
        else snprintf(zBuf, sizeof(zBuf), "%.0f", t);   /* exact: an integral double */
      }
      if( zBuf[0] ) rc = profsumEngIntern(e, zBuf, (int64_t)strlen(zBuf), &d->runid);
    }
    if( rc ) return rc;
  }
  /* step_num, then step: an integer; a float toward zero; a string by
  ** Python int() (unparsable: the next key) */
  for(k=XK_STEP_NUM; k<=XK_STEP && !d->hasStep; k++){
    const ProfsumXpStat *st = ap[k];
    int64_t v;
    if( st==0 ) continue;
    if( st->eType==PROFSUM_XV_INT64 ){ d->step = st->iVal; d->hasStep = 1; }
    else if( st->eType==PROFSUM_XV_UINT64 ){
      if( st->uVal<=(uint64_t)INT64_MAX ){ d->step = (int64_t)st->uVal; d->hasStep = 1; }
    }else if( st->eType==PROFSUM_XV_DOUBLE ){
      if( isfinite(st->rVal) && fabs(st->rVal)<0x1p63 ){ d->step = (int64_t)trunc(st->rVal); d->hasStep = 1; }
    }else if( xpStr(p, st, &apB[1], &anB[1], &z, &n, &rc) ){
      if( profsumEngPyInt(z, n, &v)==0 ){ d->step = v; d->hasStep = 1; }
    }
    if( rc ) return rc;
  }
  return SQLITE_OK;
}

/* The reading context: the engine and what the decoder's diagnostics
** count. */
typedef struct XpRead {
  ProfsumEngine *e;
  int64_t nBadUtf8;     /* string fields read with U+FFFD */
} XpRead;

/* Diagnostics of the XSpace decoder: stored as the engine's, invalid UTF-8
** under its own kind (the reference fails the file for it). */
static void xpDiag(void *pCtx, int64_t idx, int64_t off, const char *zKind, const char *zDetail){
  XpRead *x = (XpRead*)pCtx;
  if( strcmp(zKind, "invalid_utf8")==0 ){
    x->nBadUtf8++;
    zKind = "xplane_invalid_utf8";
  }
  profsumEngDiag(x->e, idx, off, zKind, zDetail);
}

/* The name of plane or line i: z[0..n) when not empty, else zFmt with i
** ("xplane:%lld", "xline:%lld").  *pId or SQLITE_NOMEM. */
static int xpNameOr(ProfsumEngine *e, const char *z, int64_t n, const char *zFmt, int64_t i, int32_t *pId){
  char zBuf[40];
  if( n>0 ) return profsumEngIntern(e, z, n, pId);
  sqlite3_snprintf(sizeof(zBuf), zBuf, zFmt, (long long)i);
  return profsumEngIntern(e, zBuf, (int64_t)strlen(zBuf), pId);
}

/* The file's SHA-256 (trace provenance), computed beside the decoding:
** in a thread of its own when threads are allowed (it reads the file a
** second time, from the page cache, on the other core), else at once. */
typedef struct XpHash {
  const char *zPath;
  char zHex[65];
  sqlite3_int64 nSize;
  char *zErr;                 /* the hash's error message (sqlite3_malloc'd) */
  int rc;
  int bThread;                /* a thread runs it: xpHashJoin() waits for it */
  pthread_t thread;
} XpHash;

static void *xpHashMain(void *pArg){
  XpHash *h = (XpHash*)pArg;
  h->rc = profsumSha256File(h->zPath, h->zHex, &h->nSize, &h->zErr);
  return 0;
}

/* Start hashing zPath into h. */
static void xpHashStart(XpHash *h, const char *zPath){
  memset(h, 0, sizeof(*h));
  h->zPath = zPath;
  if( profsumThreadsAllowed() && pthread_create(&h->thread, 0, xpHashMain, h)==0 ){
    h->bThread = 1;
  }else{
    xpHashMain(h);
  }
}

/* Wait for the hash (when a thread computes it); then h->rc says how it
** went. */
static void xpHashJoin(XpHash *h){
  if( h->bThread ){
    pthread_join(h->thread, 0);
    h->bThread = 0;
  }
}

/* What the walk of one file shares (profsumEngineReadXPlane). */
typedef struct XpWalk {
  ProfsumEngine *e;
  ProfsumXp *p;
  const char *zFunc;
  char *apB[2]; int64_t anB[2];   /* xpDerive's buffers */
  int64_t *aMc;                   /* per event_metadata entry of the plane (iMeta): its
                                  ** aDer index + 1 (events without stats), 0 not yet,
                                  ** -1 failed */
  int64_t nMc, nAllocMc;          /* entries of aMc in use (the plane's), allocated */
  XpDerived *aDer; int64_t nDer, nAllocDer;
  int64_t nUnsortedLines;
  char *zFirstUnsorted;           /* the first unsorted line's message */
} XpWalk;

/* The derived fields of event ev (metadata m) in *ppd: cached per
** metadata for events without stats (w->aMc, w->aDer; reset per plane),
** *ppd then the cache entry (valid until the next call), else *pd (the
** event has stats) with *ppd = pd.  SQLITE_OK or an error code. */
static int xpDerivedOf(XpWalk *w, const ProfsumXpEvent *ev, const ProfsumXpEventMeta *m, XpDerived *pd,
                       XpDerived **ppd){
  int64_t *pc = 0;
  int32_t name;
  int rc;
  *ppd = pd;
  if( ev->nStat==0 && m->iMeta>=0 && m->iMeta<w->nMc ) pc = &w->aMc[m->iMeta];
  if( pc && *pc>0 ){
    *ppd = &w->aDer[*pc-1];
    return SQLITE_OK;
  }
  rc = m->nDisplay>0 ? profsumEngIntern(w->e, m->zDisplay, m->nDisplay, &name)
                     : profsumEngIntern(w->e, m->zName, m->nName, &name);
  if( rc==SQLITE_OK ) rc = xpDerive(w->e, w->p, ev, name, pd, w->apB, w->anB);
  if( rc ){
    if( pc ) *pc = -1;      /* a made entry keeps a nonzero value */
    return rc;
  }
  if( pc ){
    if( w->nDer>=w->nAllocDer ){
      int64_t nNew = w->nAllocDer ? w->nAllocDer*2 : 64;
      XpDerived *aNew = sqlite3_realloc64(w->aDer, sizeof(XpDerived)*(sqlite3_uint64)nNew);
      if( aNew==0 ){ *pc = -1; return SQLITE_NOMEM; }
      w->aDer = aNew;
      w->nAllocDer = nNew;
    }
    w->aDer[w->nDer++] = *pd;
    *pc = w->nDer;
    *ppd = &w->aDer[w->nDer-1];
  }
  return SQLITE_OK;
}

/* Start plane pl's memo of derived fields: one empty entry per
** event_metadata entry.  SQLITE_OK or SQLITE_NOMEM. */
static int xpPlaneMemo(XpWalk *w, const ProfsumXpPlane *pl){
  int64_t n = pl->nEventMetadata;
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

/* The first event of line ln (thread name id `thread`, of plane pl named
** `proc`, pid/tid) out of timeline order: its diagnostic, and the message
** kept for the quality warning when it is the file's first such line. */
static int xpUnsortedLine(XpWalk *w, const ProfsumXpPlane *pl, const ProfsumXpLine *ln,
                          const ProfsumXpEvent *ev, int32_t proc, int32_t thread,
                          int64_t pid, int64_t tid, int isDevOps, double fTs){
  ProfsumEngine *e = w->e;
  char *z = sqlite3_mprintf("line %lld '%s' of plane %lld '%s' (pid %lld, tid %lld): event %lld "
      "(ts %!.17g us) is not in timeline order (ts ascending, the longer first); the reference "
      "summarizer stops with 'Events on %s track (%lld, %lld) are not in timeline order.'; "
      "profsum sorted the line",
      (long long)ln->iLine, profsumEngStr(e, thread), (long long)pl->iPlane, profsumEngStr(e, proc),
      (long long)pid, (long long)tid, (long long)ev->iEvent, fTs,
      isDevOps ? "trace" : "XPlane", (long long)pid, (long long)tid);
  if( z==0 ) return SQLITE_NOMEM;
  profsumEngDiag(e, ev->iEvent, ev->iOffset, "xplane_unsorted_line", z);
  if( w->nUnsortedLines++==0 ) w->zFirstUnsorted = z; else sqlite3_free(z);
  return SQLITE_OK;
}

/* The reader's quality warnings into pW: XSpace warnings, then errors
** (§4.1), then this reader's own (no timeline events, unsorted lines,
** invalid UTF-8).  SQLITE_OK or SQLITE_NOMEM. */
static int xpWarnings(XpWalk *w, int64_t nBadUtf8, sqlite3_str *pW){
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
        "profsum read %s with U+FFFD. See profsum_diagnostic (kind xplane_invalid_utf8).",
        (long long)nBadUtf8, nBadUtf8==1 ? "field" : "fields",
        nBadUtf8==1 ? "is" : "are", nBadUtf8==1 ? "it" : "them");
    if( z ){ profsumEngWarnAppend(pW, z, (int64_t)strlen(z)); sqlite3_free(z); }
    else rc = SQLITE_NOMEM;
  }
  if( rc==SQLITE_OK && sqlite3_str_errcode(pW) ) rc = SQLITE_NOMEM;
  return rc;
}

/* See engine_intake.h. */
int profsumEngineReadXPlane(ProfsumEngine *e, const char *zPath){
  ProfsumXp *p = 0;
  const ProfsumXpPlane *pl;
  const ProfsumXpLine *ln;
  const ProfsumXpEvent *ev;
  const char *zFunc = profsumEngFunc(e);
  char *zErr = 0;
  sqlite3_str *pW = 0;
  XpWalk w;
  XpHash hash;
  XpRead x;
  struct ProfsumInsights *pIns = profsumEngineInsights(e);
  int rc;
  memset(&w, 0, sizeof(w));
  w.e = e;
  w.zFunc = zFunc;
  x.e = e;
  x.nBadUtf8 = 0;
  xpHashStart(&hash, zPath);
  if( !hash.bThread && hash.rc ) goto hash_failed;
  rc = profsumXpOpen(zFunc, zPath, PROFSUM_XP_LENIENT_UTF8, xpDiag, &x, &p, &zErr);
  w.p = p;
  while( rc==SQLITE_OK && (rc = profsumXpNextPlane(p, &pl, &zErr))==SQLITE_ROW ){
    int64_t pid = pl->iPlane + 1;
    int32_t proc;
    int isDev = pl->nName>=8 && memcmp(pl->zName, "/device:", 8)==0;
    if( (rc = xpNameOr(e, pl->zName, pl->nName, "xplane:%lld", pl->iPlane, &proc))!=SQLITE_OK ) break;
    if( (rc = profsumEngName(e, 0, pid, 0, proc))!=SQLITE_OK ) break;
    if( (rc = profsumInsXpPlane(pIns, p, pl))!=SQLITE_OK ) break;
    if( (rc = xpPlaneMemo(&w, pl))!=SQLITE_OK ) break;
    while( rc==SQLITE_OK && (rc = profsumXpNextLine(p, &ln, &zErr))==SQLITE_ROW ){
      int64_t tid = ln->id!=0 ? ln->id : ln->iLine + 1;
      int32_t thread, trk = -1;
      int isDevOp, unsorted = 0, hasPrev = 0;
      double prevTs = 0.0, prevEnd = 0.0;
      double lineUs = (double)ln->timestampNs / 1000.0;       /* the reference's, per event */
      profsum_ps linePs = (profsum_ps)ln->timestampNs*1000;
      rc = ln->nDisplay>0 ? profsumEngIntern(e, ln->zDisplay, ln->nDisplay, &thread)
                          : xpNameOr(e, ln->zName, ln->nName, "xline:%lld", ln->iLine, &thread);
      if( rc==SQLITE_OK ) rc = profsumEngName(e, 1, pid, tid, thread);
      if( rc ) break;
      {
        const char *zt = profsumEngStr(e, thread);
        isDevOp = strcmp(zt, "XLA Ops")==0 || strcmp(zt, "Async XLA Ops")==0 || strncmp(zt, "Stream #", 8)==0;
      }
      while( rc==SQLITE_OK && (rc = profsumXpNextEvent(p, &ev, &zErr))==SQLITE_ROW ){
        const ProfsumXpEventMeta *m = ev->pMeta;
        XpDerived dOwn, *pd;
        int32_t key = -1;
        ProfsumEngEvent a;
        double fTs, fDur, fEnd;
        rc = SQLITE_OK;
        if( (ev->iEvent & 0x3fff)==0 && profsumEngStopAsked(e) ){
          zErr = sqlite3_mprintf("%s: interrupted", zFunc);
          rc = SQLITE_INTERRUPT;
          break;
        }
        if( (rc = profsumInsXpEvent(pIns, p, ev))!=SQLITE_OK ) break;
        if( ev->eData!=PROFSUM_XD_OFFSET || ev->durationPs<=0 || m==0 || (m->nDisplay==0 && m->nName==0) ){
          if( ev->eData==PROFSUM_XD_OFFSET && m && ev->durationPs<=0 ){
            profsumEngDiag(e, ev->iEvent, ev->iOffset, ev->durationPs<0 ? "negative_duration" : "zero_duration",
                           "XEvent with duration_ps <= 0: not a complete event for the summary");
          }
          continue;
        }
        fTs = lineUs + (double)ev->offsetPs / 1e6;
        fDur = (double)ev->durationPs / 1e6;
        fEnd = fTs + fDur;
        if( hasPrev && (fTs<prevTs || (fTs==prevTs && fEnd>prevEnd)) && !unsorted ){
          unsorted = 1;
          if( (rc = xpUnsortedLine(&w, pl, ln, ev, proc, thread, pid, tid, isDev && isDevOp, fTs)) ) break;
        }
        hasPrev = 1; prevTs = fTs; prevEnd = fEnd;
        if( (rc = xpDerivedOf(&w, ev, m, &dOwn, &pd))!=SQLITE_OK ) break;
        if( trk<0 ){
          if( (rc = profsumEngNewTrack(e, pid, tid, proc, thread, &trk))!=SQLITE_OK ) break;
          profsumEngTrackLineNs(e, trk, ln->timestampNs);
        }
        a.idx = ev->iEvent;
        a.iOffset = ev->iOffset;
        a.ts = linePs + ev->offsetPs;
        a.dur = ev->durationPs;
        a.fTs = fTs;
        a.fDur = fDur;
        a.trk = trk;
        a.name = pd->name;
        a.tfop = pd->tfop;
        a.source = pd->source;
        a.sig = pd->sig;
        a.runid = pd->runid;
        a.hasStep = pd->hasStep;
        a.step = pd->step;
        a.key = pd->keyTrk==trk ? pd->key : -1;
        if( (rc = profsumEngAdd(e, &a, &key))!=SQLITE_OK ) break;
        if( key>=0 ){
          /* the next event of this metadata on this line: the same key
          ** (kept in the cache entry; an event's own copy is dropped) */
          pd->keyTrk = trk;
          pd->key = key;
        }
      }
      if( rc==SQLITE_DONE ) rc = SQLITE_OK;
    }
    if( rc==SQLITE_DONE ) rc = SQLITE_OK;
  }
  if( rc==SQLITE_DONE ) rc = SQLITE_OK;
  if( rc==SQLITE_OK ) rc = profsumEngDiagRc(e);
  if( rc==SQLITE_OK ){
    pW = sqlite3_str_new(0);
    rc = xpWarnings(&w, x.nBadUtf8, pW);
    xpHashJoin(&hash);
    if( rc==SQLITE_OK && hash.rc==SQLITE_OK ){
      rc = profsumEngFinish(e, profsumXpEventsSeen(p), "us", hash.zHex, hash.nSize, pW);
    }
  }else if( zErr ){
    /* the decoder's message (an error of the engine's, e.g. too many
    ** events, has its message set already) */
    profsumEngSetError(e, zErr);
    zErr = 0;
  }
  if( pW ) sqlite3_free(sqlite3_str_finish(pW));
  sqlite3_free(zErr);
  sqlite3_free(w.zFirstUnsorted);
  sqlite3_free(w.apB[0]); sqlite3_free(w.apB[1]);
  sqlite3_free(w.aDer);
  sqlite3_free(w.aMc);
  profsumXpClose(p);
  xpHashJoin(&hash);
  if( hash.rc==SQLITE_OK ) return rc;
hash_failed:
  /* a file the hash cannot read: its error, whatever the decoding said
  ** (the hash ran first before it ran beside the decoding) */
  profsumEngSetError(e, sqlite3_mprintf("%s: %s", zFunc, hash.zErr ? hash.zErr : sqlite3_errstr(hash.rc)));
  sqlite3_free(hash.zErr);
  return hash.rc;
}
