/*
** schema_views.c — run the schema script, its views written as rows.
**
** SQLite compiles a CREATE VIEW twice when it runs it: once to check the
** statement, and once more when it reads back the row it wrote to the
** schema table.  profsum's 36 views are about 120 KB of SQL, and those two
** compilations were most of what an import into a new database costs
** beyond the trace itself (about 60 million instructions, 10 ms).  A view
** is nothing but its row in sqlite_schema (type 'view', the name twice,
** root page 0, the statement's text), so this file writes those rows
** itself, with SQLite's writable-schema setting on for the moment it takes,
** and raises the schema version so that every connection, this one
** included, reads the schema again the next time it needs it: the views
** are compiled once, when they are first read, instead of twice here.
**
** The row's text is the one SQLite itself would store for the statement
** "CREATE VIEW IF NOT EXISTS <schema>.<name>... ;": "CREATE VIEW ", then
** the statement from the view's name to its last character before the
** ';', white space at the end left out (comments kept).  A test compares
** the rows of both ways, byte for byte.
**
** The statements are run the usual way (sqlite3_exec) instead when the
** connection cannot or should not take the shortcut: the temp schema, an object that already has one of the views' names (CREATE VIEW
** IF NOT EXISTS then skips it, or fails for an index: SQLite says which),
** a view statement without its ';', or a failure before the first row is
** written (defensive mode, SQLITE_DBCONFIG_DEFENSIVE, makes SQLite refuse
** to compile the insert into the schema table whatever the writable-schema
** setting; so does an authorizer that refuses it, though one that does
** refuses CREATE VIEW too).  A failure after
** it (out of memory, an I/O error) is the caller's error: its transaction
** is rolled back, as for any failed write.  (A savepoint cannot be opened
** here: SQLite refuses one while the statement that called the import
** runs.)
*/
#include "profsum_int.h"
#include "import_int.h"

#include <string.h>

/* SQLite's white space (sqlite3Isspace): tab to carriage return, space. */
static int isSqlSpace(char c){
  return c==' ' || (c>='\t' && c<='\r');
}

/* Where the statement starting at z ends: at its ';', or at the NUL when
** it has none.  Comments and quoted text ('...', "...", `...`, [...]) are
** passed over, so a ';' inside them ends nothing. */
static const char *stmtEnd(const char *z){
  while( *z ){
    char c = *z;
    if( c==';' ) return z;
    if( c=='-' && z[1]=='-' ){
      while( *z && *z!='\n' ) z++;
    }else if( c=='/' && z[1]=='*' ){
      const char *e = strstr(z+2, "*/");
      if( e==0 ) return z + strlen(z);
      z = e + 2;
    }else if( c=='\'' || c=='"' || c=='`' || c=='[' ){
      char q = c=='[' ? ']' : c;
      z++;
      while( *z && *z!=q ) z++;   /* a doubled quote closes and opens again */
      if( *z ) z++;
    }else{
      z++;
    }
  }
  return z;
}

/* The first character of the statement starting at z that is neither
** white space nor in a comment (the NUL at the end). */
static const char *stmtStart(const char *z){
  for(;;){
    while( isSqlSpace(*z) ) z++;
    if( z[0]=='-' && z[1]=='-' ){
      while( *z && *z!='\n' ) z++;
    }else if( z[0]=='/' && z[1]=='*' ){
      const char *e = strstr(z+2, "*/");
      if( e==0 ) return z + strlen(z);
      z = e + 2;
    }else{
      return z;
    }
  }
}

/* One view of the script: its name and the text of its row. */
typedef struct SchemaView {
  const char *zName;    /* in the script; nName bytes */
  int nName;
  const char *zBody;    /* from the name to the last character before ';' */
  int nBody;
  const char *zStmt;    /* the whole statement with its ';', for sqlite3_exec */
  int nStmt;
} SchemaView;

