/*
** schema.c — create profsum's tables and views in a database, and bring
** those of a database made by another profsum up to this one's.
**
** The schema script (sql/schema.sql, then views/ in MANIFEST order) is
** compiled in as PROFSUM_SCHEMA_SQL; every statement is IF NOT EXISTS on
** "main.<name>", which profsumCreateSchema() replaces by the target schema.
** The table profsum_meta keeps the fingerprint of the script that created
** or last upgraded the objects ('schema_id': PROFSUM_SCHEMA_ID, the POSIX
** cksum of the script's files and their size, made by the Makefile) and
** the profsum_version that ran it.
**
** Three cases, decided by one query (schemaCurrent):
**   current   every object of the script exists and 'schema_id' matches:
**             nothing to do (the usual import into an existing database
**             costs that one query, not a parse of the 60 KB script)
**   new       no profsum_trace table: run the script, write profsum_meta
**   upgrade   profsum objects made by another profsum (or one of them
**             dropped): every view of the script is dropped and created
**             again from this script (CREATE VIEW IF NOT EXISTS alone kept
**             an older profsum's view text forever); each table of the
**             script that exists gets the columns it lacks at its end
**             (ALTER TABLE ADD COLUMN with the script's definition) — a
**             table whose columns are not a prefix of the script's, or
**             whose missing column SQLite cannot add (a NOT NULL without
**             a default), is an error naming it, both column lists and
**             SQLite's reason (SQLite refuses DROP TABLE while a statement
**             runs, so an empty one cannot be made again here: the message
**             says to drop it); then the script runs (creating what is
**             missing) and profsum_meta is written.
** So a column added to sql/schema.sql must go at the end of its table and
** be nullable or have a DEFAULT, or every existing database fails.
** All of it runs in the caller's transaction (the import's write), so a
** failed upgrade leaves the database as it was.  Rows are never changed:
** aggregates an older profsum stored stay as it computed them
** (profsum_trace.profsum_version says which one).  Nor are rows added: a
** table new to the database starts empty, e.g. the stored ranks of
** profsum_op_growth (profsum_agg_op_growth), whose view ranks the pairs
** without them itself until imports or profsum_op_growth_store() write
** them (op_growth_store.c; writing every pair of a large history here
** would weigh on one import).
**
** Views of other names, user tables and profsum_event (created by an
** import with store_events) are not touched.
*/
#include "profsum_int.h"
#include "import_int.h"
#include "schema_sql.h"       /* generated from sql/ and views/ by the Makefile */
#include "busy.h"
#include "sqlcall.h"

#include <string.h>

/* The next object of the script at or after *pz: sets its kind (1 table,
** 2 view, 3 index, 4 virtual table), name span, and for a table *pzCols to the line after
** its CREATE line (its column lines run to the line starting with ')').
** Returns 0 at the end of the script. */
static int nextObject(const char **pz, int *pKind, const char **pzName, int *pnName,
                      const char **pzCols){
  static const char *azHead[] = {"CREATE TABLE IF NOT EXISTS main.",
                                 "CREATE VIEW IF NOT EXISTS main.",
                                 "CREATE INDEX IF NOT EXISTS main.",
                                 "CREATE VIRTUAL TABLE IF NOT EXISTS main."};
  const char *p = *pz;
  while( *p ){
    int k;
    for(k=0; k<4; k++){
      size_t n = strlen(azHead[k]);
      if( strncmp(p, azHead[k], n)==0 ){
        const char *zName = p + n;
        int m = 0;
        while( (zName[m]>='a' && zName[m]<='z') || (zName[m]>='0' && zName[m]<='9') || zName[m]=='_' ) m++;
        *pKind = k+1;
        *pzName = zName;
        *pnName = m;
        p = strchr(zName, '\n');
        p = p ? p+1 : zName+m;
        *pzCols = p;
        *pz = p;
        return 1;
      }
    }
    p = strchr(p, '\n');        /* statements begin at the start of a line */
    if( p==0 ) break;
    p++;
  }
  *pz = p ? p : *pz + strlen(*pz);
  return 0;
}

