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
** The script runs in its order (the views' rows among the other
** statements), so sqlite_schema lists the objects as CREATE would.
**
** Before anything is written, everything SQLite or the connection could
** refuse is compiled without being run: a CREATE VIEW of each name (the
** authorizer is asked about it then, as it would be), the insert into the
** schema table (defensive mode, SQLITE_DBCONFIG_DEFENSIVE, refuses it
** whatever the writable-schema setting) and the schema version's read and
** write.  The statements run the usual way (sqlite3_exec) instead, with
** whatever outcome they have, when one of these is refused or a CREATE
** VIEW compiles to nothing (an authorizer that answers SQLITE_IGNORE);
** and for the temp schema, an object that already has one of the views'
** names (CREATE VIEW IF NOT EXISTS then skips it, or fails for an index),
** a view statement without its ';', or a view longer than the
** connection's SQL length limit (SQLite would refuse to read it back).
** Only a refusal to compile (SQLITE_ERROR, SQLITE_AUTH) with the caller's
** transaction still open leads there: any other failure (out of memory, a
** full disk, an I/O error, an interrupt) is the caller's error, and its
** transaction is rolled back as for any failed write.  (No savepoint can
** be opened here: SQLite refuses one while the statement that called the
** import runs.)
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

/* One statement of the script: a view's (its name and the text of its
** row) or any other. */
typedef struct SchemaStmt {
  int isView;
  const char *zFrom;    /* the statement with the comments before it ... */
  const char *zNext;    /* ... to right after its ';' */
  const char *zName;    /* a view's name in the script; nName bytes */
  int nName;
  const char *zBody;    /* from the name to the last character before ';' */
  int nBody;
} SchemaStmt;

/* Can a failure with code rc be answered by running the statements
** instead?  Only when SQLite refused to compile something (SQLITE_ERROR:
** defensive mode, an older SQLite; SQLITE_AUTH: an authorizer) and the
** caller's transaction is as it was (inTx: one was open on entry).  Any
** other failure (a full disk, an I/O error, an interrupt) is the caller's
** error: SQLite may have rolled its transaction back already. */
static int canFallBack(sqlite3 *db, int rc, int inTx){
  if( (rc & 0xff)!=SQLITE_ERROR && (rc & 0xff)!=SQLITE_AUTH ) return 0;
  return !inTx || !sqlite3_get_autocommit(db);
}

/* Does an object named like one of the views exist in zSchema?  1 or 0, -1
** on an error (*pRc set). */
static int anyViewNameTaken(sqlite3 *db, const char *zSchema, const SchemaStmt *a, int n, int *pRc){
  sqlite3_stmt *p = 0;
  char *z = sqlite3_mprintf("SELECT 1 FROM \"%w\".sqlite_schema WHERE name=?1 COLLATE NOCASE", zSchema);
  int i, rc, taken = 0;
  if( z==0 ){ *pRc = SQLITE_NOMEM; return -1; }
  rc = sqlite3_prepare_v2(db, z, -1, &p, 0);
  sqlite3_free(z);
  for(i=0; rc==SQLITE_OK && i<n && !taken; i++){
    if( !a[i].isView ) continue;
    sqlite3_bind_text(p, 1, a[i].zName, a[i].nName, SQLITE_STATIC);
    rc = sqlite3_step(p);
    if( rc==SQLITE_ROW ){ taken = 1; rc = SQLITE_OK; }
    else if( rc==SQLITE_DONE ) rc = sqlite3_reset(p);
  }
  sqlite3_finalize(p);
  if( rc ){ *pRc = rc; return -1; }
  return taken;
}

/* Compile zSql (sqlite3_malloc'd, freed here) without running it: what
** the authorizer and the connection's settings say of it.  SQLITE_OK when
** it compiles to a statement that would write (bWrite) or to any
** statement (!bWrite); SQLITE_AUTH when it compiles to nothing (an
** authorizer that answered SQLITE_IGNORE); else SQLite's code. */
static int probe(sqlite3 *db, char *zSql, int bWrite){
  sqlite3_stmt *p = 0;
  int rc;
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, zSql, -1, &p, 0);
  sqlite3_free(zSql);
  if( rc==SQLITE_OK && (p==0 || (bWrite && sqlite3_stmt_readonly(p))) ) rc = SQLITE_AUTH;
  sqlite3_finalize(p);
  return rc;
}

