/*
** catalog.c — profsum_catalog: the documentation of every profsum view and
** table, as rows, for people and agents exploring a database.
**
**   SELECT object, column_name, doc FROM profsum_catalog WHERE object = 'profsum_hot_ops';
**   SELECT DISTINCT object, kind, doc FROM profsum_catalog WHERE position = 0;
**
**   CREATE TABLE profsum_catalog(
**     object,        -- view or table name
**     kind,          -- 'view', 'table', 'virtual table' or 'table-valued function'
**     position,      -- 0 for the object itself, then 1.. for its columns
**     column_name,   -- NULL on the object row
**     doc            -- the description (object row) or the column's comment
**   );
**
** The rows come from the schema text compiled into the extension
** (sql/schema.sql and the views files, see build/gen/schema_sql.h), so they
** always match the objects profsum_import creates: a view's description is
** the comment block above its CREATE VIEW, a column's doc the comment line(s)
** above it in the column list; a table's columns are documented by their
** trailing comments.  A virtual table the schema makes (CREATE VIRTUAL
** TABLE) has kind 'virtual table': its columns are declared by its module,
** not in the text, so its comment block ends with a "Columns:" line and one
** "  name: doc" line per column, in the module's column order.  The
** table-valued functions that read files (trace_events, profsum_diagnostics,
** ...) are no objects of a database; their blocks, in the same form, come
** from sql/functions.sql (compiled in as documentation, never executed),
** each ended by a "FUNCTION name" line, with kind 'table-valued function';
** a table an import makes only when asked (profsum_event) is documented
** there the same way, ended by a "TABLE name" line, with kind 'table'.
** Pure (no file or database access).
*/
#include "profsum_int.h"
#include "schema_sql.h"

#include <string.h>

typedef struct CatRow {
  char *zObject, *zKind, *zColumn, *zDoc;
  int iPos;
} CatRow;

typedef struct CatTab { sqlite3_vtab base; } CatTab;
typedef struct CatCursor {
  sqlite3_vtab_cursor base;
  CatRow *a;          /* all rows */
  int n, nAlloc;
  int i;              /* current row */
} CatCursor;

/* Append a row (copies the strings) to c->a, which catParse sized for a
** row per line of the schema text; returns SQLITE_OK or SQLITE_NOMEM. */
static int catAdd(CatCursor *c, const char *zObj, int nObj, const char *zKind,
                  int iPos, const char *zCol, int nCol, const char *zDoc, int nDoc){
  CatRow *r;
  if( c->n>=c->nAlloc ) return SQLITE_NOMEM;    /* not reached: a row comes from a line */
  r = &c->a[c->n];
  r->zObject = sqlite3_mprintf("%.*s", nObj, zObj);
  r->zKind = sqlite3_mprintf("%s", zKind);
  r->zColumn = zCol ? sqlite3_mprintf("%.*s", nCol, zCol) : 0;
  r->zDoc = sqlite3_mprintf("%.*s", nDoc, zDoc);
  r->iPos = iPos;
  c->n++;
  if( !r->zObject || !r->zKind || (zCol && !r->zColumn) || !r->zDoc ) return SQLITE_NOMEM;
  return SQLITE_OK;
}

/* Next line of z starting at *pi: sets [*pz, *pn) without the newline. */
static int nextLine(const char *z, int *pi, const char **pz, int *pn){
  int i = *pi, j;
  if( z[i]==0 ) return 0;
  for(j=i; z[j] && z[j]!='\n'; j++){}
  *pz = z+i;
  *pn = j-i;
  *pi = z[j] ? j+1 : j;
  return 1;
}

/* Trim spaces; returns the trimmed span. */
static void trim(const char **pz, int *pn){
  while( *pn>0 && (**pz==' ' || **pz=='\t') ){ (*pz)++; (*pn)--; }
  while( *pn>0 && ((*pz)[*pn-1]==' ' || (*pz)[*pn-1]=='\t' || (*pz)[*pn-1]=='\r') ) (*pn)--;
}

/* When the trimmed line [*pz, *pz+*pn) is an SQL comment ("-- text"), set
** it to the comment's text, trimmed, and return 1; else return 0. */
static int commentText(const char **pz, int *pn){
  if( *pn<2 || (*pz)[0]!='-' || (*pz)[1]!='-' ) return 0;
  *pz += 2;
  *pn -= 2;
  trim(pz, pn);
  return 1;
}