/* The next column definition of a table's column lines at *pz: sets the
** definition span without its comment and trailing comma ("count INTEGER
** NOT NULL") and the name's length; skips comment lines and table
** constraints (PRIMARY KEY, UNIQUE).  0 at the line starting with ')'. */
static int nextColumn(const char **pz, const char **pzDef, int *pnDef, int *pnName){
  const char *p = *pz;
  while( *p ){
    const char *zL = p, *zE = strchr(p, '\n');
    int n, i, inStr = 0;
    if( zE==0 ) zE = p + strlen(p);
    p = *zE ? zE+1 : zE;
    while( zL<zE && (*zL==' ' || *zL=='\t') ) zL++;
    if( zL<zE && *zL==')' ){ *pz = zL; return 0; }
    n = (int)(zE - zL);
    for(i=0; i<n; i++){            /* the comment starts at -- outside a string */
      if( zL[i]=='\'' ) inStr = !inStr;
      else if( !inStr && zL[i]=='-' && i+1<n && zL[i+1]=='-' ) break;
    }
    n = i;
    while( n>0 && (zL[n-1]==' ' || zL[n-1]=='\t' || zL[n-1]=='\r') ) n--;
    if( n>0 && zL[n-1]==',' ) n--;
    while( n>0 && (zL[n-1]==' ' || zL[n-1]=='\t') ) n--;
    if( n==0 ) continue;
    if( strncmp(zL, "PRIMARY KEY", 11)==0 || strncmp(zL, "UNIQUE", 6)==0 ) continue;
    for(i=0; i<n && zL[i]!=' ' && zL[i]!='\t'; i++){}
    *pzDef = zL;
    *pnDef = n;
    *pnName = i;
    *pz = p;
    return 1;
  }
  *pz = p;
  return 0;
}

/* Run zSql (sqlite3_malloc'd, freed here; NULL → SQLITE_NOMEM). */
static int execFree(sqlite3 *db, char *zSql){
  int rc;
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_exec(db, zSql, 0, 0, 0);
  sqlite3_free(zSql);
  return rc;
}

/* 1 when zSchema holds every object of the script and profsum_meta names
** this script; 0 otherwise (a missing profsum_meta included). */
static int schemaCurrent(sqlite3 *db, const char *zSchema){
  sqlite3_str *pStr = sqlite3_str_new(db);
  sqlite3_stmt *pStmt = 0;
  const char *p = PROFSUM_SCHEMA_SQL, *zName, *zCols;
  char *zSql;
  int kind, nName, n = 0, ok = 0;
  sqlite3_str_appendf(pStr, "SELECT (SELECT count(DISTINCT name) FROM \"%w\".sqlite_schema WHERE name IN (",
                      zSchema);
  while( nextObject(&p, &kind, &zName, &nName, &zCols) ){
    sqlite3_str_appendf(pStr, "%s'%.*s'", n ? "," : "", nName, zName);
    n++;
  }
  sqlite3_str_appendf(pStr, "))=%d AND (SELECT value FROM \"%w\".profsum_meta WHERE key='schema_id')=?1",
                      n, zSchema);
  zSql = sqlite3_str_finish(pStr);
  if( zSql==0 || n==0 ){ sqlite3_free(zSql); return 0; }
  /* fails to prepare when profsum_meta is missing: then not current */
  if( sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0)==SQLITE_OK ){
    sqlite3_bind_text(pStmt, 1, PROFSUM_SCHEMA_ID, -1, SQLITE_STATIC);
    if( sqlite3_step(pStmt)==SQLITE_ROW ) ok = sqlite3_column_int(pStmt, 0);
  }
  sqlite3_finalize(pStmt);
  sqlite3_free(zSql);
  return ok;
}

/* See profsum_int.h. */
int profsumSchemaCurrent(sqlite3 *db, const char *zSchema){
  return schemaCurrent(db, zSchema);
}

