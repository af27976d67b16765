/*
** vtab_xplane.c — table-valued functions over XSpace protobuf files
** (<host>.xplane.pb, also gzip-compressed), through the decoder of
** xplane_pb.c:
**
**   SELECT * FROM profsum_xplane_planes('host.xplane.pb');
**   SELECT * FROM profsum_xplane_lines('host.xplane.pb');
**
** Schemas (eponymous-only; the hidden path column is the input):
**
**   CREATE TABLE profsum_xplane_planes(
**     plane_index INTEGER,        -- 0-based, file order
**     pid INTEGER,                -- plane_index + 1 (the reference tool's pid)
**     plane_id INTEGER,           -- XPlane.id
**     name TEXT,                  -- XPlane.name
**     num_lines INTEGER,
**     num_events INTEGER,         -- every XEvent of its lines
**     num_event_metadata INTEGER, -- distinct keys of the maps
**     num_stat_metadata INTEGER,
**     stats TEXT,                 -- JSON object of the plane's stats
**     hostnames TEXT,             -- JSON array of XSpace.hostnames
**     path HIDDEN
**   );
**
**   CREATE TABLE profsum_xplane_lines(
**     plane_index INTEGER, pid INTEGER, plane_name TEXT,
**     line_index INTEGER,         -- 0-based within its plane
**     tid INTEGER,                -- line_id, or line_index + 1 when it is 0
**     line_id INTEGER, display_id INTEGER, name TEXT, display_name TEXT,
**     timestamp_ns INTEGER, duration_ps INTEGER,
**     num_events INTEGER,
**     path HIDDEN
**   );
**
** Both walk the whole file (every event is decoded, so a file protobuf
** would refuse fails here too, before any row) and keep only their rows.
** stats: stat name → value; integers as numbers (a uint64 above 2^63-1 as
** a string of its digits), doubles as numbers (NaN, Infinity, -Infinity as
** those strings), strings and bytes as text (U+FFFD for bytes that are not
** UTF-8), a ref_value as the referenced name, a compressed string
** inflated; stats without a known, non-empty name or without a value are
** left out; a later stat of the same name replaces the value of the
** earlier one (in its place).  Details: docs/xplane.md.
**
** Errors: "<function>: '<path>': ..." (open, read, or decode errors with
** the byte offset).  A NULL path gives no rows.
**
** Security: both read files, so they are SQLITE_VTAB_DIRECTONLY (never
** from a view or trigger stored in a database; TEMP ones and direct SQL
** can) and never INNOCUOUS.
*/
#include "profsum_int.h"
#include "utf8rule.h"
#include "xplane_pb.h"
#include "profsum_reader.h"
#include "jsontree.h"
#include "vtabkit.h"
#include "growarray.h"

#include <assert.h>
#include <math.h>
#include <string.h>

/* Columns of profsum_xplane_planes. */
#define XPP_PLANE_INDEX  0
#define XPP_PID          1
#define XPP_PLANE_ID     2
#define XPP_NAME         3
#define XPP_NUM_LINES    4
#define XPP_NUM_EVENTS   5
#define XPP_NUM_EMETA    6
#define XPP_NUM_SMETA    7
#define XPP_STATS        8
#define XPP_HOSTNAMES    9
#define XPP_PATH         10   /* HIDDEN input, last */
#define XPP_SCHEMA "CREATE TABLE x(plane_index INTEGER, pid INTEGER, plane_id INTEGER, " \
  "name TEXT, num_lines INTEGER, num_events INTEGER, num_event_metadata INTEGER, " \
  "num_stat_metadata INTEGER, stats TEXT, hostnames TEXT, path HIDDEN)"

/* Columns of profsum_xplane_lines. */
#define XPL_PLANE_INDEX  0
#define XPL_PID          1
#define XPL_PLANE_NAME   2
#define XPL_LINE_INDEX   3
#define XPL_TID          4
#define XPL_LINE_ID      5
#define XPL_DISPLAY_ID   6
#define XPL_NAME         7
#define XPL_DISPLAY_NAME 8
#define XPL_TIMESTAMP_NS 9
#define XPL_DURATION_PS  10
#define XPL_NUM_EVENTS   11
#define XPL_PATH         12   /* HIDDEN input, last */
#define XPL_SCHEMA "CREATE TABLE x(plane_index INTEGER, pid INTEGER, plane_name TEXT, " \
  "line_index INTEGER, tid INTEGER, line_id INTEGER, display_id INTEGER, name TEXT, " \
  "display_name TEXT, timestamp_ns INTEGER, duration_ps INTEGER, num_events INTEGER, " \
  "path HIDDEN)"

