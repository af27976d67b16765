/*
** engine_gaps.c — stage A's gaps (§4.8) with marker/payload resolution,
** regions with pruning (§4.9) and gap contexts (§4.10).
*/
#include "profsum_int.h"
#include "profsum_reader.h"
#include "summary_engine.h"
#include "engine_intake.h"
#include "engine_int.h"
#include "funcs.h"
#include "jsontree.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Is the canonical name marker-like (§4.8)? */
static int isMarkerName(const char *z, int n){
  static const char *az[] = {"iota","constant","bitcast","get-tuple-element",
                             "parameter","tuple","after-all"};
  ProfsumSlice c = profsumCanonicalOp(z, n);
  int i;
  if( c.n<=0 ) return 0;
  /* lower-cased (ASCII) comparisons, at any length: a long name can still
  ** start with copy-start / copy-done */
  for(i=0; i<7; i++){
    if( (int)strlen(az[i])==c.n && sqlite3_strnicmp(c.z, az[i], c.n)==0 ) return 1;
  }
  return (c.n>=10 && sqlite3_strnicmp(c.z, "copy-start", 10)==0)
      || (c.n>=9 && sqlite3_strnicmp(c.z, "copy-done", 9)==0);
}

/* Parts of an event for regions and contexts, cached per (name, tf_op). */
typedef struct PartsInfo {
  int32_t *aPath;      /* aPath[d-1]: node (RegionCtx.aNode) of the path of depth d */
  int64_t *aRegIx;     /* profsumEngGapsAndRegions: aRegIx[d-1] its region of depth d
                       ** (set at the first event of these parts), or 0 */
  int nPart;
  int fallback;
  int32_t path4;       /* string id: first <= 4 parts joined */
} PartsInfo;

/* A region path (§4.9) as a node of a trie: its text is its parent's
** text, "=>", and its atom.  The atoms of a path are its text split on
** every "=>" (a part that has "=>" in it, which a tf_op piece can, adds
** several), so two paths have the same node exactly when they have the same
** text, and a node's parent is the text before its last "=>" (what the
** pruning calls its parent).  A path of n parts costs one node per new atom
** instead of its text: the texts of all the prefixes of a deep tf_op would
** be quadratic in its length.  The text of a region is put together only
** when its row is written (regionText). */
typedef struct RNode {
  int32_t parent;       /* -1: a root */
  int32_t atom;         /* string id */
  int32_t reg;          /* profsumEngGapsAndRegions: its region (index), or -1 */
} RNode;

/* What the regions and gap contexts share: the parts per (name, tf_op) and
** the trie of the paths. */
typedef struct RegionCtx {
  HMap partsCache;      /* (name, tf_op) → index in aInfo */
  PartsInfo *aInfo; int64_t nInfo, nAllocInfo;
  HMap nodeMap;         /* (parent node, atom) → node */
  RNode *aNode; int64_t nNode, nAllocNode;
} RegionCtx;

typedef struct RegAgg {
  int32_t path;         /* its node */
  int depth; int64_t count, incl, excl; int removed;
  double inclRef, exclRef;       /* incl, excl as the reference adds them */
} RegAgg;

/* The node of atom string id `atom` under node `parent` (-1: a root), made
** when new.  The node's index, or -1 when out of memory. */
static int32_t regionNode(RegionCtx *x, int32_t parent, int32_t atom){
  int isNew;
  HEnt *h;
  if( x->nNode>=0x7fffffff ) return -1;
  if( profsumEngGrowCapped((void**)&x->aNode, &x->nAllocNode, x->nNode+1, 0, sizeof(RNode)) ) return -1;
  h = profsumEngHmGet(&x->nodeMap, parent, atom, 1, &isNew);
  if( h==0 ) return -1;
  if( isNew ){
    x->aNode[x->nNode].parent = parent;
    x->aNode[x->nNode].atom = atom;
    x->aNode[x->nNode].reg = -1;
    h->v1 = x->nNode++;
  }
  return (int32_t)h->v1;
}

