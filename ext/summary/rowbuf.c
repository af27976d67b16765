/*
** rowbuf.c — the import's bulk rows: a buffer of rows (rowbuf.h) and the
** virtual table profsum_rowsrc that an INSERT ... SELECT reads them from.
**
** profsum_rowsrc(src) is an eponymous virtual table with columns c0..c15
** and a hidden column src: a pointer of type "profsum_rowsrc" that only C
** can bind (sqlite3_bind_pointer), so from SQL it has no rows to give and
** says so.  It is DIRECTONLY: no view or trigger can use it.
*/
#include "profsum_int.h"
#include "rowbuf.h"

#include <string.h>

#define ROWBUF_ROWS 512            /* rows gathered per insert */
#define ROWBUF_TEXT (1<<20)        /* ... or fewer, once their copied texts
                                   ** take this many bytes */
#define ROWSRC_PTR "profsum_rowsrc"

/* ------------------------------------------------------------------ */
/* The virtual table                                                   */
/* ------------------------------------------------------------------ */

/* A cursor: the buffer it reads and the row it is on. */
typedef struct RowSrcCursor {
  sqlite3_vtab_cursor base;
  const ProfsumRowBuf *b;          /* 0: no rows */
  int i;
} RowSrcCursor;

/* xConnect: the columns, and DIRECTONLY. */
static int rsConnect(sqlite3 *db, void *pAux, int argc, const char *const *argv,
                     sqlite3_vtab **ppVtab, char **pzErr){
  sqlite3_vtab *v;
  int rc;
  (void)pAux; (void)argc; (void)argv; (void)pzErr;
  rc = sqlite3_declare_vtab(db, "CREATE TABLE x(c0,c1,c2,c3,c4,c5,c6,c7,c8,c9,c10,c11,c12,c13,"
                                "c14,c15,src HIDDEN)");
  if( rc==SQLITE_OK ) rc = sqlite3_vtab_config(db, SQLITE_VTAB_DIRECTONLY);
  if( rc!=SQLITE_OK ) return rc;
  v = sqlite3_malloc(sizeof(*v));
  if( v==0 ) return SQLITE_NOMEM;
  memset(v, 0, sizeof(*v));
  *ppVtab = v;
  return SQLITE_OK;
}
/* xDisconnect. */
static int rsDisconnect(sqlite3_vtab *v){
  sqlite3_free(v);
  return SQLITE_OK;
}
/* xBestIndex: src = ? is its argument (plan 1); without it, plan 0, which
** has no rows. */
static int rsBestIndex(sqlite3_vtab *v, sqlite3_index_info *p){
  int i;
  (void)v;
  p->idxNum = 0;
  for(i=0; i<p->nConstraint; i++){
    const struct sqlite3_index_constraint *c = &p->aConstraint[i];
    if( c->iColumn==PROFSUM_ROWBUF_MAXCOL && c->op==SQLITE_INDEX_CONSTRAINT_EQ ){
      if( !c->usable ) return SQLITE_CONSTRAINT;
      p->aConstraintUsage[i].argvIndex = 1;
      p->aConstraintUsage[i].omit = 1;
      p->idxNum = 1;
      break;
    }
  }
  p->estimatedCost = p->idxNum ? 1000 : 1e12;
  p->estimatedRows = p->idxNum ? ROWBUF_ROWS : 1;
  return SQLITE_OK;
}
/* xOpen: a cursor with no rows yet. */
static int rsOpen(sqlite3_vtab *v, sqlite3_vtab_cursor **pp){
  RowSrcCursor *c = sqlite3_malloc(sizeof(*c));
  (void)v;
  if( c==0 ) return SQLITE_NOMEM;
  memset(c, 0, sizeof(*c));
  *pp = &c->base;
  return SQLITE_OK;
}
/* xClose. */
static int rsClose(sqlite3_vtab_cursor *cur){
  sqlite3_free(cur);
  return SQLITE_OK;
}
/* xFilter: the buffer the pointer argument names; an error without one
** (the table was used from SQL). */
static int rsFilter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr, int argc,
                    sqlite3_value **argv){
  RowSrcCursor *c = (RowSrcCursor*)cur;
  (void)idxStr;
  c->i = 0;
  c->b = idxNum==1 && argc==1 ? (const ProfsumRowBuf*)sqlite3_value_pointer(argv[0], ROWSRC_PTR) : 0;
  if( c->b==0 ){
    sqlite3_free(cur->pVtab->zErrMsg);
    cur->pVtab->zErrMsg = sqlite3_mprintf("profsum_rowsrc: profsum_import's own rows, handed "
                                          "over from C: nothing to read from SQL");
    return SQLITE_ERROR;
  }
  return SQLITE_OK;
}
/* xNext, xEof, xRowid: the buffer's rows in order. */
static int rsNext(sqlite3_vtab_cursor *cur){ ((RowSrcCursor*)cur)->i++; return SQLITE_OK; }
static int rsEof(sqlite3_vtab_cursor *cur){
  const RowSrcCursor *c = (const RowSrcCursor*)cur;
  return c->b==0 || c->i>=c->b->nRow;
}
static int rsRowid(sqlite3_vtab_cursor *cur, sqlite_int64 *p){
  *p = ((RowSrcCursor*)cur)->i;
  return SQLITE_OK;
}
/* xColumn: cell k of the row (NULL past the buffer's columns and for src).
** An empty text is '' whatever pointer it came with: SQLite makes a NULL
** of a null pointer, and a batch whose texts are all empty has no text
** buffer (a region whose path is the empty canonical name of an op). */
static int rsColumn(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int k){
  const RowSrcCursor *c = (const RowSrcCursor*)cur;
  const ProfsumCell *x;
  if( k>=c->b->nCol ) return SQLITE_OK;
  x = &c->b->aCell[(sqlite3_int64)c->i*c->b->nCol + k];
  switch( x->eType ){
    case SQLITE_INTEGER: sqlite3_result_int64(ctx, x->u.i); break;
    case SQLITE_FLOAT:   sqlite3_result_double(ctx, x->u.r); break;
    case SQLITE_TEXT:
      sqlite3_result_text(ctx, x->n ? x->u.z : "", x->n, SQLITE_STATIC);
      break;
    case PROFSUM_CELL_COPY:
      sqlite3_result_text(ctx, x->n ? c->b->aText + x->u.i : "", x->n, SQLITE_STATIC);
      break;
    default: break;
  }
  return SQLITE_OK;
}