/* A text value of a row (sqlite3_malloc'd, may hold NUL bytes). */
typedef struct XvText { char *z; int64_t n; } XvText;

/* One row of either function (the planes function uses the first part). */
typedef struct XvRow {
  int64_t iPlane, planeId, nLines, nEvents, nEMeta, nSMeta;
  XvText name;            /* plane name (planes), line name (lines) */
  XvText stats;           /* planes: the stats JSON */
  XvText planeName;       /* lines: */
  XvText display;
  int64_t iLine, lineId, displayId, tsNs, durPs;
} XvRow;

typedef struct XvTab {
  sqlite3_vtab base;      /* Base class: must be first */
  int isLines;            /* 1: profsum_xplane_lines */
} XvTab;

typedef struct XvCursor {
  ProfsumRowCursor rows;  /* base class, current row, rows.nRow: must be first */
  XvRow *aRow;            /* rows of the current scan */
  int64_t nAlloc;
  XvText hostnames;       /* JSON array (planes) */
  char *zPath;            /* copy of the path argument, or 0 */
  const char *zCol;       /* the text column being set (xvResultText) */
} XvCursor;

/* ------------------------------------------------------------------ */
/* JSON helpers                                                        */
/* ------------------------------------------------------------------ */


/* Finish s into *pOut; SQLITE_OK, SQLITE_NOMEM or SQLITE_TOOBIG. */
static int xvStrFinish(sqlite3_str *s, XvText *pOut){
  int rc = sqlite3_str_errcode(s);
  pOut->n = sqlite3_str_length(s);
  pOut->z = sqlite3_str_finish(s);
  if( rc ){ sqlite3_free(pOut->z); pOut->z = 0; return rc; }
  if( pOut->z==0 ){ pOut->z = sqlite3_malloc64(1); if( pOut->z==0 ) return SQLITE_NOMEM; pOut->z[0] = 0; }
  return SQLITE_OK;
}

/* The JSON text of one stat's value into *pOut (sqlite3_malloc'd), or
** pOut->z==0 when the stat has no value to show. */
static int xvStatValue(ProfsumXp *p, const ProfsumXpStat *st, XvText *pOut){
  sqlite3_str *s;
  char zNum[64];
  pOut->z = 0;
  pOut->n = 0;
  switch( st->eType ){
    case PROFSUM_XV_NONE:
      return SQLITE_OK;
    case PROFSUM_XV_DOUBLE:
      if( isnan(st->rVal) ) sqlite3_snprintf(sizeof(zNum), zNum, "\"NaN\"");
      else if( isinf(st->rVal) ) sqlite3_snprintf(sizeof(zNum), zNum, st->rVal>0 ? "\"Infinity\"" : "\"-Infinity\"");
      else jReprDouble(st->rVal, zNum);
      break;
    case PROFSUM_XV_INT64:
      sqlite3_snprintf(sizeof(zNum), zNum, "%lld", (long long)st->iVal);
      break;
    case PROFSUM_XV_UINT64:
      sqlite3_snprintf(sizeof(zNum), zNum, st->uVal > (uint64_t)INT64_MAX ? "\"%llu\"" : "%llu",
                       (unsigned long long)st->uVal);
      break;
    default: {   /* STR, BYTES, REF, CSTR */
      const char *z;
      int64_t n;
      int rc = profsumXpStatText(p, st, &z, &n);
      if( rc ) return rc;
      if( z==0 ) return SQLITE_OK;        /* an omitted compressed string */
      s = sqlite3_str_new(0);
      jAppendJsonStr(s, z, n);
      return xvStrFinish(s, pOut);
    }
  }
  s = sqlite3_str_new(0);
  sqlite3_str_appendall(s, zNum);
  return xvStrFinish(s, pOut);
}

