/*
** insights_env.c — the collector of what an XPlane says of where and when
** it ran (InsEnv of insights_int.h), stored in profsum_agg_env:
**
**   - every stat of the /host:metadata plane (JAX writes jax_version,
**     jaxlib_version, and its backends' versions there: tpu_version,
**     cpu_version, ...);
**   - profile_start_time and profile_stop_time of the Task Environment
**     plane (ns since the epoch).
**   - of a trace JSON, the members of its top-level object beside
**     traceEvents (insEnvJsonTop: PyTorch's profiler writes the GPUs'
**     properties, the runtime versions and the rank there).
**
** A name met in several such planes keeps the value of the first plane
** that has it (as the session's alignment takes the first start); within
** a plane a later stat of a name with a value to keep replaces the
** earlier one (as the planes' stats column of profsum_xplane_planes shows
** them).  A name with a NUL byte is left out, and past ENV_ROWS_MAX names
** the others are.  Values are text:
** strings as read (bytes with U+FFFD for invalid UTF-8, a reference as
** the name it refers to, a compressed string inflated), integers in
** decimal, doubles as Python's repr writes them (NaN and the infinities
** as NaN, Infinity, -Infinity).  A value over
** ENV_VALUE_MAX bytes, or an empty one, is left out.
*/
#include "insights_int.h"
#include "jsontree.h"
#include "utf8rule.h"

#include <math.h>
#include <string.h>

#define ENV_VALUE_MAX 4096      /* bytes of a value kept at most */
#define ENV_ROWS_MAX 256        /* names kept at most */

typedef struct EnvRow {
  char *zName, *zValue;       /* sqlite3_malloc'd */
  int iPlane;                 /* ordinal of the plane it came from */
} EnvRow;

struct InsEnv {
  EnvRow *aRow; int nRow, nAlloc;
  int nPlane;                 /* planes seen */
};

/* See insights_int.h. */
int insEnvNew(InsEnv **pp){
  *pp = sqlite3_malloc64(sizeof(InsEnv));
  if( *pp==0 ) return SQLITE_NOMEM;
  memset(*pp, 0, sizeof(InsEnv));
  return SQLITE_OK;
}

/* See insights_int.h. */
void insEnvFree(InsEnv *p){
  int i;
  if( p==0 ) return;
  for(i=0; i<p->nRow; i++){ sqlite3_free(p->aRow[i].zName); sqlite3_free(p->aRow[i].zValue); }
  sqlite3_free(p->aRow);
  sqlite3_free(p);
}

/* The value of stat st as text into *pz (sqlite3_malloc'd; 0 when it has
** none to keep: no value, empty, or over ENV_VALUE_MAX bytes).  SQLITE_OK,
** SQLITE_NOMEM or the decoder's error (profsumXpStatText). */
static int envValue(ProfsumXp *pXp, const ProfsumXpStat *st, char **pz){
  const char *z = 0;
  int64_t n = 0;
  int rc;
  *pz = 0;
  switch( st->eType ){
    case PROFSUM_XV_NONE: return SQLITE_OK;
    case PROFSUM_XV_INT64: *pz = sqlite3_mprintf("%lld", (long long)st->iVal); break;
    case PROFSUM_XV_UINT64: *pz = sqlite3_mprintf("%llu", (unsigned long long)st->uVal); break;
    case PROFSUM_XV_DOUBLE: {
      char zNum[64];
      if( isnan(st->rVal) ) *pz = sqlite3_mprintf("NaN");
      else if( isinf(st->rVal) ) *pz = sqlite3_mprintf(st->rVal>0 ? "Infinity" : "-Infinity");
      else{ jReprDouble(st->rVal, zNum); *pz = sqlite3_mprintf("%s", zNum); }
      break;
    }
    default:
      /* a string or bytes value's text is at least as long as its bytes
      ** (U+FFFD takes 3 for each bad one): a long one is not even read */
      if( (st->eType==PROFSUM_XV_STR || st->eType==PROFSUM_XV_BYTES) && st->n>ENV_VALUE_MAX ) return SQLITE_OK;
      if( (rc = profsumXpStatText(pXp, st, &z, &n))!=SQLITE_OK ) return rc;
      if( z==0 || n<=0 || n>ENV_VALUE_MAX ) return SQLITE_OK;
      *pz = sqlite3_mprintf("%.*s", (int)n, z);
      break;
  }
  return *pz ? SQLITE_OK : SQLITE_NOMEM;
}