/* The column names of table zTable in zSchema, in order, comma-separated
** (sqlite3_malloc'd; "" when it has none); NULL on an error with *pRc. */
static char *tableColumns(sqlite3 *db, const char *zSchema, const char *zTable, int nTable,
                          int *pRc){
  sqlite3_stmt *p = 0;
  sqlite3_str *pStr;
  char *z;
  int rc, n = 0;
  z = sqlite3_mprintf("SELECT name FROM pragma_table_xinfo(%.*Q, %Q) ORDER BY cid", nTable, zTable, zSchema);
  if( z==0 ){ *pRc = SQLITE_NOMEM; return 0; }
  rc = sqlite3_prepare_v2(db, z, -1, &p, 0);
  sqlite3_free(z);
  if( rc ){ *pRc = rc; return 0; }
  pStr = sqlite3_str_new(db);
  while( (rc = sqlite3_step(p))==SQLITE_ROW ){
    sqlite3_str_appendf(pStr, "%s%s", n++ ? "," : "", (const char*)sqlite3_column_text(p, 0));
  }
  sqlite3_finalize(p);
  z = sqlite3_str_finish(pStr);
  if( rc!=SQLITE_DONE ){ sqlite3_free(z); *pRc = rc; return 0; }
  if( z==0 ){
    if( n==0 ){ z = sqlite3_mprintf(""); if( z ) return z; }
    *pRc = SQLITE_NOMEM;
    return 0;
  }
  return z;
}

/* Does table zTable of zSchema have a row?  1/0, -1 on an error (*pRc). */
static int tableHasRows(sqlite3 *db, const char *zSchema, const char *zTable, int nTable, int *pRc){
  return profsumHasRow(db, sqlite3_mprintf("SELECT 1 FROM \"%w\".\"%.*w\" LIMIT 1", zSchema, nTable, zTable),
                       0, pRc);
}

/* Bring one existing table (its column lines at zCols) to the script's
** columns: see the header.  *pzErr gets a message on an error. */
static int upgradeTable(sqlite3 *db, const char *zSchema, const char *zName, int nName,
                        const char *zCols, char **pzErr){
  int rc = SQLITE_OK, nHave, nWant = 0, prefix = 1, has;
  const char *p = zCols, *zDef, *zHaveNext;
  int nDef, nCol;
  char *zHave = tableColumns(db, zSchema, zName, nName, &rc);
  sqlite3_str *pWant;
  char *zWant, *zWhy = 0;
  if( zHave==0 ) return rc;
  nHave = zHave[0] ? 1 : 0;
  for(zHaveNext=zHave; *zHaveNext; zHaveNext++) if( *zHaveNext==',' ) nHave++;
  /* is the table's column list a prefix of the script's? */
  pWant = sqlite3_str_new(db);
  zHaveNext = zHave;
  while( nextColumn(&p, &zDef, &nDef, &nCol) ){
    sqlite3_str_appendf(pWant, "%s%.*s", nWant ? "," : "", nCol, zDef);
    if( nWant<nHave ){
      const char *zEnd = strchr(zHaveNext, ',');
      int nH = zEnd ? (int)(zEnd - zHaveNext) : (int)strlen(zHaveNext);
      if( nH!=nCol || sqlite3_strnicmp(zHaveNext, zDef, nCol)!=0 ) prefix = 0;
      zHaveNext = zEnd ? zEnd+1 : zHaveNext + nH;
    }
    nWant++;
  }
  zWant = sqlite3_str_finish(pWant);
  if( zWant==0 ){ sqlite3_free(zHave); return SQLITE_NOMEM; }
  if( nHave>nWant ) prefix = 0;
  if( prefix && nHave==nWant ){ sqlite3_free(zHave); sqlite3_free(zWant); return SQLITE_OK; }
  if( prefix ){
    /* add the missing columns at the end, in the script's order */
    int i = 0;
    p = zCols;
    while( rc==SQLITE_OK && nextColumn(&p, &zDef, &nDef, &nCol) ){
      if( i++ < nHave ) continue;
      rc = execFree(db, sqlite3_mprintf("ALTER TABLE \"%w\".\"%.*w\" ADD COLUMN %.*s",
                                        zSchema, nName, zName, nDef, zDef));
      if( rc && rc!=SQLITE_NOMEM ){
        /* SQLite cannot add it (ALTER TABLE leaves the table as it was
        ** when it fails): as for a table whose columns differ, with
        ** SQLite's reason (a view of the database that no longer
        ** parses makes every ALTER TABLE fail) */
        zWhy = sqlite3_mprintf(" (adding %.*s: %s)", nCol, zDef, sqlite3_errmsg(db));
        if( zWhy==0 ) rc = SQLITE_NOMEM;
        break;
      }
    }
    if( rc==SQLITE_OK || rc==SQLITE_NOMEM ){
      sqlite3_free(zHave); sqlite3_free(zWant); return rc;
    }
    rc = SQLITE_OK;
  }
  /* The table cannot be dropped here (SQLite refuses a DROP TABLE while
  ** a statement runs: the one calling the import): the user can */
  has = tableHasRows(db, zSchema, zName, nName, &rc);
  if( has>=0 ){
    char *zQ = sqlite3_mprintf("\"%w\".\"%.*w\"", zSchema, nName, zName);
    rc = SQLITE_ERROR;
    if( zQ ) *pzErr = sqlite3_mprintf("the table '%s.%.*s' was made by another version of profsum "
        "and cannot be brought to this one's columns (it has: %s; this profsum needs: %s)%s; "
        "import into a new database file%s%s%s", zSchema, nName, zName, zHave, zWant, zWhy ? zWhy : "",
        has ? "" : ", or, as it has no rows, run DROP TABLE ", has ? "" : zQ, has ? "" : " and import again");
    if( zQ==0 || *pzErr==0 ) rc = SQLITE_NOMEM;
    sqlite3_free(zQ);
  }
  sqlite3_free(zHave);
  sqlite3_free(zWant);
  sqlite3_free(zWhy);
  return rc;
}