/* The plane's stats as a JSON object (see the file header). */
static int xvPlaneStats(ProfsumXp *p, const ProfsumXpPlane *pl, XvText *pOut){
  XvText *aVal;
  int *aKeep;
  int i, j, rc = SQLITE_OK;
  sqlite3_str *s;
  int first = 1;
  pOut->z = 0;
  aVal = sqlite3_malloc64((sizeof(XvText)+sizeof(int)) * (sqlite3_uint64)(pl->nStat+1));
  if( aVal==0 ) return SQLITE_NOMEM;
  aKeep = (int*)(aVal + pl->nStat + 1);
  memset(aVal, 0, sizeof(XvText)*(size_t)(pl->nStat+1));
  for(i=0; i<pl->nStat && rc==SQLITE_OK; i++){
    const ProfsumXpStat *st = &pl->aStat[i];
    aKeep[i] = -1;
    if( st->zName==0 || st->nName==0 ) continue;
    rc = xvStatValue(p, st, &aVal[i]);
    if( rc || aVal[i].z==0 ) continue;
    aKeep[i] = i;
    /* a later stat of the same name: its value in the first one's place */
    for(j=0; j<i; j++){
      const ProfsumXpStat *o = &pl->aStat[j];
      if( aKeep[j]>=0 && o->nName==st->nName && memcmp(o->zName, st->zName, (size_t)st->nName)==0 ){
        aKeep[j] = i;
        aKeep[i] = -1;
        break;
      }
    }
  }
  if( rc==SQLITE_OK ){
    s = sqlite3_str_new(0);
    sqlite3_str_appendchar(s, 1, '{');
    for(i=0; i<pl->nStat; i++){
      if( aKeep[i]<0 ) continue;
      if( !first ) sqlite3_str_appendchar(s, 1, ',');
      first = 0;
      jAppendJsonStr(s, pl->aStat[i].zName, pl->aStat[i].nName);
      sqlite3_str_appendchar(s, 1, ':');
      sqlite3_str_append(s, aVal[aKeep[i]].z, (int)aVal[aKeep[i]].n);
    }
    sqlite3_str_appendchar(s, 1, '}');
    rc = xvStrFinish(s, pOut);
  }
  for(i=0; i<pl->nStat; i++) sqlite3_free(aVal[i].z);
  sqlite3_free(aVal);
  return rc;
}

/* ------------------------------------------------------------------ */
/* The walk                                                            */
/* ------------------------------------------------------------------ */

/* A copy of z[0..n) into *pOut. */
static int xvCopy(XvText *pOut, const char *z, int64_t n){
  pOut->z = sqlite3_malloc64((sqlite3_uint64)n + 1);
  if( pOut->z==0 ) return SQLITE_NOMEM;
  memcpy(pOut->z, z, (size_t)n);
  pOut->z[n] = 0;
  pOut->n = n;
  return SQLITE_OK;
}

/* A new zeroed row at the end of the cursor's rows, or 0. */
static XvRow *xvNewRow(XvCursor *pCur){
  XvRow *a = profsumGrowArray(pCur->aRow, pCur->rows.nRow, &pCur->nAlloc, sizeof(XvRow), 16);
  if( a==0 ) return 0;
  pCur->aRow = a;
  memset(&a[pCur->rows.nRow], 0, sizeof(XvRow));
  return &a[pCur->rows.nRow++];
}