/* The text of node `node` (its atoms joined by "=>") into *pzBuf (grown as
** needed, *pnBuf its size; the caller frees it); its length in *pn.
** SQLITE_OK, SQLITE_NOMEM, or SQLITE_TOOBIG past 2^31 bytes. */
static int regionText(Engine *e, RegionCtx *x, int32_t node, char **pzBuf, int64_t *pnBuf,
                      int64_t *pn){
  int64_t n = 0, m;
  int32_t k;
  for(k=node; k>=0; k=x->aNode[k].parent){
    n += SP_LEN(&e->pool, x->aNode[k].atom) + (x->aNode[k].parent>=0 ? 2 : 0);
  }
  if( n>0x7ffffffe ) return SQLITE_TOOBIG;
  if( n+1>*pnBuf ){
    char *z = sqlite3_realloc64(*pzBuf, (sqlite3_uint64)(n+1));
    if( z==0 ) return SQLITE_NOMEM;
    *pzBuf = z;
    *pnBuf = n+1;
  }
  m = n;
  (*pzBuf)[m] = 0;
  for(k=node; k>=0; k=x->aNode[k].parent){
    int32_t a = x->aNode[k].atom;
    m -= SP_LEN(&e->pool, a);
    memcpy(*pzBuf + m, SP_STR(&e->pool, a), (size_t)SP_LEN(&e->pool, a));
    if( x->aNode[k].parent>=0 ){ (*pzBuf)[--m] = '>'; (*pzBuf)[--m] = '='; }
  }
  *pn = n;
  return SQLITE_OK;
}

static void regionCtxFree(RegionCtx *x){
  int64_t i;
  for(i=0; i<x->nInfo; i++){ sqlite3_free(x->aInfo[i].aPath); sqlite3_free(x->aInfo[i].aRegIx); }
  sqlite3_free(x->aInfo);
  sqlite3_free(x->aNode);
  profsumEngHmFree(&x->partsCache);
  profsumEngHmFree(&x->nodeMap);
  memset(x, 0, sizeof(*x));
}

/* Get (computing once) the parts of (name, tfop): the nodes of their
** paths of every depth and the string of the first <= 4 joined.  The parts
** point into the pool's texts of name and tf_op, which stay where they are
** while the atoms are interned (SPool). */
static int partsOf(Engine *e, RegionCtx *x, int32_t name, int32_t tfop, PartsInfo **ppOut){
  int isNew;
  HEnt *h = profsumEngHmGet(&x->partsCache, name, tfop, 1, &isNew);
  PartsInfo *pi;
  if( h==0 ) return SQLITE_NOMEM;
  if( isNew ){
    ProfsumParts parts;
    int rc, d, fb = 0, n;
    int32_t node = -1, id;
    char *z;
    if( profsumEngGrowCapped((void**)&x->aInfo, &x->nAllocInfo, x->nInfo+1, 0, sizeof(PartsInfo)) ){
      return SQLITE_NOMEM;
    }
    pi = &x->aInfo[x->nInfo];
    memset(pi, 0, sizeof(*pi));
    h->v1 = x->nInfo++;
    profsumPartsInit(&parts);
    rc = profsumHierarchyParts(SP_STR(&e->pool, name), SP_LEN(&e->pool, name),
                               tfop>=0 ? SP_STR(&e->pool, tfop) : 0,
                               tfop>=0 ? SP_LEN(&e->pool, tfop) : 0, &parts, &fb);
    if( rc ) return rc;
    pi->nPart = parts.nPart;
    pi->fallback = fb;
    pi->path4 = -1;
    pi->aPath = sqlite3_malloc64(sizeof(int32_t)*(sqlite3_uint64)(parts.nPart+1));
    if( pi->aPath==0 ){ profsumPartsClear(&parts); return SQLITE_NOMEM; }
    for(d=1; d<=parts.nPart; d++){
      /* the part's atoms: split on "=>" */
      const char *zP = parts.aPart[d-1].z;
      int nP = parts.aPart[d-1].n, a = 0, k;
      for(;;){
        int end;
        for(k=a; k+1<nP && !(zP[k]=='=' && zP[k+1]=='>'); k++){}
        end = k+1<nP ? k : nP;
        id = profsumEngSpIntern(&e->pool, zP+a, end-a);
        if( id<0 || (node = regionNode(x, node, id))<0 ){
          profsumPartsClear(&parts);
          return SQLITE_NOMEM;
        }
        if( end==nP ) break;
        a = end+2;
      }
      pi->aPath[d-1] = node;
    }
    if( parts.nPart==0 ){
      id = profsumEngSpIntern(&e->pool, "unknown", 7);
    }else{
      z = profsumPartsJoin(&parts, 4, &n);
      id = z ? profsumEngSpIntern(&e->pool, z, n) : -1;
      sqlite3_free(z);
    }
    profsumPartsClear(&parts);
    if( id<0 ) return SQLITE_NOMEM;
    pi->path4 = id;
  }
  *ppOut = &x->aInfo[h->v1];
  return SQLITE_OK;
}