/* Does an object named like one of the views exist in zSchema?  1 or 0, -1
** on an error (*pRc set). */
static int anyViewNameTaken(sqlite3 *db, const char *zSchema, const SchemaView *aV, int nV, int *pRc){
  sqlite3_stmt *p = 0;
  char *z = sqlite3_mprintf("SELECT 1 FROM \"%w\".sqlite_schema WHERE name=?1 COLLATE NOCASE", zSchema);
  int i, rc, taken = 0;
  if( z==0 ){ *pRc = SQLITE_NOMEM; return -1; }
  rc = sqlite3_prepare_v2(db, z, -1, &p, 0);
  sqlite3_free(z);
  for(i=0; rc==SQLITE_OK && i<nV && !taken; i++){
    sqlite3_bind_text(p, 1, aV[i].zName, aV[i].nName, SQLITE_STATIC);
    rc = sqlite3_step(p);
    if( rc==SQLITE_ROW ){ taken = 1; rc = SQLITE_OK; }
    else if( rc==SQLITE_DONE ) rc = sqlite3_reset(p);
  }
  sqlite3_finalize(p);
  if( rc ){ *pRc = rc; return -1; }
  return taken;
}

/* Write the rows of the nV views into zSchema's schema table and raise its
** schema version.  SQLITE_OK or the code of the step that failed, with
** *pnDone the rows written before it (0: nothing changed, and the caller
** may run the statements instead; else the caller's transaction must be
** rolled back, as for any failed write). */
static int writeViewRows(sqlite3 *db, const char *zSchema, const SchemaView *aV, int nV,
                         int *pnDone){
  sqlite3_stmt *pIns = 0, *pVer = 0;
  sqlite3_str *pText = sqlite3_str_new(db);
  char *z;
  int i, rc, wasOn = 0, ver = 0;
  sqlite3_db_config(db, SQLITE_DBCONFIG_WRITABLE_SCHEMA, -1, &wasOn);
  sqlite3_db_config(db, SQLITE_DBCONFIG_WRITABLE_SCHEMA, 1, (int*)0);
  z = sqlite3_mprintf("INSERT INTO \"%w\".sqlite_schema(type, name, tbl_name, rootpage, sql) "
                      "VALUES('view', ?1, ?1, 0, ?2)", zSchema);
  rc = z ? sqlite3_prepare_v2(db, z, -1, &pIns, 0) : SQLITE_NOMEM;
  sqlite3_free(z);
  for(i=0; rc==SQLITE_OK && i<nV; i++){
    sqlite3_str_reset(pText);
    sqlite3_str_appendall(pText, "CREATE VIEW ");
    sqlite3_str_append(pText, aV[i].zBody, aV[i].nBody);
    rc = sqlite3_str_errcode(pText);
    if( rc ) break;
    sqlite3_bind_text(pIns, 1, aV[i].zName, aV[i].nName, SQLITE_STATIC);
    sqlite3_bind_text(pIns, 2, sqlite3_str_value(pText), sqlite3_str_length(pText), SQLITE_STATIC);
    rc = sqlite3_step(pIns);
    if( rc==SQLITE_DONE ) rc = sqlite3_reset(pIns);
    if( rc==SQLITE_OK ) (*pnDone)++;
  }
  sqlite3_finalize(pIns);
  sqlite3_free(sqlite3_str_finish(pText));
  sqlite3_db_config(db, SQLITE_DBCONFIG_WRITABLE_SCHEMA, wasOn, (int*)0);
  if( rc ) return rc;
  /* every connection (this one too) reads the schema again */
  z = sqlite3_mprintf("PRAGMA \"%w\".schema_version", zSchema);
  rc = z ? sqlite3_prepare_v2(db, z, -1, &pVer, 0) : SQLITE_NOMEM;
  sqlite3_free(z);
  if( rc==SQLITE_OK ){
    if( sqlite3_step(pVer)==SQLITE_ROW ) ver = sqlite3_column_int(pVer, 0);
    rc = sqlite3_finalize(pVer);
  }
  if( rc ) return rc;
  z = sqlite3_mprintf("PRAGMA \"%w\".schema_version=%d", zSchema, (int)((unsigned)ver + 1u));
  if( z==0 ) return SQLITE_NOMEM;
  rc = sqlite3_exec(db, z, 0, 0, 0);
  sqlite3_free(z);
  return rc;
}