/* Walk every plane, line and event of the open file p, collecting the
** rows of the planes (isLines 0) or lines (1) function.  Returns
** SQLITE_OK or an error with *pzErr set (0 for out of memory). */
static int xvWalk(XvCursor *pCur, ProfsumXp *p, int isLines, char **pzErr){
  const ProfsumXpPlane *pl;
  int rc;
  while( (rc = profsumXpNextPlane(p, &pl, pzErr))==SQLITE_ROW ){
    const ProfsumXpLine *L;
    XvRow *r = 0;
    int64_t iFirstRow = pCur->rows.nRow;
    if( !isLines ){
      r = xvNewRow(pCur);
      if( r==0 ) return SQLITE_NOMEM;
      r->iPlane = pl->iPlane;
      r->planeId = pl->id;
      r->nEMeta = pl->nEventMetadata;
      r->nSMeta = pl->nStatMetadata;
      rc = xvCopy(&r->name, pl->zName, pl->nName);
      if( rc==SQLITE_OK ) rc = xvPlaneStats(p, pl, &r->stats);
      if( rc ) return rc;
    }
    while( (rc = profsumXpNextLine(p, &L, pzErr))==SQLITE_ROW ){
      const ProfsumXpEvent *ev;
      if( isLines ){
        XvRow *rl = xvNewRow(pCur);
        if( rl==0 ) return SQLITE_NOMEM;
        rl->iPlane = pl->iPlane;
        rl->iLine = L->iLine;
        rl->lineId = L->id;
        rl->displayId = L->displayId;
        rl->tsNs = L->timestampNs;
        rl->durPs = L->durationPs;
        rl->nEvents = L->nEvents;
        rc = xvCopy(&rl->name, L->zName, L->nName);
        if( rc==SQLITE_OK ) rc = xvCopy(&rl->display, L->zDisplay, L->nDisplay);
        if( rc==SQLITE_OK ) rc = xvCopy(&rl->planeName, pl->zName, pl->nName);
        if( rc ) return rc;
      }
      /* every event is decoded: the file is checked as protobuf would */
      while( (rc = profsumXpNextEvent(p, &ev, pzErr))==SQLITE_ROW ){}
      if( rc!=SQLITE_DONE ) return rc;
    }
    if( rc!=SQLITE_DONE ) return rc;
    if( !isLines ){
      r = &pCur->aRow[iFirstRow];
      r->nLines = pl->nLines;
      r->nEvents = pl->nEvents;
    }
  }
  if( rc!=SQLITE_DONE ) return rc;
  if( !isLines ){
    sqlite3_str *s = sqlite3_str_new(0);
    profsumXpStringsJson(p, PROFSUM_XP_HOSTNAMES, s);
    rc = xvStrFinish(s, &pCur->hostnames);
    if( rc ) return rc;
  }
  return SQLITE_OK;
}

/* ------------------------------------------------------------------ */
/* Virtual table methods                                               */
/* ------------------------------------------------------------------ */

/* xConnect (eponymous only: no xCreate).  pAux != 0: the lines function.
** Reads files: never from a view or trigger stored in a database
** (profsumVtabConnectFileReader). */
static int xvConnect(sqlite3 *db, void *pAux, int argc, const char *const *argv,
                     sqlite3_vtab **ppVtab, char **pzErr){
  int rc;
  (void)argc; (void)argv; (void)pzErr;
  rc = profsumVtabConnectFileReader(db, pAux ? XPL_SCHEMA : XPP_SCHEMA, sizeof(XvTab), ppVtab);
  if( rc==SQLITE_OK ) ((XvTab*)*ppVtab)->isLines = pAux!=0;
  return rc;
}

/* Free the cursor's rows and argument and leave it at EOF (xFilter, xClose). */
static void xvReset(ProfsumRowCursor *pRows){
  XvCursor *pCur = (XvCursor*)pRows;
  int64_t i;
  for(i=0; i<pRows->nRow; i++){
    XvRow *r = &pCur->aRow[i];
    sqlite3_free(r->name.z);
    sqlite3_free(r->stats.z);
    sqlite3_free(r->planeName.z);
    sqlite3_free(r->display.z);
  }
  sqlite3_free(pCur->aRow);
  pCur->aRow = 0;
  pRows->nRow = pCur->nAlloc = pRows->iRow = 0;
  sqlite3_free(pCur->hostnames.z);
  pCur->hostnames.z = 0;
  sqlite3_free(pCur->zPath);
  pCur->zPath = 0;
}

/* xOpen: a new cursor with no rows. */
static int xvOpen(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCur){
  (void)pVtab;
  return profsumRowCursorOpen(sizeof(XvCursor), xvReset, ppCur);
}

/* Where the current row and column are, for a message
** (profsumResultTextLimited): "<func>: '<path>': plane <i>[, line <j>]: its
** <column>". */
static char *xvWhere(void *pArg){
  const XvCursor *pCur = (const XvCursor*)pArg;
  const XvRow *r = &pCur->aRow[pCur->rows.iRow];
  const char *zPath = pCur->zPath ? pCur->zPath : "";
  if( ((const XvTab*)pCur->rows.base.pVtab)->isLines ){
    return sqlite3_mprintf("profsum_xplane_lines: '%s': plane %lld, line %lld: its %s", zPath,
                           (long long)r->iPlane, (long long)r->iLine, pCur->zCol);
  }
  return sqlite3_mprintf("profsum_xplane_planes: '%s': plane %lld: its %s", zPath,
                         (long long)r->iPlane, pCur->zCol);
}