/* Compare two pooled strings bytewise. */
static int spCmp(Engine *e, int32_t a, int32_t b){
  int na = SP_LEN(&e->pool, a), nb = SP_LEN(&e->pool, b);
  int c = memcmp(SP_STR(&e->pool, a), SP_STR(&e->pool, b), (size_t)(na<nb ? na : nb));
  return c ? c : (na - nb);
}

/* Reorder a[0..n), a track's events in nesting order (ts asc, end desc,
** file order), into the gap order (ts asc, end asc, file order): within
** each run of equal start, the runs of equal end are reversed, each kept
** in file order.  Linear, in place. */
static void gapOrder(Engine *e, int32_t *a, int64_t n){
  int64_t i = 0, j, k, m;
  int32_t x;
  while( i<n ){
    for(j=i+1; j<n && cmpTs(e, a[j], a[i])==0; j++){}
    if( j-i>1 ){
      /* reverse the whole run: ends ascend, equal ends now in reverse file order */
      for(k=i, m=j-1; k<m; k++, m--){ x = a[k]; a[k] = a[m]; a[m] = x; }
      for(k=i; k<j; k=m){
        int64_t p, q;
        for(m=k+1; m<j && cmpEnd(e, a[m], a[k])==0; m++){}
        for(p=k, q=m-1; p<q; p++, q--){ x = a[p]; a[p] = a[q]; a[q] = x; }
      }
    }
    i = j;
  }
}

/* Add the double x to the double kept (as bits) in *pSlot. */
void profsumEngAddBits(int64_t *pSlot, double x){
  double v;
  memcpy(&v, pSlot, sizeof(double));
  v += x;
  memcpy(pSlot, &v, sizeof(double));
}

/* The double kept (as bits) in slot v (0 bits: 0.0). */
double profsumEngBitsDouble(int64_t v){
  double d;
  memcpy(&d, &v, sizeof(double));
  return d;
}

/* Account one gap of `gap` µs (the reference's double) before an event of
** key q to its context (§4.10): the op's preferred path (or its 4-part
** path), copies under "copy(...)".  ctxMap: v1 the count, v2 the sum of
** the gaps as the reference adds them (bits of a double). */
static int gapContext(Engine *e, RegionCtx *x, HMap *pref, HMap *pathMemo, HMap *ctxMap,
                      char **pzTmp, const EvKey *q, double gap){
  PartsInfo *pi;
  int32_t path;
  HEnt *h, *hm;
  ProfsumSlice c;
  int rc, isNew;
  /* the context path is a function of (name, tf_op): worked out once */
  hm = profsumEngHmGet(pathMemo, q->name, q->tfop, 1, &isNew);
  if( hm==0 ) return SQLITE_NOMEM;
  if( !isNew ){
    path = (int32_t)hm->v1;
    goto account;
  }
  rc = partsOf(e, x, q->name, q->tfop, &pi);
  if( rc ) return rc;
  h = pi->fallback ? profsumEngHmGet(pref, q->name, 0, 0, 0) : 0;
  path = h ? (int32_t)h->v1 : pi->path4;
  c = profsumCanonicalOp(SP_STR(&e->pool, q->name), SP_LEN(&e->pool, q->name));
  if( c.n>=4 && sqlite3_strnicmp(c.z, "copy", 4)==0 ){
    const char *z = SP_STR(&e->pool, path);
    int n = SP_LEN(&e->pool, path);
    while( n>0 && (*z==' '||*z=='\t'||*z=='\n'||*z=='\r') ){ z++; n--; }
    while( n>0 && (z[n-1]==' '||z[n-1]=='\t'||z[n-1]=='\n'||z[n-1]=='\r') ) n--;
    if( n==0 || (n==4 && sqlite3_strnicmp(z, "copy", 4)==0) ){
      path = profsumEngSpIntern(&e->pool, "copy", 4);
    }else if( !(n>=5 && memcmp(z, "copy(", 5)==0) ){
      sqlite3_free(*pzTmp);
      *pzTmp = sqlite3_mprintf("copy(%.*s)", n, z);
      if( *pzTmp==0 ) return SQLITE_NOMEM;
      path = profsumEngSpIntern(&e->pool, *pzTmp, (int64_t)strlen(*pzTmp));
    }else{
      path = profsumEngSpIntern(&e->pool, z, n);
    }
    if( path<0 ) return SQLITE_NOMEM;
  }
  hm->v1 = path;          /* pathMemo was not touched since the lookup */
account:
  h = profsumEngHmGet(ctxMap, q->name, path, 1, 0);
  if( h==0 ) return SQLITE_NOMEM;
  h->v1++;
  profsumEngAddBits(&h->v2, gap);
  return SQLITE_OK;
}