/* Would SQLite let this connection take the shortcut, and the views be
** the same as CREATE VIEW's?  1 yes, 0 no (run the statements), -1 on an
** error that the caller returns (*pRc set). */
static int shortcutAllowed(sqlite3 *db, const char *zSchema, const SchemaStmt *a, int n, int inTx,
                           int *pRc){
  int i, rc = SQLITE_OK, taken, mxSql = sqlite3_limit(db, SQLITE_LIMIT_SQL_LENGTH, -1);
  if( sqlite3_stricmp(zSchema, "temp")==0 ) return 0;
  for(i=0; i<n; i++){
    /* a view without its ';' or a name, or whose text SQLite would refuse
    ** as too long to compile when it reads the schema */
    if( a[i].isView && (a[i].zNext[-1]!=';' || a[i].nName==0 || a[i].nBody+12>=mxSql) ) return 0;
  }
  taken = anyViewNameTaken(db, zSchema, a, n, &rc);
  if( taken<0 ){
    if( canFallBack(db, rc, inTx) ) return 0;
    *pRc = rc;
    return -1;
  }
  if( taken ) return 0;
  /* what an authorizer says of CREATE VIEW for each name, and of the
  ** schema version's read and write (compiled only: the authorizer is
  ** asked then) */
  for(i=0; rc==SQLITE_OK && i<n; i++){
    if( a[i].isView ){
      rc = probe(db, sqlite3_mprintf("CREATE VIEW IF NOT EXISTS \"%w\".\"%.*w\" AS SELECT 1",
                                     zSchema, a[i].nName, a[i].zName), 1);
    }
  }
  if( rc==SQLITE_OK ){
    /* the insert itself (defensive mode refuses it whatever the setting) */
    int wasOn = 0;
    sqlite3_db_config(db, SQLITE_DBCONFIG_WRITABLE_SCHEMA, -1, &wasOn);
    sqlite3_db_config(db, SQLITE_DBCONFIG_WRITABLE_SCHEMA, 1, (int*)0);
    rc = probe(db, sqlite3_mprintf("INSERT INTO \"%w\".sqlite_schema(type, name, tbl_name, rootpage, sql) "
                                   "VALUES('view', ?1, ?1, 0, ?2)", zSchema), 1);
    sqlite3_db_config(db, SQLITE_DBCONFIG_WRITABLE_SCHEMA, wasOn, (int*)0);
  }
  if( rc==SQLITE_OK ) rc = probe(db, sqlite3_mprintf("PRAGMA \"%w\".schema_version", zSchema), 0);
  if( rc==SQLITE_OK ) rc = probe(db, sqlite3_mprintf("PRAGMA \"%w\".schema_version=1", zSchema), 0);
  if( rc==SQLITE_OK ) return 1;
  if( canFallBack(db, rc, inTx) ) return 0;
  *pRc = rc;
  return -1;
}

/* Raise zSchema's schema version by one: every connection (this one too)
** reads the schema again.  An SQLite code. */
static int bumpSchemaVersion(sqlite3 *db, const char *zSchema){
  sqlite3_stmt *p = 0;
  char *z = sqlite3_mprintf("PRAGMA \"%w\".schema_version", zSchema);
  int rc, ver = 0;
  rc = z ? sqlite3_prepare_v2(db, z, -1, &p, 0) : SQLITE_NOMEM;
  sqlite3_free(z);
  if( rc ) return rc;
  if( sqlite3_step(p)==SQLITE_ROW ) ver = sqlite3_column_int(p, 0);
  rc = sqlite3_finalize(p);
  if( rc ) return rc;
  z = sqlite3_mprintf("PRAGMA \"%w\".schema_version=%d", zSchema, (int)((unsigned)ver + 1u));
  if( z==0 ) return SQLITE_NOMEM;
  rc = sqlite3_exec(db, z, 0, 0, 0);
  sqlite3_free(z);
  return rc;
}