/* A row text as a result (copied: rows die at the next xFilter), or the
** error that it is over SQLite's limit on one value, naming column zCol. */
static void xvResultText(XvCursor *pCur, sqlite3_context *ctx, const XvText *t, const char *zCol){
  if( t->z==0 ) return;
  pCur->zCol = zCol;
  profsumResultTextLimited(ctx, t->z, t->n, SQLITE_TRANSIENT, xvWhere, pCur);
}

/* xColumn (see the schemas at the top of the file). */
static int xvColumn(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i){
  XvCursor *pCur = (XvCursor*)cur;
  const XvRow *r = &pCur->aRow[pCur->rows.iRow];
  if( ((XvTab*)cur->pVtab)->isLines ){
    switch( i ){
      case XPL_PLANE_INDEX:  sqlite3_result_int64(ctx, r->iPlane); break;
      case XPL_PID:          sqlite3_result_int64(ctx, r->iPlane+1); break;
      case XPL_PLANE_NAME:   xvResultText(pCur, ctx, &r->planeName, "plane_name"); break;
      case XPL_LINE_INDEX:   sqlite3_result_int64(ctx, r->iLine); break;
      case XPL_TID:          sqlite3_result_int64(ctx, r->lineId ? r->lineId : r->iLine+1); break;
      case XPL_LINE_ID:      sqlite3_result_int64(ctx, r->lineId); break;
      case XPL_DISPLAY_ID:   sqlite3_result_int64(ctx, r->displayId); break;
      case XPL_NAME:         xvResultText(pCur, ctx, &r->name, "name"); break;
      case XPL_DISPLAY_NAME: xvResultText(pCur, ctx, &r->display, "display_name"); break;
      case XPL_TIMESTAMP_NS: sqlite3_result_int64(ctx, r->tsNs); break;
      case XPL_DURATION_PS:  sqlite3_result_int64(ctx, r->durPs); break;
      case XPL_NUM_EVENTS:   sqlite3_result_int64(ctx, r->nEvents); break;
      default:
        assert( i==XPL_PATH );
        if( pCur->zPath ) sqlite3_result_text(ctx, pCur->zPath, -1, SQLITE_TRANSIENT);
        break;
    }
    return SQLITE_OK;
  }
  switch( i ){
    case XPP_PLANE_INDEX: sqlite3_result_int64(ctx, r->iPlane); break;
    case XPP_PID:         sqlite3_result_int64(ctx, r->iPlane+1); break;
    case XPP_PLANE_ID:    sqlite3_result_int64(ctx, r->planeId); break;
    case XPP_NAME:        xvResultText(pCur, ctx, &r->name, "name"); break;
    case XPP_NUM_LINES:   sqlite3_result_int64(ctx, r->nLines); break;
    case XPP_NUM_EVENTS:  sqlite3_result_int64(ctx, r->nEvents); break;
    case XPP_NUM_EMETA:   sqlite3_result_int64(ctx, r->nEMeta); break;
    case XPP_NUM_SMETA:   sqlite3_result_int64(ctx, r->nSMeta); break;
    case XPP_STATS:       xvResultText(pCur, ctx, &r->stats, "stats"); break;
    case XPP_HOSTNAMES:   xvResultText(pCur, ctx, &pCur->hostnames, "hostnames"); break;
    default:
      assert( i==XPP_PATH );
      if( pCur->zPath ) sqlite3_result_text(ctx, pCur->zPath, -1, SQLITE_TRANSIENT);
      break;
  }
  return SQLITE_OK;
}

/*
** Plans (xBestIndex → xFilter):
**   idxNum 1: usable "path = ?" constraints, argv[0..argc) (the argument
**             and any a query adds: no rows unless they agree)
**   idxNum 0: no path constraint (xFilter: missing argument)
** A path constraint that exists but is unusable in this plan gives
** SQLITE_CONSTRAINT, so that SQLite tries another join order.
*/
static int xvBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  return profsumVtabBestIndexArg(pInfo, ((XvTab*)pVtab)->isLines ? XPL_PATH : XPP_PATH, 1e5, 1e30, 100);
}