/* When the trimmed line [z, z+n) is an SQL comment ("-- text"), append
** its text to the pending comment block pDoc (a space between lines) and
** return 1; else return 0. */
static int catComment(sqlite3_str *pDoc, const char *z, int n){
  if( !commentText(&z, &n) ) return 0;
  if( sqlite3_str_length(pDoc) && n ) sqlite3_str_appendchar(pDoc, 1, ' ');
  sqlite3_str_append(pDoc, z, n);
  return 1;
}

/* The "Columns:" part of a virtual table's comment block: spans into the
** compiled-in schema text, which outlives every cursor. */
#define CAT_MAX_VCOL 32
typedef struct CatVCols {
  int inCols;                   /* a "Columns:" line was seen in this block */
  int n;
  struct { const char *zName, *zDoc; int nName, nDoc; } a[CAT_MAX_VCOL];
} CatVCols;

/* When the trimmed comment line [z, z+n) belongs to the "Columns:" part of
** a comment block (the "Columns:" line itself, or "name: doc" after it),
** note it in pV and return 1; else return 0 (an ordinary comment line). */
static int catColumnLine(CatVCols *pV, const char *z, int n){
  int k = 0;
  if( !commentText(&z, &n) ) return 0;
  if( n==8 && memcmp(z, "Columns:", 8)==0 ){ pV->inCols = 1; pV->n = 0; return 1; }
  if( !pV->inCols ) return 0;
  while( k<n && (z[k]=='_' || (z[k]>='a' && z[k]<='z') || (z[k]>='0' && z[k]<='9')) ) k++;
  if( k==0 || k>=n || z[k]!=':' || pV->n>=CAT_MAX_VCOL ) return 0;
  pV->a[pV->n].zName = z;
  pV->a[pV->n].nName = k;
  pV->a[pV->n].zDoc = z+k+1;
  pV->a[pV->n].nDoc = n-k-1;
  trim(&pV->a[pV->n].zDoc, &pV->a[pV->n].nDoc);
  pV->n++;
  return 1;
}

/* Add the rows of the object of kind zKind named [zName, zName+nName)
** whose columns its module declares: its object row with the comment block
** zDoc, then one row per column of pV. */
static int catVirtual(CatCursor *c, const char *zKind, const char *zName, int nName,
                      const char *zDoc, const CatVCols *pV){
  int k, rc = catAdd(c, zName, nName, zKind, 0, 0, 0, zDoc, (int)strlen(zDoc));
  for(k=0; rc==SQLITE_OK && k<pV->n; k++){
    rc = catAdd(c, zName, nName, zKind, k+1, pV->a[k].zName, pV->a[k].nName,
                pV->a[k].zDoc, pV->a[k].nDoc);
  }
  return rc;
}