/* Run the statements of a[0..n) in order: the views' as rows (shortcut)
** or as statements, the others as statements, consecutive ones as one
** script.  An SQLite code. */
static int runInOrder(sqlite3 *db, const char *zSchema, const SchemaStmt *a, int n, int shortcut){
  sqlite3_stmt *pIns = 0;
  sqlite3_str *pText = 0;
  int i, j, rc = SQLITE_OK, wasOn = 0;
  for(i=0; rc==SQLITE_OK && i<n; i=j){
    if( shortcut && a[i].isView ){
      char *z;
      if( pIns==0 ){
        sqlite3_db_config(db, SQLITE_DBCONFIG_WRITABLE_SCHEMA, -1, &wasOn);
        sqlite3_db_config(db, SQLITE_DBCONFIG_WRITABLE_SCHEMA, 1, (int*)0);
        z = sqlite3_mprintf("INSERT INTO \"%w\".sqlite_schema(type, name, tbl_name, rootpage, sql) "
                            "VALUES('view', ?1, ?1, 0, ?2)", zSchema);
        rc = z ? sqlite3_prepare_v2(db, z, -1, &pIns, 0) : SQLITE_NOMEM;
        sqlite3_free(z);
        sqlite3_db_config(db, SQLITE_DBCONFIG_WRITABLE_SCHEMA, wasOn, (int*)0);
        if( rc ) break;
        pText = sqlite3_str_new(db);
      }
      sqlite3_str_reset(pText);
      sqlite3_str_appendall(pText, "CREATE VIEW ");
      sqlite3_str_append(pText, a[i].zBody, a[i].nBody);
      rc = sqlite3_str_errcode(pText);
      if( rc ) break;
      sqlite3_bind_text(pIns, 1, a[i].zName, a[i].nName, SQLITE_STATIC);
      sqlite3_bind_text(pIns, 2, sqlite3_str_value(pText), sqlite3_str_length(pText), SQLITE_STATIC);
      /* the setting is read when the insert runs too: on for that moment */
      sqlite3_db_config(db, SQLITE_DBCONFIG_WRITABLE_SCHEMA, 1, (int*)0);
      rc = sqlite3_step(pIns);
      sqlite3_db_config(db, SQLITE_DBCONFIG_WRITABLE_SCHEMA, wasOn, (int*)0);
      if( rc==SQLITE_DONE ) rc = sqlite3_reset(pIns);
      j = i+1;
    }else{
      /* these statements up to the next view written as a row */
      char *z;
      for(j=i; j<n && !(shortcut && a[j].isView); j++){}
      z = sqlite3_mprintf("%.*s", (int)(a[j-1].zNext - a[i].zFrom), a[i].zFrom);
      rc = z ? sqlite3_exec(db, z, 0, 0, 0) : SQLITE_NOMEM;
      sqlite3_free(z);
    }
  }
  sqlite3_finalize(pIns);
  if( pText ) sqlite3_free(sqlite3_str_finish(pText));
  if( rc==SQLITE_OK && pIns ) rc = bumpSchemaVersion(db, zSchema);
  return rc;
}

/* See import_int.h. */
int profsumSchemaRunScript(sqlite3 *db, const char *zSchema, const char *zScript){
  char *zHead = sqlite3_mprintf("CREATE VIEW IF NOT EXISTS \"%w\".", zSchema);
  SchemaStmt *a = 0;
  int n = 0, nAlloc = 0, nView = 0, rc = SQLITE_OK, shortcut = 0;
  int inTx = !sqlite3_get_autocommit(db);
  size_t nHead;
  const char *p = zScript;
  if( zHead==0 ) return SQLITE_NOMEM;
  nHead = strlen(zHead);
  while( *p ){
    const char *zS = stmtStart(p), *zE = stmtEnd(zS);
    const char *zNext = *zE ? zE+1 : zE;
    SchemaStmt *s;
    if( n==nAlloc ){
      SchemaStmt *aNew;
      nAlloc = nAlloc ? 2*nAlloc : 128;
      aNew = sqlite3_realloc64(a, (sqlite3_uint64)nAlloc*sizeof(*a));
      if( aNew==0 ){ rc = SQLITE_NOMEM; break; }
      a = aNew;
    }
    s = &a[n++];
    memset(s, 0, sizeof(*s));
    s->zFrom = p;
    s->zNext = zNext;
    if( *zS && strncmp(zS, zHead, nHead)==0 ){
      const char *zN = zS + nHead, *zB = zE;
      int m = 0;
      while( (zN[m]>='a' && zN[m]<='z') || (zN[m]>='A' && zN[m]<='Z') || (zN[m]>='0' && zN[m]<='9')
          || zN[m]=='_' ) m++;
      while( zB>zN && isSqlSpace(zB[-1]) ) zB--;
      s->isView = 1;
      s->zName = zN;
      s->nName = m;
      s->zBody = zN;
      s->nBody = (int)(zB - zN);
      nView++;
    }
    p = zNext;
  }
  sqlite3_free(zHead);
  if( rc==SQLITE_OK && nView>0 ){
    shortcut = shortcutAllowed(db, zSchema, a, n, inTx, &rc);
    if( shortcut<0 ) shortcut = 0;
  }
  if( rc==SQLITE_OK ) rc = runInOrder(db, zSchema, a, n, shortcut);
  sqlite3_free(a);
  return rc;
}