static sqlite3_module rowSrcModule = {
  0, 0, rsConnect, rsBestIndex, rsDisconnect, 0, rsOpen, rsClose, rsFilter,
  rsNext, rsEof, rsColumn, rsRowid, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
};

/* See rowbuf.h. */
int profsumRegisterRowSrc(sqlite3 *db){
  return sqlite3_create_module(db, "profsum_rowsrc", &rowSrcModule, 0);
}

/* ------------------------------------------------------------------ */
/* The buffer                                                          */
/* ------------------------------------------------------------------ */

/* See rowbuf.h. */
int profsumRowBufInit(ProfsumRowBuf *b, sqlite3 *db, const char *zSchema, const char *zTable,
                      const char *zCols, int nCol){
  sqlite3_str *s;
  char *z;
  int i, rc;
  memset(b, 0, sizeof(*b));
  if( nCol<1 || nCol>PROFSUM_ROWBUF_MAXCOL ) return SQLITE_MISUSE;
  b->nCol = nCol;
  s = sqlite3_str_new(db);
  sqlite3_str_appendf(s, "INSERT INTO \"%w\".%s(%s) SELECT ", zSchema, zTable, zCols);
  for(i=0; i<nCol; i++) sqlite3_str_appendf(s, "%sc%d", i ? "," : "", i);
  sqlite3_str_appendall(s, " FROM profsum_rowsrc(?1)");
  z = sqlite3_str_finish(s);
  if( z==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, z, -1, &b->pIns, 0);
  sqlite3_free(z);
  if( rc ) return rc;
  b->aCell = sqlite3_malloc64(sizeof(ProfsumCell)*(sqlite3_uint64)nCol*ROWBUF_ROWS);
  return b->aCell ? SQLITE_OK : SQLITE_NOMEM;
}