/* xFilter: resets the cursor, copies the path argument (never kept
** borrowed), and reads the whole file into the cursor's rows (none when
** the path constraints differ, see xBestIndex).  On an error no row is
** left and the vtab's message is the decoder's. */
static int xvFilter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr,
                    int argc, sqlite3_value **argv){
  XvCursor *pCur = (XvCursor*)cur;
  int isLines = ((XvTab*)cur->pVtab)->isLines;
  const char *zFunc = isLines ? "profsum_xplane_lines" : "profsum_xplane_planes";
  int rc;
  char *zErr = 0;
  ProfsumXp *p = 0;
  (void)idxStr;
  xvReset(&pCur->rows);
  if( idxNum!=1 || argc<1 ){
    profsumVtabErr(cur->pVtab, "%s: missing required argument PATH", zFunc);
    return SQLITE_ERROR;
  }
  rc = profsumVtabArgsAgree(argv, argc);
  if( rc<=0 ) return rc<0 ? SQLITE_NOMEM : SQLITE_OK;   /* paths that differ: no rows */
  rc = profsumVtabPathArg(cur->pVtab, zFunc, argv[0], &pCur->zPath);
  if( rc || pCur->zPath==0 ) return rc;              /* NULL: no rows */
  rc = profsumRefuseUnsupported(zFunc, pCur->zPath, &zErr);
  if( rc==SQLITE_OK ) rc = profsumXpOpen(zFunc, pCur->zPath, 0, 0, 0, &p, &zErr);
  if( rc==SQLITE_OK ) rc = xvWalk(pCur, p, isLines, &zErr);
  profsumXpClose(p);
  if( (rc & 0xff)==SQLITE_CORRUPT && zErr && profsumSniffContent(pCur->zPath)==PROFSUM_FMT_JSON ){
    /* a trace JSON given here: its bytes fail as protobuf somewhere, and
    ** that message alone reads like a damaged XPlane (a pipe is not
    ** sniffed: its bytes were the decoder's) */
    char *z = sqlite3_mprintf("%s (the file reads as trace JSON, not as an XPlane protobuf: "
                              "trace_events reads it)", zErr);
    if( z ){ sqlite3_free(zErr); zErr = z; }
  }
  if( rc ){
    sqlite3_free(cur->pVtab->zErrMsg);
    cur->pVtab->zErrMsg = profsumUtf8Scrub(zErr);   /* 0 when out of memory */
    xvReset(&pCur->rows);         /* no partial result */
    return rc;
  }
  sqlite3_free(zErr);
  return SQLITE_OK;
}

static sqlite3_module xvModule = {
  /* iVersion    */ 0,
  /* xCreate     */ 0,      /* eponymous-only: no CREATE VIRTUAL TABLE */
  /* xConnect    */ xvConnect,
  /* xBestIndex  */ xvBestIndex,
  /* xDisconnect */ profsumVtabDisconnect,
  /* xDestroy    */ 0,
  /* xOpen       */ xvOpen,
  /* xClose      */ profsumRowCursorClose,
  /* xFilter     */ xvFilter,
  /* xNext       */ profsumRowCursorNext,
  /* xEof        */ profsumRowCursorEof,
  /* xColumn     */ xvColumn,
  /* xRowid      */ profsumRowCursorRowid,
  /* xUpdate     */ 0,
  /* xBegin      */ 0,
  /* xSync       */ 0,
  /* xCommit     */ 0,
  /* xRollback   */ 0,
  /* xFindMethod */ 0,
  /* xRename     */ 0,
  /* xSavepoint  */ 0,
  /* xRelease    */ 0,
  /* xRollbackTo */ 0,
  /* xShadowName */ 0
};

/* See profsum_int.h.  Registers profsum_xplane_planes and
** profsum_xplane_lines. */
int profsumRegisterXplane(sqlite3 *db, char **pzErr){
  int rc = sqlite3_create_module(db, "profsum_xplane_planes", &xvModule, 0);
  if( rc==SQLITE_OK ) rc = sqlite3_create_module(db, "profsum_xplane_lines", &xvModule, (void*)1);
  if( rc!=SQLITE_OK && pzErr && *pzErr==0 ){
    *pzErr = sqlite3_mprintf("profsum: cannot register profsum_xplane_planes (%s)",
                             sqlite3_errstr(rc));
  }
  return rc;
}
