/*
** engine_gaps.c — stage A's gaps (§4.8) with marker/payload resolution,
** regions with pruning (§4.9) and gap contexts (§4.10).
*/
#include "profsum_int.h"
#include "profsum_reader.h"
#include "rowbuf.h"
#include "summary_engine.h"
#include "engine_intake.h"
#include "engine_int.h"
#include "engine_fast.h"
#include "funcs.h"
#include "jsontree.h"
#include "pytext.h"

#include <assert.h>
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
  int64_t *aRegIx;     /* profsumEngGapsBegin: aRegIx[d-1] its region of depth d
                       ** (set at the first event of these parts), or 0 */
  int nPart;
  int fallback;
  int32_t path4;       /* string id: first <= 4 parts joined */
  int64_t nEv; profsum_ps exSum;  /* profsumEngRegionOp: its device ops and the sum of their
                       ** exclusive ps, added to its regions' counts once */
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
  int32_t reg;          /* profsumEngGapsBegin: its region (index), or -1 */
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
  int depth; int64_t count; profsum_ps incl, excl; int removed;
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
** in file order.  Linear, in place.  t: their track. */
static void gapOrder(Engine *e, const STrack *t, int32_t *a, int64_t n){
  int64_t i = 0, j, k, m, tol = profsumEngTrackTol(e, t);
  int32_t x;
  while( i<n ){
    for(j=i+1; j<n && profsumEngCmpIn(e, t, tol, a[j], 0, a[i], 0)==0; j++){}
    if( j-i>1 ){
      /* reverse the whole run: ends ascend, equal ends now in reverse file order */
      for(k=i, m=j-1; k<m; k++, m--){ x = a[k]; a[k] = a[m]; a[m] = x; }
      for(k=i; k<j; k=m){
        int64_t p, q;
        for(m=k+1; m<j && profsumEngCmpIn(e, t, tol, a[m], 1, a[k], 1)==0; m++){}
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
** path), copies under "copy(...)" (the path stripped as Python's
** str.strip() strips, Unicode white space, and kept whole, NULs
** included).  ctxMap: v1 the count, v2 the sum of the gaps as the
** reference adds them (bits of a double).  *pzTmp: scratch the caller
** frees (sqlite3_realloc64'd here).  SQLITE_OK or SQLITE_NOMEM. */
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
    /* the reference's region_path.strip(): Unicode white space; the path
    ** keeps any NUL it holds (lengths, never C strings) */
    const char *z0 = SP_STR(&e->pool, path);
    int64_t i = 0, iEnd = SP_LEN(&e->pool, path), n;
    const char *z;
    profsumPyStrip((const unsigned char*)z0, &i, &iEnd);
    z = z0 + i;
    n = iEnd - i;
    if( n==0 || (n==4 && sqlite3_strnicmp(z, "copy", 4)==0) ){
      path = profsumEngSpIntern(&e->pool, "copy", 4);
    }else if( !(n>=5 && memcmp(z, "copy(", 5)==0) ){
      char *zNew = sqlite3_realloc64(*pzTmp, (sqlite3_uint64)n + 6);
      if( zNew==0 ) return SQLITE_NOMEM;
      *pzTmp = zNew;
      memcpy(zNew, "copy(", 5);
      memcpy(zNew + 5, z, (size_t)n);
      zNew[n + 5] = ')';
      path = profsumEngSpIntern(&e->pool, zNew, n + 6);
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

/* Gaps (§4.8), regions (§4.9) and gap contexts (§4.10): the state the
** steps of profsumEngGapsBegin and profsumEngGapsFinish share.  Freed by
** gapsFree(). */
#define GAPROW 6          /* slots of a gap row (aGapAgg) */
typedef struct Gaps {
  Engine *e;
  RegionCtx rx;             /* region paths and the parts of each key */
  HMap pref;                /* (op name, path) → count; then op name → preferred path */
  HMap gapMap;              /* payload name → its gap row */
  HMap markers;             /* (payload name, marker name) → count */
  HMap ctxMap;              /* (op name, region path) → count, Σ gap (gap contexts) */
  HMap pathMemo;            /* gapContext's memo */
  unsigned char *aMark;     /* per name id: 0 unknown, 1 not a marker, 2 marker */
  RegAgg *aReg;             /* the regions, in order of first appearance */
  int64_t nReg, nAllocReg;
  int32_t *aG;              /* one device-op track in gap order, when that
                            ** is not its processing order (nG entries) */
  int64_t nG;
  const int32_t *aGv;       /* the track being walked in gap order: aG, or
                            ** its slice of aOrd, or 0: then position j is
                            ** event iG0 + j (gapAt) */
  int64_t iG0;
  int64_t *aGapAgg;         /* per gap row, GAPROW slots: count, total, max
                            ** (bits of doubles, µs), payloadName, bestMarker,
                            ** bestCount */
  int64_t nGapRow, nAllocGapRow;
  int32_t *aKeyPi;          /* per event key: its index in rx.aInfo, or -1 */
  int64_t *aKeyN;           /* per event key: its device ops that count for
                            ** pref (profsumEngRegionOp) */
  char *zTmp;               /* gapContext's buffer */
  char *zPath; int64_t nPathBuf;   /* a region's text (regionText) */
  EngSide side;             /* the gap pass as a side job (gapsJobMain) */
  int jobRc;                /* its result */
  int bBegun;               /* profsumEngGapsBegin ran: the pass is queued or
                            ** still to run (profsumEngGapsFinish) */
  char **azStr0;            /* the pool's id array when it was queued: the
                            ** same at the join (the room made was enough) */
} Gaps;

/* Free what the steps took (the gap pass joined first, when queued). */
static void gapsFree(Gaps *g){
  if( g->bBegun ) profsumEngSideJoin(&g->side);
  regionCtxFree(&g->rx);
  sqlite3_free(g->zPath);
  sqlite3_free(g->aKeyPi);
  sqlite3_free(g->aKeyN);
  sqlite3_free(g->aReg);
  sqlite3_free(g->aG);
  sqlite3_free(g->aMark);
  profsumEngHmFree(&g->pathMemo);
  sqlite3_free(g->aGapAgg);
  sqlite3_free(g->zTmp);
  profsumEngHmFree(&g->pref); profsumEngHmFree(&g->gapMap);
  profsumEngHmFree(&g->markers); profsumEngHmFree(&g->ctxMap);
}

/* The regions of parts pi (one per prefix of its path), made at their
** first sight, into pi->aRegIx.  SQLITE_OK or SQLITE_NOMEM. */
static int gapsRegionsOfParts(Gaps *g, PartsInfo *pi){
  int d, rc;
  pi->aRegIx = sqlite3_malloc64(sizeof(int64_t)*(sqlite3_uint64)pi->nPart);
  if( pi->aRegIx==0 ) return SQLITE_NOMEM;
  for(d=1; d<=pi->nPart; d++){
    RNode *nd = &g->rx.aNode[pi->aPath[d-1]];    /* regions are made by path */
    if( nd->reg<0 ){
      if( g->nReg>=0x7fffffff ) return SQLITE_NOMEM;
      if( (rc = profsumEngGrowCapped((void**)&g->aReg, &g->nAllocReg, g->nReg+1, 0, sizeof(RegAgg))) ) return rc;
      memset(&g->aReg[g->nReg], 0, sizeof(RegAgg));
      g->aReg[g->nReg].path = pi->aPath[d-1];
      g->aReg[g->nReg].depth = d;
      nd->reg = (int32_t)g->nReg++;
    }
    pi->aRegIx[d-1] = nd->reg;
  }
  return SQLITE_OK;
}

/* See engine_int.h.  Regions and preferred paths over the device ops, in
** processing order: the parts of an event are a function of its key
** (name, tf_op), looked up once per key, and their regions once per parts
** (at their first event, which creates the regions in the order of first
** appearance). */
int profsumEngRegionsBegin(Engine *e, Gaps **pp){
  Gaps *g = sqlite3_malloc64(sizeof(Gaps));
  int64_t i;
  *pp = g;
  if( g==0 ) return SQLITE_NOMEM;
  memset(g, 0, sizeof(*g));
  g->e = e;
  g->aKeyPi = sqlite3_malloc64(sizeof(int32_t)*(sqlite3_uint64)(e->nKey+1));
  g->aKeyN = sqlite3_malloc64(sizeof(int64_t)*(sqlite3_uint64)(e->nKey+1));
  if( g->aKeyPi==0 || g->aKeyN==0 ) return SQLITE_NOMEM;
  memset(g->aKeyN, 0, sizeof(int64_t)*(size_t)(e->nKey+1));
  for(i=0; i<e->nKey; i++) g->aKeyPi[i] = -1;
  return SQLITE_OK;
}

/* See engine_int.h. */
int profsumEngRegionOp(Gaps *g, const SEv *r, const EvKey *q, double xRef, int64_t ex){
  PartsInfo *pi;
  int d, rc;
  if( g->aKeyPi[r->key]>=0 ){
    pi = &g->rx.aInfo[g->aKeyPi[r->key]];
  }else{
    if( (rc = partsOf(g->e, &g->rx, q->name, q->tfop, &pi)) ) return rc;
    g->aKeyPi[r->key] = (int32_t)(pi - g->rx.aInfo);
  }
  if( pi->aRegIx==0 && pi->nPart>0 && (rc = gapsRegionsOfParts(g, pi)) ) return rc;
  /* the doubles in event order, as the reference adds them; the exact
  ** counts and sums (whose order does not matter) per parts, below */
  pi->nEv++;
  pi->exSum += ex;
  for(d=1; d<=pi->nPart; d++) g->aReg[pi->aRegIx[d-1]].inclRef += xRef;
  if( pi->nPart>0 ) g->aReg[pi->aRegIx[pi->nPart-1]].exclRef += xRef;
  if( q->tfop>=0 && !pi->fallback && pi->path4>=0 ) g->aKeyN[r->key]++;
  return SQLITE_OK;
}

/* After every device op went through profsumEngRegionOp: the regions'
** exact counts and sums from those of the parts, and the (op name, path)
** counts of pref from those of the keys.  SQLITE_OK or SQLITE_NOMEM. */
static int gapsRegionEnd(Gaps *g){
  Engine *e = g->e;
  int64_t i;
  int rc = SQLITE_OK;
  for(i=0; i<g->rx.nInfo && rc==SQLITE_OK; i++){
    const PartsInfo *pi = &g->rx.aInfo[i];
    int d;
    if( pi->nEv==0 ) continue;
    for(d=1; d<=pi->nPart; d++){
      RegAgg *a = &g->aReg[pi->aRegIx[d-1]];
      a->count += pi->nEv;
      a->incl += pi->exSum;
      if( d==pi->nPart ) a->excl += pi->exSum;
    }
  }
  /* (op name, path) counts of pref from those of the keys: the pick
  ** (gapsPickPreferred) does not depend on the order they are added in */
  for(i=0; i<e->nKey && rc==SQLITE_OK; i++){
    if( g->aKeyN[i]>0 ){
      const PartsInfo *pi = &g->rx.aInfo[g->aKeyPi[i]];
      HEnt *h = profsumEngHmGet(&g->pref, e->aKey[i].name, pi->path4, 1, 0);
      if( h==0 ) rc = SQLITE_NOMEM;
      else h->v1 += g->aKeyN[i];
    }
  }
  return rc;
}

/* Pruning of unary paths: a region below the top whose one child has
** (nearly) its inclusive time is marked removed. */
static int gapsPruneUnary(Gaps *g){
  RegAgg *aReg = g->aReg;
  int64_t i, nReg = g->nReg;
  int64_t *aChildN = sqlite3_malloc64(sizeof(int64_t)*(sqlite3_uint64)(2*nReg+1));
  int64_t *aChild1 = aChildN ? aChildN + nReg : 0;
  if( aChildN==0 ) return SQLITE_NOMEM;
  memset(aChildN, 0, sizeof(int64_t)*(size_t)(2*nReg+1));
  for(i=0; i<nReg; i++){
    /* the parent: the path of the text before the last "=>" */
    int32_t par = g->rx.aNode[aReg[i].path].parent;
    int32_t pr = par>=0 ? g->rx.aNode[par].reg : -1;
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
  return SQLITE_OK;
}

/* profsum_agg_region: the regions not pruned. */
static int gapsWriteRegions(Gaps *g){
  Engine *e = g->e;
  ProfsumRowBuf b;
  int64_t i;
  int rc = profsumRowBufInit(&b, e->db, e->zSchema, "profsum_agg_region",
      "trace_id, path, depth, count, inclusive_duration, exclusive_duration, inclusive_ref, exclusive_ref", 8);
  for(i=0; rc==SQLITE_OK && i<g->nReg; i++){
    const RegAgg *a = &g->aReg[i];
    int64_t nPath;
    if( a->removed ) continue;
    if( (rc = regionText(e, &g->rx, a->path, &g->zPath, &g->nPathBuf, &nPath)) ){
      if( rc==SQLITE_TOOBIG ){
        profsumEngErr(e, rc, "a hierarchical region's path is longer than 2^31 bytes (depth %d)",
               a->depth);
      }
      profsumRowBufFree(&b);
      return rc;
    }
    profsumRowBufInt(&b, e->traceId);
    profsumRowBufText(&b, g->zPath, (int)nPath);
    profsumRowBufInt(&b, a->depth);
    profsumRowBufInt(&b, a->count);
    profsumRowBufDouble(&b, US(a->incl));
    profsumRowBufDouble(&b, US(a->excl));
    profsumRowBufDouble(&b, a->inclRef);
    profsumRowBufDouble(&b, a->exclRef);
    rc = profsumRowBufEnd(&b);
  }
  if( rc==SQLITE_OK ) rc = profsumRowBufFlush(&b);
  profsumRowBufFree(&b);
  return profsumEngRowsErr(e, rc);
}

/* Preferred path per op name: most frequent, ties → smallest path; g->pref
** becomes op name → (v1 path, v2 count). */
static int gapsPickPreferred(Gaps *g){
  Engine *e = g->e;
  HMap best = {0,0,0};
  int64_t i;
  for(i=0; i<g->pref.nSlot; i++){
    HEnt *h = &g->pref.a[i], *b;
    int isNew;
    if( !h->used ) continue;
    b = profsumEngHmGet(&best, h->k1, 0, 1, &isNew);
    if( b==0 ){ profsumEngHmFree(&best); return SQLITE_NOMEM; }
    if( isNew || h->v1>b->v2 || (h->v1==b->v2 && spCmp(e, (int32_t)h->k2, (int32_t)b->v1)<0) ){
      b->v1 = h->k2; b->v2 = h->v1;
    }
  }
  profsumEngHmFree(&g->pref);
  g->pref = best;
  return SQLITE_OK;
}

/* 1 when name id is a marker (isMarkerName), cached in g->aMark. */
static int gapsIsMarker(Gaps *g, int32_t id){
  if( g->aMark[id]==0 ){
    g->aMark[id] = (unsigned char)(1 + isMarkerName(SP_STR(&g->e->pool, id), SP_LEN(&g->e->pool, id)));
  }
  return g->aMark[id]==2;
}

/* The event at position j of the track being walked in gap order. */
static inline int32_t gapAt(const Gaps *g, int64_t j){
  return g->aGv ? g->aGv[j] : (int32_t)(g->iG0 + j);
}

/* Count one gap of gap duration `gap` (µs, the doubles) before event
** gapAt(j) of a track of n events in gap order: its payload (the event, or
** when it is a marker the first non-marker of its chain within 8 events)
** gets the gap in its row, the marker count and the gap context. */
static int gapsAddGap(Gaps *g, int64_t j, int64_t n, double gap){
  Engine *e = g->e;
  int32_t eName = KEY(e, EV(e, gapAt(g, j)))->name;
  int32_t payload = gapAt(g, j), pName;
  int64_t c;
  int isNew, rc;
  HEnt *h;
  if( gapsIsMarker(g, eName) ){
    int32_t iChain = payload;   /* largest end of the chain so far */
    for(c=j+1; c<n && c<=j+8; c++){
      int32_t ic = gapAt(g, c);
      int32_t cName = KEY(e, EV(e, ic))->name;
      if( cmpTsEnd(e, ic, iChain)>0 ) break;
      if( cmpEnd(e, ic, iChain)>0 ) iChain = ic;
      if( gapsIsMarker(g, cName) ) continue;
      payload = ic;
      break;
    }
  }
  pName = KEY(e, EV(e, payload))->name;
  h = profsumEngHmGet(&g->gapMap, pName, 0, 1, &isNew);
  if( h==0 ) return SQLITE_NOMEM;
  if( isNew ){
    if( (rc = profsumEngGrowCapped((void**)&g->aGapAgg, &g->nAllocGapRow, g->nGapRow+1, 0,
                                   sizeof(int64_t)*GAPROW)) ) return rc;
    memset(&g->aGapAgg[GAPROW*g->nGapRow], 0, sizeof(int64_t)*GAPROW);
    g->aGapAgg[GAPROW*g->nGapRow+3] = pName;
    g->aGapAgg[GAPROW*g->nGapRow+4] = -1;
    h->v1 = g->nGapRow++;
  }
  {
    int64_t *row = &g->aGapAgg[GAPROW*h->v1];
    row[0]++;
    profsumEngAddBits(&row[1], gap);                 /* in the reference's order */
    if( gap>profsumEngBitsDouble(row[2]) ) memcpy(&row[2], &gap, sizeof(double));
  }
  h = profsumEngHmGet(&g->markers, pName, eName, 1, 0);
  if( h==0 ) return SQLITE_NOMEM;
  h->v1++;
  return gapContext(e, &g->rx, &g->pref, &g->pathMemo, &g->ctxMap,
                    &g->zTmp, KEY(e, EV(e, payload)), gap);
}

/* The gaps of device-op track t: its slice put in gap order (it is in
** nesting order: only runs of equal start differ, by end), then each event
** that starts after the largest end before it (in doubles).  A track
** without two events of equal start (the usual case) is in gap order
** already: it is read in place (g->aGv, gapAt), else its copy in g->aG is
** put in gap order, so that no array of a track's events is made for
** nothing. */
static int gapsOfTrack(Gaps *g, const STrack *t){
  Engine *e = g->e;
  int64_t j, n = t->nEv, tol = profsumEngTrackTol(e, t);
  int32_t iPrev;        /* the event with the largest end so far (doubles) */
  int64_t prevEnd;      /* its exact end */
  int rc;
  /* equal starts are neighbours in processing order (it is sorted by
  ** start), and equality of the doubles is transitive: a run of gapOrder
  ** has two neighbours of equal start */
  {
    int64_t tsPrev = n>0 ? EV(e, ORD(e, t->iFirst))->ts : 0;
    for(j=1; j<n; j++){
      /* profsumEngCmpIn(j's start, j-1's): beyond the tolerance the exact
      ** difference decides (not equal), as in profsumEngCmpIn */
      int64_t ts = EV(e, ORD(e, t->iFirst+j))->ts, d = ts - tsPrev;
      ORD_PREFETCH(e, t->iFirst+j, e->nEv);
      tsPrev = ts;
      if( d>=-tol && d<=tol
       && profsumEngCmpIn(e, t, tol, ORD(e, t->iFirst+j), 0, ORD(e, t->iFirst+j-1), 0)==0 ) break;
    }
  }
  if( j<n ){
    if( n>g->nG ){
      int32_t *a = sqlite3_realloc64(g->aG, sizeof(int32_t)*(sqlite3_uint64)n);
      if( a==0 ) return SQLITE_NOMEM;
      g->aG = a;
      g->nG = n;
    }
    profsumEngOrdCopy(e, g->aG, t->iFirst, n);
    gapOrder(e, t, g->aG, n);
    g->aGv = g->aG;
  }else{
    g->aGv = e->aOrd ? e->aOrd + t->iFirst : 0;
    g->iG0 = t->iFirst;
  }
  iPrev = gapAt(g, 0);
  {
    const SEv *r = EV(e, iPrev);
    prevEnd = r->ts + EVDUR(e, r);
  }
  for(j=1; j<n; j++){
    int32_t k = gapAt(g, j);
    const SEv *r = EV(e, k);
    int64_t ts = r->ts, end = ts + EVDUR(e, r);
    ORD_PREFETCH(e, t->iFirst+j, e->nEv);   /* gapAt's order, or close to it */
    /* profsumEngCmpIn(k's start, then its end, against prevEnd, the end of
    ** iPrev): beyond the tolerance the exact difference decides, as in
    ** profsumEngCmpIn, which decides the rest */
    int64_t d = ts - prevEnd;
    if( d>tol || (d>=-tol && profsumEngCmpIn(e, t, tol, k, 0, iPrev, 1)>0) ){
      /* the gap as the reference has it: its doubles' E.ts − prev_end
      ** (positive: the doubles decided there is a gap).  Not exact
      ** picoseconds: the totals order the rows, and the reference's
      ** rounding breaks ties that exact sums keep (docs/summary.md) */
      double fTs, fEnd, x;
      profsumEngEvFloat(e, k, &fTs, &x);
      profsumEngEvFloat(e, iPrev, &x, &fEnd);
      if( (rc = gapsAddGap(g, j, n, fTs - fEnd)) ) return rc;
    }
    d = end - prevEnd;
    if( d>tol || (d>=-tol && profsumEngCmpIn(e, t, tol, k, 1, iPrev, 1)>0) ){
      iPrev = k;
      prevEnd = end;
    }
  }
  return SQLITE_OK;
}

/* The gaps of every device-op track. */
static int gapsPass(Gaps *g){
  Engine *e = g->e;
  int64_t i;
  int rc;
  /* event names have the ids below pool.n now (contexts add strings later) */
  g->aMark = sqlite3_malloc64((sqlite3_uint64)(e->pool.n ? e->pool.n : 1));
  if( g->aMark==0 ) return SQLITE_NOMEM;
  memset(g->aMark, 0, (size_t)e->pool.n);
  for(i=0; i<e->nTrk; i++){
    const STrack *t = &e->aTrk[i];
    if( !(t->isDevice && t->isDevOp) || t->nEv==0 ) continue;
    if( (rc = gapsOfTrack(g, t)) ) return rc;
  }
  return SQLITE_OK;
}

/* Marker per payload: most frequent, ties → smallest name. */
static void gapsPickMarkers(Gaps *g){
  int64_t i;
  for(i=0; i<g->markers.nSlot; i++){
    HEnt *h = &g->markers.a[i];
    HEnt *gm;
    int64_t *row;
    if( !h->used ) continue;
    gm = profsumEngHmGet(&g->gapMap, h->k1, 0, 0, 0);
    row = &g->aGapAgg[GAPROW*gm->v1];
    if( row[4]<0 || h->v1>row[5] || (h->v1==row[5] && spCmp(g->e, (int32_t)h->k2, (int32_t)row[4])<0) ){
      row[4] = h->k2; row[5] = h->v1;
    }
  }
}

/* profsum_agg_gap: one row per payload op, in the order of the table's
** key (profsumEngStrOrder). */
static int gapsWriteGaps(Gaps *g){
  Engine *e = g->e;
  ProfsumRowBuf b;
  int64_t i;
  int32_t *aId = 0;
  int64_t *aOrd = 0;
  int rc = profsumRowBufInit(&b, e->db, e->zSchema, "profsum_agg_gap",
      "trace_id, name, marker_op, count, total_gap_duration, max_gap_duration", 6);
  if( rc==SQLITE_OK ){
    aId = sqlite3_malloc64(sizeof(int32_t)*(sqlite3_uint64)(g->nGapRow+1));
    if( aId==0 ) rc = SQLITE_NOMEM;
  }
  if( rc==SQLITE_OK ){
    for(i=0; i<g->nGapRow; i++) aId[i] = (int32_t)g->aGapAgg[GAPROW*i+3];
    rc = profsumEngStrOrder(e, g->nGapRow, aId, 0, &aOrd);
  }
  for(i=0; rc==SQLITE_OK && i<g->nGapRow; i++){
    const int64_t *row = &g->aGapAgg[GAPROW*aOrd[i]];
    profsumRowBufInt(&b, e->traceId);
    profsumEngRowStrId(e, &b, (int32_t)row[3]);
    profsumEngRowStrId(e, &b, (int32_t)row[4]);
    profsumRowBufInt(&b, row[0]);
    profsumRowBufDouble(&b, profsumEngBitsDouble(row[1]));
    profsumRowBufDouble(&b, profsumEngBitsDouble(row[2]));
    rc = profsumRowBufEnd(&b);
  }
  if( rc==SQLITE_OK ) rc = profsumRowBufFlush(&b);
  profsumRowBufFree(&b);
  sqlite3_free(aOrd);
  sqlite3_free(aId);
  return profsumEngRowsErr(e, rc);
}

/* profsum_agg_gap_context: one row per (payload op, region path), in the
** order of the table's key (profsumEngStrOrder). */
static int gapsWriteContexts(Gaps *g){
  Engine *e = g->e;
  ProfsumRowBuf b;
  int64_t i, n = 0;
  int32_t *aOp = 0, *aPath = 0;
  int64_t *aSlot = 0, *aOrd = 0;
  int rc = profsumRowBufInit(&b, e->db, e->zSchema, "profsum_agg_gap_context",
      "trace_id, op_name, region_path, count, total_gap_duration", 5);
  if( rc==SQLITE_OK ){
    aOp = sqlite3_malloc64(sizeof(int32_t)*(sqlite3_uint64)(g->ctxMap.nSlot+1));
    aPath = sqlite3_malloc64(sizeof(int32_t)*(sqlite3_uint64)(g->ctxMap.nSlot+1));
    aSlot = sqlite3_malloc64(sizeof(int64_t)*(sqlite3_uint64)(g->ctxMap.nSlot+1));
    if( aOp==0 || aPath==0 || aSlot==0 ) rc = SQLITE_NOMEM;
  }
  for(i=0; rc==SQLITE_OK && i<g->ctxMap.nSlot; i++){
    const HEnt *h = &g->ctxMap.a[i];
    if( !h->used ) continue;
    aOp[n] = (int32_t)h->k1;
    aPath[n] = (int32_t)h->k2;
    aSlot[n++] = i;
  }
  if( rc==SQLITE_OK ) rc = profsumEngStrOrder(e, n, aOp, aPath, &aOrd);
  for(i=0; rc==SQLITE_OK && i<n; i++){
    const HEnt *h = &g->ctxMap.a[aSlot[aOrd[i]]];
    profsumRowBufInt(&b, e->traceId);
    profsumEngRowStrId(e, &b, (int32_t)h->k1);
    profsumEngRowStrId(e, &b, (int32_t)h->k2);
    profsumRowBufInt(&b, h->v1);
    profsumRowBufDouble(&b, profsumEngBitsDouble(h->v2));
    rc = profsumRowBufEnd(&b);
  }
  if( rc==SQLITE_OK ) rc = profsumRowBufFlush(&b);
  profsumRowBufFree(&b);
  sqlite3_free(aOrd);
  sqlite3_free(aSlot);
  sqlite3_free(aPath);
  sqlite3_free(aOp);
  return profsumEngRowsErr(e, rc);
}

/* profsum_agg_gap, then profsum_agg_gap_context. */
static int gapsWrite(Gaps *g){
  int rc = gapsWriteGaps(g);
  return rc ? rc : gapsWriteContexts(g);
}

/* The gap pass and the markers' pick: the side job of profsumEngGapsBegin
** (or the caller's, at profsumEngGapsFinish).  It reads the ordered
** records, the tracks and keys and the pool's texts, which nothing writes
** until it is joined, and writes only g; the one thing it shares is the
** pool, into which gapContext interns the contexts' copy(...) paths: the
** room for those ids was made before it was queued, so that the id
** arrays the calling thread reads meanwhile never move. */
static void *gapsJobMain(void *pArg){
  Gaps *g = (Gaps*)pArg;
  g->jobRc = gapsPass(g);
  if( g->jobRc==SQLITE_OK ) gapsPickMarkers(g);
  return 0;
}

/* See engine_int.h: the steps above in order, the gap pass queued. */
int profsumEngGapsBegin(Gaps *g){
  Engine *e = g->e;
  int rc = gapsRegionEnd(g);
  if( rc==SQLITE_OK ) rc = gapsPruneUnary(g);
  if( rc==SQLITE_OK ) rc = gapsWriteRegions(g);
  if( rc==SQLITE_OK ) rc = gapsPickPreferred(g);
  /* a copy(...) context path is interned at most once per (name, tf_op)
  ** of a device op named copy*, so at most once per such event key: room
  ** for as many ids.  Every other text the pass needs was interned by the
  ** event pass (partsOf) */
  if( rc==SQLITE_OK ){
    int64_t i, nCopy = 0;
    for(i=0; i<e->nKey; i++){
      const EvKey *q = &e->aKey[i];
      const STrack *t = &e->aTrk[q->trk];
      ProfsumSlice c;
      if( !(t->isDevice && t->isDevOp) ) continue;
      c = profsumCanonicalOp(SP_STR(&e->pool, q->name), SP_LEN(&e->pool, q->name));
      if( c.n>=4 && sqlite3_strnicmp(c.z, "copy", 4)==0 ) nCopy++;
    }
    rc = profsumEngSpReserve(&e->pool, nCopy);
  }
  if( rc==SQLITE_OK ){
    g->bBegun = 1;
    g->azStr0 = e->pool.azStr;
    (void)profsumEngSideStart(e, &g->side, ENG_SIDE_RANK_GAPS, gapsJobMain, g);
  }
  return rc;
}

/* See engine_int.h. */
int profsumEngGapsFinish(Gaps *g){
  if( !g->bBegun ) return SQLITE_OK;
  if( !profsumEngSideJoin(&g->side) ) gapsJobMain(g);
  g->bBegun = 0;
  assert( g->e->pool.azStr==g->azStr0 );
  if( g->jobRc ) return g->jobRc;
  return gapsWrite(g);
}

/* See engine_int.h. */
void profsumEngGapsFree(Gaps *g){
  if( g==0 ) return;
  gapsFree(g);
  sqlite3_free(g);
}
#undef GAPROW