/* The upgrade steps of the header before the script runs. */
static int schemaUpgrade(sqlite3 *db, const char *zSchema, char **pzErr){
  const char *p = PROFSUM_SCHEMA_SQL, *zName, *zCols;
  int kind, nName, rc = SQLITE_OK;
  while( rc==SQLITE_OK && nextObject(&p, &kind, &zName, &nName, &zCols) ){
    if( kind==2 ){
      rc = execFree(db, sqlite3_mprintf("DROP VIEW IF EXISTS \"%w\".\"%.*w\"", zSchema, nName, zName));
    }else if( kind==1 ){
      char *zT = sqlite3_mprintf("%.*s", nName, zName);
      int e;
      if( zT==0 ) return SQLITE_NOMEM;
      e = profsumTableExists(db, zSchema, zT, &rc);
      sqlite3_free(zT);
      if( e>0 ) rc = upgradeTable(db, zSchema, zName, nName, zCols, pzErr);
    }
  }
  return rc;
}

/* See profsum_int.h. */
int profsumCreateSchema(sqlite3 *db, const char *zSchema, char **pzErr){
  char *zQ, *z;
  sqlite3_str *pStr;
  const char *p;
  int rc = SQLITE_OK, e;
  if( schemaCurrent(db, zSchema) ) return SQLITE_OK;
  e = profsumTableExists(db, zSchema, "profsum_trace", &rc);
  if( e<0 ) goto schema_err;
  if( e>0 ){
    char *zUp = 0;
    rc = schemaUpgrade(db, zSchema, &zUp);
    if( rc ){
      if( zUp && pzErr ){ *pzErr = zUp; return rc; }
      sqlite3_free(zUp);
      goto schema_err;
    }
  }
  zQ = sqlite3_mprintf("\"%w\".", zSchema);
  if( zQ==0 ) return SQLITE_NOMEM;
  pStr = sqlite3_str_new(db);
  for(p=PROFSUM_SCHEMA_SQL; *p; ){
    const char *q = strstr(p, "main.");
    if( q==0 ){ sqlite3_str_appendall(pStr, p); break; }
    sqlite3_str_append(pStr, p, (int)(q-p));
    sqlite3_str_appendall(pStr, zQ);
    p = q+5;
  }
  sqlite3_free(zQ);
  z = sqlite3_str_finish(pStr);
  rc = z ? profsumSchemaRunScript(db, zSchema, z) : SQLITE_NOMEM;
  sqlite3_free(z);
  if( rc ) goto schema_err;
  rc = execFree(db, sqlite3_mprintf("INSERT OR REPLACE INTO \"%w\".profsum_meta(key, value) "
      "VALUES('schema_id', %Q), ('profsum_version', %Q)", zSchema, PROFSUM_SCHEMA_ID, PROFSUM_VERSION));
  if( rc==SQLITE_OK ) return SQLITE_OK;
schema_err:
  if( rc!=SQLITE_NOMEM && pzErr ){
    *pzErr = sqlite3_mprintf("creating the schema in '%s': %s", zSchema, sqlite3_errmsg(db));
  }
  return rc;
}