/* Parse the compiled schema text, then the table-valued functions'
** (sql/functions.sql: comment blocks each ended by a "FUNCTION name"
** or "TABLE name" line), into rows (at most one per line). */
static int catParse(CatCursor *c){
  static const char *const azText[] = { PROFSUM_SCHEMA_SQL, PROFSUM_FUNCTIONS_DOC };
  int rc = SQLITE_OK, nLine = 1;
  size_t t;
  sqlite3_str *pDoc;                          /* pending comment block */
  CatVCols vc;                                /* its "Columns:" part */
  const char *zL; int nL;
  memset(&vc, 0, sizeof(vc));
  for(t=0; t<sizeof(azText)/sizeof(azText[0]); t++){
    for(zL=azText[t]; *zL; zL++) nLine += *zL=='\n';
  }
  c->a = sqlite3_malloc64(sizeof(CatRow)*(sqlite3_uint64)nLine);
  if( c->a==0 ) return SQLITE_NOMEM;
  c->nAlloc = nLine;
  pDoc = sqlite3_str_new(0);
  for(t=0; rc==SQLITE_OK && t<sizeof(azText)/sizeof(azText[0]); t++){
    const char *z = azText[t];
    int i = 0;
    while( rc==SQLITE_OK && nextLine(z, &i, &zL, &nL) ){
      const char *zT = zL; int nT = nL;
      trim(&zT, &nT);
      if( catColumnLine(&vc, zT, nT) ) continue;
      if( catComment(pDoc, zT, nT) ) continue;
      if( (nT>9 && strncmp(zT, "FUNCTION ", 9)==0)
       || (nT>6 && strncmp(zT, "TABLE ", 6)==0)
       || (nT>39 && strncmp(zT, "CREATE VIRTUAL TABLE IF NOT EXISTS main.", 40)==0) ){
        /* an object whose columns its block lists: the "Columns:" part */
        int isFunc = zT[0]=='F', isTable = zT[0]=='T';
        const char *zName = zT + (isFunc ? 9 : isTable ? 6 : 40);
        int nName = 0;
        char *zHead = sqlite3_str_finish(pDoc);
        while( zName+nName < zT+nT && zName[nName]!=' ' && zName[nName]!=';' ) nName++;
        rc = catVirtual(c, isFunc ? "table-valued function" : isTable ? "table" : "virtual table",
                        zName, nName, zHead ? zHead : "", &vc);
        sqlite3_free(zHead);
        pDoc = sqlite3_str_new(0);
        memset(&vc, 0, sizeof(vc));
        continue;
      }
      if( nT>28 && (strncmp(zT, "CREATE VIEW IF NOT EXISTS main.", 31)==0
                 || strncmp(zT, "CREATE TABLE IF NOT EXISTS main.", 32)==0) ){
        int isView = zT[7]=='V';
        const char *zName = zT + (isView ? 31 : 32);
        int nName = 0, pos = 0;
        char *zHead;
        while( zName+nName < zT+nT && zName[nName]!='(' ) nName++;
        zHead = sqlite3_str_finish(pDoc);
        pDoc = sqlite3_str_new(0);
        memset(&vc, 0, sizeof(vc));
        rc = catAdd(c, zName, nName, isView ? "view" : "table", 0, 0, 0,
                    zHead ? zHead : "", zHead ? (int)strlen(zHead) : 0);
        sqlite3_free(zHead);
        /* The column list, up to the line starting with ')'. */
        while( rc==SQLITE_OK && nextLine(z, &i, &zL, &nL) ){
          const char *zC = zL; int nC = nL;
          trim(&zC, &nC);
          if( nC>0 && zC[0]==')' ) break;
          if( catComment(pDoc, zC, nC) ) continue;
          if( nC==0 ) continue;
          {
            /* "name[,]" in views; "name TYPE ..., -- doc" in tables */
            int k = 0;
            const char *zCm = 0;
            char *zDoc;
            while( k<nC && zC[k]!=' ' && zC[k]!=',' && zC[k]!='\t' ) k++;
            for(zCm=zC; zCm+1<zC+nC; zCm++) if( zCm[0]=='-' && zCm[1]=='-' ) break;
            if( zCm+1<zC+nC && !isView ){
              const char *zc = zCm+2; int nc = (int)(zC+nC-zc);
              trim(&zc, &nc);
              sqlite3_str_append(pDoc, zc, nc);
            }
            if( !isView && (strncmp(zC, "PRIMARY KEY", 11)==0 || strncmp(zC, "UNIQUE", 6)==0) ){
              sqlite3_free(sqlite3_str_finish(pDoc));
              pDoc = sqlite3_str_new(0);
              continue;
            }
            zDoc = sqlite3_str_finish(pDoc);
            pDoc = sqlite3_str_new(0);
            rc = catAdd(c, zName, nName, isView ? "view" : "table", ++pos, zC, k,
                        zDoc ? zDoc : "", zDoc ? (int)strlen(zDoc) : 0);
            sqlite3_free(zDoc);
          }
        }
        continue;
      }
      /* Any other line ends a pending comment block. */
      sqlite3_free(sqlite3_str_finish(pDoc));
      pDoc = sqlite3_str_new(0);
      memset(&vc, 0, sizeof(vc));
    }
  }
  sqlite3_free(sqlite3_str_finish(pDoc));
  return rc;
}