/* The cell of the next column (the last one again past the row's end, a
** caller's mistake that profsumRowBufEnd reports). */
static ProfsumCell *rbCell(ProfsumRowBuf *b){
  int k = b->iCol<b->nCol ? b->iCol : b->nCol - 1;
  b->iCol++;
  return &b->aCell[(sqlite3_int64)b->nRow*b->nCol + k];
}

/* See rowbuf.h. */
void profsumRowBufInt(ProfsumRowBuf *b, sqlite3_int64 v){
  ProfsumCell *x = rbCell(b);
  x->eType = SQLITE_INTEGER;
  x->u.i = v;
}
void profsumRowBufDouble(ProfsumRowBuf *b, double v){
  ProfsumCell *x = rbCell(b);
  x->eType = SQLITE_FLOAT;
  x->u.r = v;
}
void profsumRowBufNull(ProfsumRowBuf *b){
  rbCell(b)->eType = SQLITE_NULL;
}
void profsumRowBufTextStatic(ProfsumRowBuf *b, const char *z, int n){
  ProfsumCell *x = rbCell(b);
  x->eType = SQLITE_TEXT;
  x->u.z = z;
  x->n = n<0 ? (int)strlen(z) : n;
}

/* See rowbuf.h: the bytes go to b->aText, the cell keeps their offset
** (the buffer may move as it grows). */
void profsumRowBufText(ProfsumRowBuf *b, const char *z, int n){
  ProfsumCell *x = rbCell(b);
  x->eType = SQLITE_NULL;
  if( b->oom ) return;
  if( n<0 ) n = (int)strlen(z);
  if( b->nText + n > b->nTextAlloc ){
    sqlite3_int64 nNew = b->nTextAlloc ? b->nTextAlloc*2 : 4096;
    char *a;
    while( nNew < b->nText + n ) nNew *= 2;
    a = sqlite3_realloc64(b->aText, (sqlite3_uint64)nNew);
    if( a==0 ){ b->oom = 1; return; }
    b->aText = a;
    b->nTextAlloc = nNew;
  }
  if( n ) memcpy(b->aText + b->nText, z, (size_t)n);
  x->eType = PROFSUM_CELL_COPY;
  x->u.i = b->nText;
  x->n = n;
  b->nText += n;
}

/* See rowbuf.h. */
int profsumRowBufEnd(ProfsumRowBuf *b){
  int iCol = b->iCol;
  b->iCol = 0;
  if( iCol!=b->nCol ) return SQLITE_MISUSE;
  if( b->oom ) return SQLITE_NOMEM;
  b->nRow++;
  return b->nRow>=ROWBUF_ROWS || b->nText>=ROWBUF_TEXT ? profsumRowBufFlush(b) : SQLITE_OK;
}

/* See rowbuf.h. */
int profsumRowBufFlush(ProfsumRowBuf *b){
  int rc;
  if( b->nRow==0 ) return SQLITE_OK;
  rc = sqlite3_bind_pointer(b->pIns, 1, (void*)b, ROWSRC_PTR, 0);
  if( rc==SQLITE_OK ){
    rc = sqlite3_step(b->pIns);
    rc = sqlite3_reset(b->pIns);
  }
  sqlite3_clear_bindings(b->pIns);
  b->nRow = 0;
  b->nText = 0;
  return rc;
}

/* See rowbuf.h. */
void profsumRowBufFree(ProfsumRowBuf *b){
  sqlite3_finalize(b->pIns);
  sqlite3_free(b->aCell);
  sqlite3_free(b->aText);
  memset(b, 0, sizeof(*b));
}