/* ------------------------------------------------------------------ */
/* profsum_upgrade([schema])                                           */
/* ------------------------------------------------------------------ */

/* What profsum_upgrade's write body works on and says. */
typedef struct UpgradeJob {
  const char *zSchema;
  int changed;          /* set: the schema was not this profsum's */
} UpgradeJob;

/* The write body of profsum_upgrade: under the write lock, the schema of
** the job brought to this profsum's when it is not (an SQLite code). */
static int upgradeBody(sqlite3 *db, void *pArg, char **pzErr){
  UpgradeJob *j = (UpgradeJob*)pArg;
  j->changed = !schemaCurrent(db, j->zSchema);
  return j->changed ? profsumCreateSchema(db, j->zSchema, pzErr) : SQLITE_OK;
}

/* profsum_upgrade([schema]) → 1 when it brought the profsum schema of
** schema (default main) to this profsum's (tables and columns added, views
** made again, as an import does), 0 when it was this profsum's already
** (decided under the write lock).  A schema without profsum tables (or
** temp) is an error: it never creates profsum's schema in a database
** profsum did not make.
** For a database an older profsum made, whose reading functions (which
** never change the schema) fail until then.  One write (busy.c): all or
** nothing.  DIRECTONLY: it writes. */
static void upgradeFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  const char *zSchema = "main";
  char *zErr = 0;
  UpgradeJob job;
  int rc, e;
  if( argc>0 && sqlite3_value_type(argv[0])!=SQLITE_NULL ){
    if( sqlite3_value_type(argv[0])!=SQLITE_TEXT ){
      profsumCtxErr(ctx, "profsum_upgrade: schema must be the name of an attached database (text)");
      return;
    }
    zSchema = (const char*)sqlite3_value_text(argv[0]);
  }
  if( sqlite3_db_filename(db, zSchema)==0 || sqlite3_stricmp(zSchema, "temp")==0 ){
    profsumCtxErr(ctx, "profsum_upgrade: '%s' is not an attached database", zSchema);
    return;
  }
  /* only a database profsum made: never the profsum schema in another */
  rc = SQLITE_OK;
  e = profsumTableExists(db, zSchema, "profsum_trace", &rc);
  if( e==0 ){
    profsumCtxErr(ctx, "profsum_upgrade: schema '%s' holds no profsum tables (nothing to upgrade; "
                  "an import creates them)", zSchema);
    return;
  }
  memset(&job, 0, sizeof(job));
  job.zSchema = zSchema;
  if( e<0 ){
    zErr = rc==SQLITE_NOMEM ? 0 : sqlite3_mprintf("%s", sqlite3_errmsg(db));
  }else if( !schemaCurrent(db, zSchema) ){
    /* (a current one needs no write: 0) */
    rc = profsumWriteRun(db, zSchema, upgradeBody, &job, &zErr);
  }
  if( rc==SQLITE_OK ){
    sqlite3_result_int(ctx, job.changed);
  }else if( rc==SQLITE_NOMEM && zErr==0 ){
    sqlite3_result_error_nomem(ctx);
  }else{
    profsumCtxErr(ctx, "profsum_upgrade: %s", zErr ? zErr : sqlite3_errstr(rc));
    sqlite3_result_error_code(ctx, rc==SQLITE_ROW || rc==SQLITE_DONE ? SQLITE_ERROR : rc);
  }
  sqlite3_free(zErr);
}

/* See profsum_int.h. */
int profsumRegisterSchema(sqlite3 *db, char **pzErr){
  int rc = profsumCreateFunctions(db, "profsum_upgrade", 0, 1, SQLITE_UTF8|SQLITE_DIRECTONLY,
                                  upgradeFunc);
  if( rc && pzErr ) *pzErr = sqlite3_mprintf("profsum: registering profsum_upgrade failed: %s",
                                             sqlite3_errstr(rc));
  return rc;
}