/* Gaps (§4.8), regions (§4.9) and gap contexts (§4.10). */
#define GAPROW 6          /* slots of a gap row (aGapAgg) */
int profsumEngGapsAndRegions(Engine *e){
  int rc = SQLITE_OK;
  int64_t i, j, nReg = 0, nAllocReg = 0, nAllocGapRow = 0;
  RegionCtx rx;
  HMap pref = {0,0,0}, gapMap = {0,0,0};
  HMap markers = {0,0,0}, ctxMap = {0,0,0}, pathMemo = {0,0,0};
  unsigned char *aMark = 0;   /* per name id: 0 unknown, 1 not a marker, 2 marker */
  RegAgg *aReg = 0;
  int32_t *aG = 0;          /* one device-op track in gap order */
  int64_t *aGapAgg = 0;     /* per gap row, GAPROW slots: count, total, max
                            ** (bits of doubles, µs), payloadName, bestMarker,
                            ** bestCount */
  int32_t *aKeyPi = 0;      /* per event key: its index in aInfo, or -1 */
  int64_t hintRef = 0;      /* floatEntryNear's hint for the device ops */
  int64_t curXr = 0;        /* profsumEngExclRefAt's cursor */
  int64_t nGapRow = 0;
  sqlite3_stmt *pIns = 0;
  char *zTmp = 0;
  char *zPath = 0; int64_t nPathBuf = 0;   /* a region's text (regionText) */

  memset(&rx, 0, sizeof(rx));
  /* Regions and preferred paths, in processing order.  The parts of an
  ** event are a function of its key (name, tf_op): looked up once per key,
  ** and their regions once per parts (at their first event, which creates
  ** the regions in the order of first appearance). */
  aKeyPi = sqlite3_malloc64(sizeof(int32_t)*(sqlite3_uint64)(e->nKey+1));
  if( aKeyPi==0 ){ rc = SQLITE_NOMEM; goto done; }
  for(i=0; i<e->nKey; i++) aKeyPi[i] = -1;
  for(j=0; j<e->nEv; j++){
    SEv *r = EV(e, e->aOrd[j]);
    const EvKey *q = KEY(e, r);
    STrack *t = &e->aTrk[q->trk];
    PartsInfo *pi;
    int d;
    double xRef;
    if( !(t->isDevice && t->isDevOp) ) continue;
    xRef = profsumEngExclRefAt(e, j, &curXr, profsumEngEvDurFloatNear(e, e->aOrd[j], &hintRef));
    if( aKeyPi[r->key]>=0 ){
      pi = &rx.aInfo[aKeyPi[r->key]];
    }else{
      if( (rc = partsOf(e, &rx, q->name, q->tfop, &pi)) ) goto done;
      aKeyPi[r->key] = (int32_t)(pi - rx.aInfo);
    }
    if( pi->aRegIx==0 && pi->nPart>0 ){
      pi->aRegIx = sqlite3_malloc64(sizeof(int64_t)*(sqlite3_uint64)pi->nPart);
      if( pi->aRegIx==0 ){ rc = SQLITE_NOMEM; goto done; }
      for(d=1; d<=pi->nPart; d++){
        RNode *nd = &rx.aNode[pi->aPath[d-1]];    /* regions are made by path */
        if( nd->reg<0 ){
          if( nReg>=0x7fffffff ){ rc = SQLITE_NOMEM; goto done; }
          if( (rc = profsumEngGrowCapped((void**)&aReg, &nAllocReg, nReg+1, 0, sizeof(RegAgg))) ) goto done;
          memset(&aReg[nReg], 0, sizeof(RegAgg));
          aReg[nReg].path = pi->aPath[d-1];
          aReg[nReg].depth = d;
          nd->reg = (int32_t)nReg++;
        }
        pi->aRegIx[d-1] = nd->reg;
      }
    }
    for(d=1; d<=pi->nPart; d++){
      RegAgg *g = &aReg[pi->aRegIx[d-1]];
      g->count++;
      g->incl += r->excl;
      g->inclRef += xRef;
      if( d==pi->nPart ){ g->excl += r->excl; g->exclRef += xRef; }
    }
    if( q->tfop>=0 && !pi->fallback && pi->path4>=0 ){
      HEnt *h = profsumEngHmGet(&pref, q->name, pi->path4, 1, 0);
      if( h==0 ){ rc = SQLITE_NOMEM; goto done; }
      h->v1++;
    }
  }
  /* Pruning of unary paths. */
  {
    int64_t *aChildN = sqlite3_malloc64(sizeof(int64_t)*(sqlite3_uint64)(2*nReg+1));
    int64_t *aChild1 = aChildN ? aChildN + nReg : 0;
    if( aChildN==0 ){ rc = SQLITE_NOMEM; goto done; }
    memset(aChildN, 0, sizeof(int64_t)*(size_t)(2*nReg+1));
    for(i=0; i<nReg; i++){
      /* the parent: the path of the text before the last "=>" */
      int32_t par = rx.aNode[aReg[i].path].parent;
      int32_t pr = par>=0 ? rx.aNode[par].reg : -1;
      if( pr>=0 ){ aChildN[pr]++; aChild1[pr] = i; }
    }
    for(i=0; i<nReg; i++){
      if( aReg[i].depth>1 && aChildN[i]==1 ){
        /* "close" on the reference's sums: a difference of exactly the
        ** 1e-6 µs threshold in exact times can be an ulp over it there */
        double a = aReg[i].inclRef, b = aReg[aChild1[i]].inclRef;
        double m = (a<0?-a:a) > (b<0?-b:b) ? (a<0?-a:a) : (b<0?-b:b);
        double tol = 1e-9*m > 1e-6 ? 1e-9*m : 1e-6;
        double diff = a-b; if( diff<0 ) diff = -diff;
        if( diff<=tol ) aReg[i].removed = 1;
      }
    }
    sqlite3_free(aChildN);
  }
  if( (rc = profsumEngPrepare(e, &pIns, "INSERT INTO \"%w\".profsum_agg_region VALUES(?1,?2,?3,?4,?5,?6,?7,?8)")) ) goto done;
  for(i=0; i<nReg; i++){
    int64_t nPath;
    if( aReg[i].removed ) continue;
    if( (rc = regionText(e, &rx, aReg[i].path, &zPath, &nPathBuf, &nPath)) ){
      if( rc==SQLITE_TOOBIG ){
        profsumEngErr(e, rc, "a hierarchical region's path is longer than 2^31 bytes (depth %d)",
               aReg[i].depth);
      }
      goto done;
    }
    sqlite3_bind_int64(pIns, 1, e->traceId);
    sqlite3_bind_text64(pIns, 2, zPath, (sqlite3_uint64)nPath, SQLITE_STATIC, SQLITE_UTF8);
    sqlite3_bind_int(pIns, 3, aReg[i].depth);
    sqlite3_bind_int64(pIns, 4, aReg[i].count);
    sqlite3_bind_double(pIns, 5, US(aReg[i].incl));
    sqlite3_bind_double(pIns, 6, US(aReg[i].excl));
    sqlite3_bind_double(pIns, 7, aReg[i].inclRef);
    sqlite3_bind_double(pIns, 8, aReg[i].exclRef);
    if( (rc = profsumEngStep(e, pIns)) ) goto done;
  }
  sqlite3_finalize(pIns); pIns = 0;

  /* Preferred path per op name: most frequent, ties → smallest path. */
  {
    HMap best = {0,0,0};
    for(i=0; i<pref.nSlot; i++){
      HEnt *h = &pref.a[i], *b;
      int isNew;
      if( !h->used ) continue;
      b = profsumEngHmGet(&best, h->k1, 0, 1, &isNew);
      if( b==0 ){ profsumEngHmFree(&best); rc = SQLITE_NOMEM; goto done; }
      if( isNew || h->v1>b->v2 || (h->v1==b->v2 && spCmp(e, (int32_t)h->k2, (int32_t)b->v1)<0) ){
        b->v1 = h->k2; b->v2 = h->v1;
      }
    }
    profsumEngHmFree(&pref);
    pref = best;
  }
  /* Gaps per device-op track, each track's slice put in gap order (it is
  ** in nesting order: only runs of equal start differ, by end). */
  {
    int64_t nMax = 1;
    for(i=0; i<e->nTrk; i++) if( e->aTrk[i].nEv>nMax ) nMax = e->aTrk[i].nEv;
    aG = sqlite3_malloc64(sizeof(int32_t)*(sqlite3_uint64)nMax);   /* one track at a time */
  }
  /* event names have the ids below pool.n now (contexts add strings later) */
  aMark = sqlite3_malloc64((sqlite3_uint64)(e->pool.n ? e->pool.n : 1));
  if( aG==0 || aMark==0 ){ rc = SQLITE_NOMEM; goto done; }
  memset(aMark, 0, (size_t)e->pool.n);
#define MARKER(id) (aMark[id] ? aMark[id]==2 \
    : (aMark[id] = (unsigned char)(1 + isMarkerName(SP_STR(&e->pool, id), SP_LEN(&e->pool, id))))==2)
  for(i=0; i<e->nTrk; i++){
    STrack *t = &e->aTrk[i];
    int64_t n = t->nEv;
    int32_t iPrev;        /* the event with the largest end so far (doubles) */
    if( !(t->isDevice && t->isDevOp) || n==0 ) continue;
    memcpy(aG, e->aOrd + t->iFirst, sizeof(int32_t)*(size_t)n);
    gapOrder(e, aG, n);
    iPrev = aG[0];
    for(j=1; j<n; j++){
      const SEv *E = EV(e, aG[j]);
      int32_t eName = KEY(e, E)->name;
      if( cmpTsEnd(e, aG[j], iPrev)>0 ){
        /* the gap as the reference has it: its doubles' E.ts − prev_end
        ** (positive: the doubles decided there is a gap).  Not exact
        ** picoseconds: the totals order the rows, and the reference's
        ** rounding breaks ties that exact sums keep (docs/summary.md) */
        int64_t c;
        int32_t payload = aG[j], pName;
        int isNew;
        double gap, fTs, fEnd, x;
        HEnt *h;
        profsumEngEvFloat(e, aG[j], &fTs, &x);
        profsumEngEvFloat(e, iPrev, &x, &fEnd);
        gap = fTs - fEnd;
        if( MARKER(eName) ){
          int32_t iChain = aG[j];     /* largest end of the chain so far */
          for(c=j+1; c<n && c<=j+8; c++){
            const SEv *C = EV(e, aG[c]);
            int32_t cName = KEY(e, C)->name;
            if( cmpTsEnd(e, aG[c], iChain)>0 ) break;
            if( cmpEnd(e, aG[c], iChain)>0 ) iChain = aG[c];
            if( MARKER(cName) ) continue;
            payload = aG[c];
            break;
          }
        }
        pName = KEY(e, EV(e, payload))->name;
        h = profsumEngHmGet(&gapMap, pName, 0, 1, &isNew);
        if( h==0 ){ rc = SQLITE_NOMEM; goto done; }
        if( isNew ){
          if( (rc = profsumEngGrowCapped((void**)&aGapAgg, &nAllocGapRow, nGapRow+1, 0, sizeof(int64_t)*GAPROW)) ) goto done;
          memset(&aGapAgg[GAPROW*nGapRow], 0, sizeof(int64_t)*GAPROW);
          aGapAgg[GAPROW*nGapRow+3] = pName;
          aGapAgg[GAPROW*nGapRow+4] = -1;
          h->v1 = nGapRow++;
        }
        {
          int64_t *g = &aGapAgg[GAPROW*h->v1];
          g[0]++;
          profsumEngAddBits(&g[1], gap);                 /* in the reference's order */
          if( gap>profsumEngBitsDouble(g[2]) ) memcpy(&g[2], &gap, sizeof(double));
        }
        h = profsumEngHmGet(&markers, pName, eName, 1, 0);
        if( h==0 ){ rc = SQLITE_NOMEM; goto done; }
        h->v1++;
        if( (rc = gapContext(e, &rx, &pref, &pathMemo, &ctxMap,
                             &zTmp, KEY(e, EV(e, payload)), gap)) ) goto done;
      }
      if( cmpEnd(e, aG[j], iPrev)>0 ) iPrev = aG[j];
    }
  }
  /* Marker per payload: most frequent, ties → smallest name. */
  for(i=0; i<markers.nSlot; i++){
    HEnt *h = &markers.a[i];
    HEnt *g;
    int64_t *row;
    if( !h->used ) continue;
    g = profsumEngHmGet(&gapMap, h->k1, 0, 0, 0);
    row = &aGapAgg[GAPROW*g->v1];
    if( row[4]<0 || h->v1>row[5] || (h->v1==row[5] && spCmp(e, (int32_t)h->k2, (int32_t)row[4])<0) ){
      row[4] = h->k2; row[5] = h->v1;
    }
  }
  if( (rc = profsumEngPrepare(e, &pIns, "INSERT INTO \"%w\".profsum_agg_gap VALUES(?1,?2,?3,?4,?5,?6)")) ) goto done;
  for(i=0; i<nGapRow; i++){
    int64_t *g = &aGapAgg[GAPROW*i];
    sqlite3_bind_int64(pIns, 1, e->traceId);
    profsumEngBindStrId(e, pIns, 2, (int32_t)g[3]);
    profsumEngBindStrId(e, pIns, 3, (int32_t)g[4]);
    sqlite3_bind_int64(pIns, 4, g[0]);
    sqlite3_bind_double(pIns, 5, profsumEngBitsDouble(g[1]));
    sqlite3_bind_double(pIns, 6, profsumEngBitsDouble(g[2]));
    if( (rc = profsumEngStep(e, pIns)) ) goto done;
  }
  sqlite3_finalize(pIns); pIns = 0;

  if( (rc = profsumEngPrepare(e, &pIns, "INSERT INTO \"%w\".profsum_agg_gap_context VALUES(?1,?2,?3,?4,?5)")) ) goto done;
  for(i=0; i<ctxMap.nSlot; i++){
    HEnt *h = &ctxMap.a[i];
    if( !h->used ) continue;
    sqlite3_bind_int64(pIns, 1, e->traceId);
    profsumEngBindStrId(e, pIns, 2, (int32_t)h->k1);
    profsumEngBindStrId(e, pIns, 3, (int32_t)h->k2);
    sqlite3_bind_int64(pIns, 4, h->v1);
    sqlite3_bind_double(pIns, 5, profsumEngBitsDouble(h->v2));
    if( (rc = profsumEngStep(e, pIns)) ) goto done;
  }
done:
  sqlite3_finalize(pIns);
  regionCtxFree(&rx);
  sqlite3_free(zPath);
  sqlite3_free(aKeyPi);
  sqlite3_free(aReg);
#undef MARKER
#undef GAPROW
  sqlite3_free(aG);
  sqlite3_free(aMark);
  profsumEngHmFree(&pathMemo);
  sqlite3_free(aGapAgg);
  sqlite3_free(zTmp);
  profsumEngHmFree(&pref); profsumEngHmFree(&gapMap);
  profsumEngHmFree(&markers); profsumEngHmFree(&ctxMap);
  return rc;
}