/* See import_int.h. */
int profsumSchemaRunScript(sqlite3 *db, const char *zSchema, const char *zScript){
  char *zHead = sqlite3_mprintf("CREATE VIEW IF NOT EXISTS \"%w\".", zSchema);
  sqlite3_str *pRest = sqlite3_str_new(db);
  SchemaView *aV = 0;
  int nV = 0, nAlloc = 0, rc = SQLITE_OK, shortcut = 1, i;
  size_t nHead;
  const char *p = zScript;
  char *zRest;
  if( zHead==0 ){ sqlite3_free(sqlite3_str_finish(pRest)); return SQLITE_NOMEM; }
  nHead = strlen(zHead);
  while( *p ){
    const char *zS = stmtStart(p), *zE = stmtEnd(zS);
    const char *zNext = *zE ? zE+1 : zE;
    if( *zS && strncmp(zS, zHead, nHead)==0 ){
      const char *zN = zS + nHead, *zB = zE;
      int m = 0;
      while( (zN[m]>='a' && zN[m]<='z') || (zN[m]>='0' && zN[m]<='9') || zN[m]=='_' ) m++;
      while( zB>zN && isSqlSpace(zB[-1]) ) zB--;
      if( *zE!=';' || m==0 ) shortcut = 0;
      if( nV==nAlloc ){
        SchemaView *aNew;
        nAlloc = nAlloc ? 2*nAlloc : 64;
        aNew = sqlite3_realloc64(aV, (sqlite3_uint64)nAlloc*sizeof(*aV));
        if( aNew==0 ){ rc = SQLITE_NOMEM; break; }
        aV = aNew;
      }
      aV[nV].zName = zN;
      aV[nV].nName = m;
      aV[nV].zBody = zN;
      aV[nV].nBody = (int)(zB - zN);
      aV[nV].zStmt = zS;
      aV[nV].nStmt = (int)(zNext - zS);
      nV++;
    }else{
      sqlite3_str_append(pRest, p, (int)(zNext - p));
    }
    p = zNext;
  }
  sqlite3_free(zHead);
  if( rc==SQLITE_OK ) rc = sqlite3_str_errcode(pRest);
  zRest = sqlite3_str_finish(pRest);      /* NULL when empty */
  if( rc==SQLITE_OK && zRest ) rc = sqlite3_exec(db, zRest, 0, 0, 0);
  sqlite3_free(zRest);
  if( rc==SQLITE_OK && nV>0 ){
    if( sqlite3_stricmp(zSchema, "temp")==0 ) shortcut = 0;
    if( shortcut ){
      int taken = anyViewNameTaken(db, zSchema, aV, nV, &rc);
          if( taken<0 && rc==SQLITE_NOMEM ) goto run_done;
      rc = SQLITE_OK;
      if( taken!=0 ) shortcut = 0;
    }
    if( shortcut ){
      int nDone = 0;
      rc = writeViewRows(db, zSchema, aV, nV, &nDone);
      if( rc==SQLITE_OK || rc==SQLITE_NOMEM || nDone>0 ) goto run_done;
      rc = SQLITE_OK;                       /* nothing written: the statements instead */
    }
    for(i=0; rc==SQLITE_OK && i<nV; i++){
      char *z = sqlite3_mprintf("%.*s", aV[i].nStmt, aV[i].zStmt);
      rc = z ? sqlite3_exec(db, z, 0, 0, 0) : SQLITE_NOMEM;
      sqlite3_free(z);
    }
  }
run_done:
  sqlite3_free(aV);
  return rc;
}