/* xConnect: declare the table's columns; a zeroed table object. */
static int catConnect(sqlite3 *db, void *pAux, int argc, const char *const*argv,
                      sqlite3_vtab **ppVtab, char **pzErr){
  CatTab *t;
  int rc;
  (void)pAux; (void)argc; (void)argv; (void)pzErr;
  rc = sqlite3_declare_vtab(db, "CREATE TABLE x(object TEXT, kind TEXT, position INTEGER, "
                                "column_name TEXT, doc TEXT)");
  if( rc ) return rc;
  sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);   /* no I/O: compiled-in text only */
  t = sqlite3_malloc64(sizeof(*t));
  if( t==0 ) return SQLITE_NOMEM;
  memset(t, 0, sizeof(*t));
  *ppVtab = &t->base;
  return SQLITE_OK;
}
/* xDisconnect: free the table object. */
static int catDisconnect(sqlite3_vtab *v){ sqlite3_free(v); return SQLITE_OK; }
/* xBestIndex: one plan, a full scan of the compiled-in rows. */
static int catBestIndex(sqlite3_vtab *v, sqlite3_index_info *p){
  (void)v;
  p->estimatedCost = 1000;
  p->estimatedRows = 300;
  return SQLITE_OK;
}
/* Free the cursor's rows and leave it empty (xFilter, xClose). */
static void catReset(CatCursor *c){
  int i;
  for(i=0; i<c->n; i++){
    sqlite3_free(c->a[i].zObject); sqlite3_free(c->a[i].zKind);
    sqlite3_free(c->a[i].zColumn); sqlite3_free(c->a[i].zDoc);
  }
  sqlite3_free(c->a);
  c->a = 0; c->n = c->nAlloc = c->i = 0;
}
/* xOpen: a new cursor with no rows. */
static int catOpen(sqlite3_vtab *v, sqlite3_vtab_cursor **pp){
  CatCursor *c = sqlite3_malloc64(sizeof(*c));
  (void)v;
  if( c==0 ) return SQLITE_NOMEM;
  memset(c, 0, sizeof(*c));
  *pp = &c->base;
  return SQLITE_OK;
}
/* xClose: free the cursor and its rows. */
static int catClose(sqlite3_vtab_cursor *cur){
  catReset((CatCursor*)cur);
  sqlite3_free(cur);
  return SQLITE_OK;
}
/* xFilter: parse the schema text into the cursor's rows. */
static int catFilter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr,
                     int argc, sqlite3_value **argv){
  CatCursor *c = (CatCursor*)cur;
  (void)idxNum; (void)idxStr; (void)argc; (void)argv;
  catReset(c);
  return catParse(c);
}
/* xNext, xEof, xRowid: the cursor walks its rows in order. */
static int catNext(sqlite3_vtab_cursor *cur){ ((CatCursor*)cur)->i++; return SQLITE_OK; }
static int catEof(sqlite3_vtab_cursor *cur){ CatCursor *c = (CatCursor*)cur; return c->i>=c->n; }
static int catRowid(sqlite3_vtab_cursor *cur, sqlite_int64 *p){ *p = ((CatCursor*)cur)->i; return SQLITE_OK; }
/* xColumn: column i of the current row (column_name NULL on an object's row). */
static int catColumn(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i){
  CatCursor *c = (CatCursor*)cur;
  CatRow *r = &c->a[c->i];
  switch( i ){
    case 0: sqlite3_result_text(ctx, r->zObject, -1, SQLITE_TRANSIENT); break;
    case 1: sqlite3_result_text(ctx, r->zKind, -1, SQLITE_TRANSIENT); break;
    case 2: sqlite3_result_int(ctx, r->iPos); break;
    case 3: if( r->zColumn ) sqlite3_result_text(ctx, r->zColumn, -1, SQLITE_TRANSIENT); break;
    default: sqlite3_result_text(ctx, r->zDoc, -1, SQLITE_TRANSIENT); break;
  }
  return SQLITE_OK;
}

static sqlite3_module catModule = {
  0, 0, catConnect, catBestIndex, catDisconnect, 0, catOpen, catClose, catFilter,
  catNext, catEof, catColumn, catRowid, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
};

/* See profsum_int.h. */
int profsumRegisterCatalog(sqlite3 *db, char **pzErr){
  (void)pzErr;
  return sqlite3_create_module(db, "profsum_catalog", &catModule, 0);
}