/* Keep name z[0..n) with value zVal (taken over, also on error) from
** plane iPlane: a new name is added; one of the same plane is replaced;
** one of an earlier plane stays.  SQLITE_OK or SQLITE_NOMEM. */
static int envKeep(InsEnv *p, const char *z, int64_t n, char *zVal, int iPlane){
  int i;
  for(i=0; i<p->nRow; i++){
    EnvRow *r = &p->aRow[i];
    if( (int64_t)strlen(r->zName)==n && memcmp(r->zName, z, (size_t)n)==0 ){
      if( r->iPlane==iPlane ){ sqlite3_free(r->zValue); r->zValue = zVal; }
      else sqlite3_free(zVal);
      return SQLITE_OK;
    }
  }
  if( p->nRow>=ENV_ROWS_MAX ){ sqlite3_free(zVal); return SQLITE_OK; }
  if( p->nRow>=p->nAlloc ){
    int nNew = p->nAlloc ? p->nAlloc*2 : 16;
    EnvRow *a = sqlite3_realloc64(p->aRow, sizeof(EnvRow)*(sqlite3_uint64)nNew);
    if( a==0 ){ sqlite3_free(zVal); return SQLITE_NOMEM; }
    p->aRow = a; p->nAlloc = nNew;
  }
  p->aRow[p->nRow].zName = sqlite3_mprintf("%.*s", (int)n, z);
  p->aRow[p->nRow].zValue = zVal;
  p->aRow[p->nRow].iPlane = iPlane;
  if( p->aRow[p->nRow].zName==0 ){ sqlite3_free(zVal); return SQLITE_NOMEM; }
  p->nRow++;
  return SQLITE_OK;
}

/* 1 when z[0..n) is the NUL-free text lit. */
static int envIs(const char *z, int64_t n, const char *lit){
  return z && n==(int64_t)strlen(lit) && memcmp(z, lit, (size_t)n)==0;
}

/* See insights_int.h: the stats of a /host:metadata plane, the start and
** stop times of a Task Environment plane. */
int insEnvXpPlane(InsEnv *p, ProfsumXp *pXp, const ProfsumXpPlane *pl){
  int isMeta = envIs(pl->zName, pl->nName, "/host:metadata");
  int isTask = envIs(pl->zName, pl->nName, "Task Environment");
  int i, rc = SQLITE_OK, iPlane = p->nPlane++;
  if( !isMeta && !isTask ) return SQLITE_OK;
  for(i=0; rc==SQLITE_OK && i<pl->nStat; i++){
    const ProfsumXpStat *st = &pl->aStat[i];
    char *zVal;
    if( st->zName==0 || st->nName<=0 || memchr(st->zName, 0, (size_t)st->nName) ) continue;
    if( isTask && !envIs(st->zName, st->nName, "profile_start_time")
        && !envIs(st->zName, st->nName, "profile_stop_time") ) continue;
    if( (rc = envValue(pXp, st, &zVal))!=SQLITE_OK || zVal==0 ) continue;
    rc = envKeep(p, st->zName, st->nName, zVal, iPlane);
  }
  return rc;
}

/* Scalar node v as env text into *pz (sqlite3_malloc'd; 0 for a null, an
** array or object, an empty string, a string holding U+0000 (SQLite's
** text would end there) or text over ENV_VALUE_MAX bytes): a string as
** it is, with U+FFFD for bytes that are not UTF-8; an integer in decimal
** (one beyond 64 bits with the digits the file writes); a double as
** Python's repr writes it; true/false.  SQLITE_OK or SQLITE_NOMEM. */
static int envNodeText(const JNode *v, char **pz){
  char zNum[64];
  *pz = 0;
  switch( v->type ){
    case JT_TRUE: *pz = sqlite3_mprintf("true"); break;
    case JT_FALSE: *pz = sqlite3_mprintf("false"); break;
    case JT_INT: *pz = sqlite3_mprintf("%lld", (long long)v->i); break;
    case JT_REAL:
      if( v->z ){ *pz = sqlite3_mprintf("%.*s", v->n, v->z); break; }
      jReprDouble(v->r, zNum);
      *pz = sqlite3_mprintf("%s", zNum);
      break;
    case JT_STRING:
      if( v->n<=0 || v->n>ENV_VALUE_MAX || memchr(v->z, 0, (size_t)v->n) ) return SQLITE_OK;
      *pz = sqlite3_mprintf("%.*s", v->n, v->z);
      if( *pz ) *pz = profsumUtf8Scrub(*pz);
      if( *pz && strlen(*pz)>ENV_VALUE_MAX ){ sqlite3_free(*pz); *pz = 0; return SQLITE_OK; }
      break;
    default:
      return SQLITE_OK;
  }
  return *pz ? SQLITE_OK : SQLITE_NOMEM;
}

/* Keep zName → the distinct values of field zField over the objects of
** array pArr, in byte order, joined with ", " (zField2: a second field,
** written after a '.', as computeMajor.computeMinor; an object without
** both is left out); nothing when no object has a scalar value for it.
** SQLITE_OK or SQLITE_NOMEM. */
static int envKeepDistinct(InsEnv *p, const char *zName, const JNode *pArr,
                           const char *zField, const char *zField2, int iPlane){
  char **az;
  int i, j, n = 0, rc = SQLITE_OK;
  sqlite3_str *s;
  if( pArr->nChild<=0 ) return SQLITE_OK;
  az = sqlite3_malloc64(sizeof(char*)*(sqlite3_uint64)pArr->nChild);
  if( az==0 ) return SQLITE_NOMEM;
  for(i=0; rc==SQLITE_OK && i<pArr->nChild; i++){
    const JNode *a = jAt(pArr, i), *f = a && a->type==JT_OBJECT ? jGet(a, zField) : 0;
    char *z = 0, *z2 = 0;
    if( f==0 || (rc = envNodeText(f, &z))!=SQLITE_OK || z==0 ) continue;
    if( zField2 ){
      const JNode *f2 = jGet(a, zField2);
      char *zJoin;
      if( f2==0 || (rc = envNodeText(f2, &z2))!=SQLITE_OK || z2==0 ){ sqlite3_free(z); continue; }
      zJoin = sqlite3_mprintf("%s.%s", z, z2);
      sqlite3_free(z); sqlite3_free(z2);
      z = zJoin;
      if( z==0 ){ rc = SQLITE_NOMEM; continue; }
    }
    for(j=0; j<n && strcmp(az[j], z)!=0; j++){}
    if( j<n ){ sqlite3_free(z); continue; }
    for(j=n; j>0 && strcmp(az[j-1], z)>0; j--) az[j] = az[j-1];
    az[j] = z;
    n++;
  }
  if( rc==SQLITE_OK && n>0 ){
    char *zVal;
    s = sqlite3_str_new(0);
    for(j=0; j<n; j++){
      if( j ) sqlite3_str_appendall(s, ", ");
      sqlite3_str_appendall(s, az[j]);
    }
    zVal = sqlite3_str_finish(s);
    if( zVal==0 ) rc = SQLITE_NOMEM;
    else if( strlen(zVal)>ENV_VALUE_MAX ) sqlite3_free(zVal);
    else rc = envKeep(p, zName, (int64_t)strlen(zName), zVal, iPlane);
  }
  for(j=0; j<n; j++) sqlite3_free(az[j]);
  sqlite3_free(az);
  return rc;
}

/* 1 when the NUL-terminated name z keeps the text rule (utf8rule.h). */
static int envNameOk(const char *z){
  return profsumTextKeepsRule(z, (sqlite3_int64)strlen(z));
}

/* 1 when the JSON text z[0..n) writes the escape \u0000. */
static int envHasNulEscape(const char *z, int n){
  int i;
  for(i=0; i+6<=n; i++){
    if( z[i]=='\\' ){
      if( z[i+1]=='u' && z[i+2]=='0' && z[i+3]=='0' && z[i+4]=='0' && z[i+5]=='0' ) return 1;
      i++;    /* the escaped character is no backslash of its own */
    }
  }
  return 0;
}

/* See insights_int.h: a trace JSON's top-level member, as PyTorch's
** profiler (Kineto) writes them.  deviceProperties (an array, one object
** per GPU) gives device_count and the distinct device_model (name),
** device_memory_bytes (totalGlobalMem), device_compute_capability
** (computeMajor.computeMinor) and device_sm_count (numSms);
** distributedInfo gives distributed_backend, distributed_rank and
** distributed_world_size; the members of the trace event format's
** otherData and of metadata objects that are no arrays or objects are
** kept under their own names (not highres-ticks, a hint to trace viewers
** that xprof writes in every JAX trace JSON); any other member that is
** no array or object is kept under its key as envNodeText writes it
** (cuda_runtime_version, hip_runtime_version, baseTimeNanoseconds,
** trace_id, ...), except displayTimeUnit (the trace's own field) and
** username (a person's name has no place in a shared database).  Other
** arrays and objects are trace data or logs (stackFrames, samples,
** Kineto's INFO lines), not the environment: left out, as are a value
** that is not JSON and a name that is not UTF-8. */
int insEnvJsonTop(InsEnv *p, const char *zKey, const char *zVal, int nVal){
  char *zText = 0;
  JNode *v;
  int rc = SQLITE_OK, iPlane = p->nPlane++;
  if( strcmp(zKey, "displayTimeUnit")==0 || strcmp(zKey, "username")==0 ) return SQLITE_OK;
  if( (v = jParseQuiet(zVal, nVal, &rc))==0 ) return rc;
  if( strcmp(zKey, "deviceProperties")==0 && v->type==JT_ARRAY ){
    int i, nDev = 0;
    for(i=0; i<v->nChild; i++) nDev += jAt(v, i)->type==JT_OBJECT;
    if( nDev>0 ){
      char *zN = sqlite3_mprintf("%d", nDev);
      rc = zN ? envKeep(p, "device_count", 12, zN, iPlane) : SQLITE_NOMEM;
      if( rc==SQLITE_OK ) rc = envKeepDistinct(p, "device_model", v, "name", 0, iPlane);
      if( rc==SQLITE_OK ) rc = envKeepDistinct(p, "device_memory_bytes", v, "totalGlobalMem", 0, iPlane);
      if( rc==SQLITE_OK ) rc = envKeepDistinct(p, "device_compute_capability", v, "computeMajor",
                                               "computeMinor", iPlane);
      if( rc==SQLITE_OK ) rc = envKeepDistinct(p, "device_sm_count", v, "numSms", 0, iPlane);
    }
  }else if( strcmp(zKey, "distributedInfo")==0 && v->type==JT_OBJECT ){
    static const char *const azF[3][2] = {
      {"backend", "distributed_backend"}, {"rank", "distributed_rank"},
      {"world_size", "distributed_world_size"} };
    int i;
    for(i=0; rc==SQLITE_OK && i<3; i++){
      const JNode *f = jGet(v, azF[i][0]);
      if( f && (rc = envNodeText(f, &zText))==SQLITE_OK && zText ){
        rc = envKeep(p, azF[i][1], (int64_t)strlen(azF[i][1]), zText, iPlane);
      }
    }
  }else if( strcmp(zKey, "otherData")==0 || strcmp(zKey, "metadata")==0 ){
    /* (a member name written with \u0000 would be cut at it, as the tree
    ** keeps names as C strings: such an object is left out whole) */
    int i, n = v->type==JT_OBJECT && !envHasNulEscape(zVal, nVal) ? v->nChild : 0;
    for(i=0; rc==SQLITE_OK && i<n; i++){
      const JNode *f = v->a[i];
      if( f->zKey && f->zKey[0] && envNameOk(f->zKey) && strcmp(f->zKey, "username")!=0
       && strcmp(f->zKey, "highres-ticks")!=0
       && (rc = envNodeText(f, &zText))==SQLITE_OK && zText ){
        rc = envKeep(p, f->zKey, (int64_t)strlen(f->zKey), zText, iPlane);
      }
    }
  }else if( envNameOk(zKey) && (rc = envNodeText(v, &zText))==SQLITE_OK && zText ){
    rc = envKeep(p, zKey, (int64_t)strlen(zKey), zText, iPlane);
  }
  jFree(v);
  return rc;
}

/* See insights_int.h. */
int insEnvWrite(InsEnv *p, sqlite3 *db, const char *zSchema, sqlite3_int64 traceId,
                const char *zFunc, char **pzErr){
  sqlite3_stmt *pIns = 0;
  char *z;
  int i, rc;
  if( p->nRow==0 ) return SQLITE_OK;
  z = sqlite3_mprintf("INSERT INTO \"%w\".profsum_agg_env(trace_id, name, value) VALUES(?1,?2,?3)", zSchema);
  if( z==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, z, -1, &pIns, 0);
  sqlite3_free(z);
  for(i=0; rc==SQLITE_OK && i<p->nRow; i++){
    sqlite3_bind_int64(pIns, 1, traceId);
    sqlite3_bind_text(pIns, 2, p->aRow[i].zName, -1, SQLITE_STATIC);
    sqlite3_bind_text(pIns, 3, p->aRow[i].zValue, -1, SQLITE_STATIC);
    rc = sqlite3_step(pIns);
    rc = rc==SQLITE_DONE ? sqlite3_reset(pIns) : sqlite3_errcode(db);
  }
  if( rc!=SQLITE_OK && rc!=SQLITE_NOMEM ){
    *pzErr = sqlite3_mprintf("%s: storing the capture's environment: %s", zFunc, sqlite3_errmsg(db));
  }
  sqlite3_finalize(pIns);
  return rc;
}
