/*
** session_json.c — profsum_session_json(session [, options_json]): the
** document of a session imported with its hosts (session.c's header says
** what it holds), and its registration (profsumRegisterSession).
*/
#include "profsum_int.h"
#include "utf8rule.h"
#include "sqlcall.h"
#include "session.h"
#include "jsontree.h"

#include <string.h>

#define SJ_FN "profsum_session_json"

/* The document's fields and their scope, for "field_scope". */
static const char *const azScope[] = {
  "$.hosts[*].alignment", "per_host", "$.hosts[*].host", "per_host",
  "$.hosts[*].hostname", "per_host", "$.hosts[*].label", "per_host",
  "$.hosts[*].median_step_us", "per_host", "$.hosts[*].num_devices", "per_host",
  "$.hosts[*].offset_us", "per_host", "$.hosts[*].span_us", "per_host",
  "$.hosts[*].step_count", "per_host", "$.hosts[*].times_slowest", "per_host",
  "$.hosts[*].trace_id", "per_host",
  "$.pod.common_steps", "pod", "$.pod.max_lag_us", "pod", "$.pod.num_hosts", "pod",
  "$.pod.offset_spread_us", "pod", "$.pod.slowest_host", "pod", "$.pod.stragglers", "pod",
  "$.pod.total_collective_wait_us", "pod",
  "$.session.alignment", "pod", "$.session.label", "pod", "$.session.origin_ns", "pod",
  "$.session.session_id", "pod", "$.session.source_path", "pod",
};

/* The query that makes the document (?1 session id, ?2 top_k, ?3 the
** field_scope object's JSON; "@" the schema, see schemaSql). */
static const char zSessionSql[] =
  "SELECT json_object("
  " 'schema_version', 'profsum_session.v1',"
  " 'session', (SELECT json_object('session_id', session_id, 'label', label, 'source_path', source_path,"
  "   'origin_ns', origin_ns, 'alignment', alignment) FROM \"@\".profsum_session WHERE session_id=?1),"
  " 'hosts', json((SELECT json_group_array(json_object('trace_id', trace_id, 'label', label, 'host', host,"
  "   'hostname', hostname, 'num_devices', num_devices, 'offset_us', offset_us, 'alignment', alignment,"
  "   'span_us', span_us, 'step_count', step_count, 'median_step_us', median_step_us,"
  "   'times_slowest', times_slowest)) FROM (SELECT * FROM \"@\".profsum_hosts WHERE session_id=?1"
  "   ORDER BY trace_id))),"
  " 'pod', json_object("
  "   'num_hosts', (SELECT count(*) FROM \"@\".profsum_agg_host WHERE session_id=?1),"
  "   'common_steps', (SELECT count(*) FROM \"@\".profsum_stragglers WHERE session_id=?1),"
  "   'slowest_host', (SELECT host FROM \"@\".profsum_hosts WHERE session_id=?1 AND times_slowest>0"
  "     ORDER BY times_slowest DESC, host LIMIT 1),"
  "   'max_lag_us', (SELECT max(lag_us) FROM \"@\".profsum_stragglers WHERE session_id=?1),"
  "   'total_collective_wait_us', (SELECT sum(collective_wait_us) FROM \"@\".profsum_stragglers WHERE session_id=?1),"
  "   'offset_spread_us', (SELECT max(offset_us) - min(offset_us) FROM \"@\".profsum_agg_host WHERE session_id=?1),"
  "   'stragglers', json((SELECT json_group_array(json_object('step', step, 'slowest_host', slowest_host,"
  "     'slowest_compute_us', slowest_compute_us, 'median_compute_us', median_compute_us,"
  "     'lag_us', lag_us, 'collective_wait_us', collective_wait_us)) FROM (SELECT * FROM"
  "     \"@\".profsum_stragglers WHERE session_id=?1 ORDER BY lag_us DESC, step LIMIT ?2)))),"
  " 'field_scope', json(?3))";

/* zSessionSql with every "@" replaced by the schema name zSchema (quoted
** as an identifier: its '"' doubled); sqlite3_malloc'd. */
static char *schemaSql(const char *zSchema){
  sqlite3_str *p = sqlite3_str_new(0);
  const char *z;
  for(z=zSessionSql; *z; z++){
    if( *z=='@' ){
      const char *q;
      for(q=zSchema; *q; q++){
        if( *q=='"' ) sqlite3_str_appendchar(p, 1, '"');
        sqlite3_str_appendchar(p, 1, *q);
      }
    }else{
      sqlite3_str_appendchar(p, 1, *z);
    }
  }
  return sqlite3_str_finish(p);
}

/* The session id of argument v (an id, or a label; digits that are no
** label: an id), 0 in *pId when there is no such session. */
static int sessionIdOf(sqlite3 *db, const char *zSchema, sqlite3_value *v, sqlite3_int64 *pId){
  sqlite3_stmt *p = 0;
  int rc;
  char *z = sqlite3_mprintf("SELECT session_id FROM \"%w\".profsum_session WHERE session_id=?1 "
                            "OR (typeof(?1)='text' AND label=?1) ORDER BY label=?1 DESC LIMIT 1", zSchema);
  *pId = 0;
  if( z==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, z, -1, &p, 0);
  sqlite3_free(z);
  if( rc ) return rc;
  if( sqlite3_value_type(v)==SQLITE_INTEGER ) sqlite3_bind_int64(p, 1, sqlite3_value_int64(v));
  else sqlite3_bind_value(p, 1, v);
  rc = sqlite3_step(p);
  if( rc==SQLITE_ROW ){ *pId = sqlite3_column_int64(p, 0); rc = SQLITE_OK; }
  else if( rc==SQLITE_DONE ) rc = SQLITE_OK;
  sqlite3_finalize(p);
  return rc;
}

/* The "field_scope" object as JSON text (sqlite3_malloc'd). */
static char *scopeJson(void){
  sqlite3_str *p = sqlite3_str_new(0);
  size_t i;
  sqlite3_str_appendchar(p, 1, '{');
  for(i=0; i<sizeof(azScope)/sizeof(azScope[0]); i+=2){
    sqlite3_str_appendf(p, "%s\"%s\":\"%s\"", i ? "," : "", azScope[i], azScope[i+1]);
  }
  sqlite3_str_appendchar(p, 1, '}');
  return sqlite3_str_finish(p);
}

/* The options: top_k (a non-negative integer, 10), schema (a database of
** db, "main"; *pzSchema sqlite3_malloc'd).  SQLITE_OK, or SQLITE_ERROR /
** SQLITE_NOMEM with *pzErr. */
static int sessionOpts(sqlite3 *db, sqlite3_value *v, int *pTopK, char **pzSchema, char **pzErr){
  JNode *o, *k;
  JNode *m;
  int rc = SQLITE_OK, i;
  JNode *sc;
  *pTopK = 10;
  *pzSchema = sqlite3_mprintf("main");
  if( *pzSchema==0 ) return SQLITE_NOMEM;
  if( v==0 || sqlite3_value_type(v)==SQLITE_NULL ) return SQLITE_OK;
  o = jParseOptions((const char*)sqlite3_value_text(v), -1, &rc, pzErr);
  if( o==0 ) return rc;
  for(i=0; (m = jAt(o, i))!=0; i++){
    if( m->zKey && strcmp(m->zKey, "top_k")!=0 && strcmp(m->zKey, "schema")!=0 ){
      *pzErr = sqlite3_mprintf("options_json: unknown key '%s' (known: schema, top_k)", m->zKey);
      rc = SQLITE_ERROR;
      break;
    }
  }
  k = jGet(o, "top_k");
  if( rc==SQLITE_OK && k ){
    if( k->type!=JT_INT || jNumI64(k)<0 || jNumI64(k)>1000000 ){
      *pzErr = sqlite3_mprintf("options_json: 'top_k' must be an integer from 0 to 1000000");
      rc = SQLITE_ERROR;
    }else{
      *pTopK = (int)jNumI64(k);
    }
  }
  sc = jGet(o, "schema");
  if( rc==SQLITE_OK && sc ){
    if( sc->type!=JT_STRING || sc->n==0 ){
      *pzErr = sqlite3_mprintf("options_json: 'schema' must be the name of an attached database");
      rc = SQLITE_ERROR;
    }else if( !profsumSchemaAttached(db, sc->z) ){
      /* as every function that takes a schema says it, not "no session" */
      *pzErr = sqlite3_mprintf("options_json: schema '%s' is not an attached database", sc->z);
      rc = *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
    }else{
      sqlite3_free(*pzSchema);
      *pzSchema = sqlite3_mprintf("%s", sc->z);
      if( *pzSchema==0 ) rc = SQLITE_NOMEM;
    }
  }
  jFree(o);
  if( rc==SQLITE_ERROR && *pzErr==0 ) rc = SQLITE_NOMEM;
  return rc;
}

/* The SQL function. */
static void sessionJsonFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  sqlite3_stmt *p = 0;
  sqlite3_int64 id = 0;
  char *zErr = 0, *zScope = 0, *zOut = 0, *zSchema = 0, *zSql = 0;
  JNode *pDoc = 0;
  int topK, rc;
  rc = sessionOpts(db, argc>1 ? argv[1] : 0, &topK, &zSchema, &zErr);
  if( rc==SQLITE_OK ){
    rc = sessionIdOf(db, zSchema, argv[0], &id);
    if( rc && rc!=SQLITE_NOMEM ) zErr = sqlite3_mprintf("%s (no session imported here?)", sqlite3_errmsg(db));
    else if( rc==SQLITE_OK && id==0 ){
      zErr = sqlite3_mprintf("no session '%s' (profsum_session: import a folder with "
                             "'{\"hosts\": \"all\"}')", sqlite3_value_text(argv[0]));
      rc = SQLITE_ERROR;
    }
  }
  if( rc==SQLITE_OK ){
    zScope = scopeJson();
    zSql = schemaSql(zSchema);
    rc = zScope && zSql ? sqlite3_prepare_v2(db, zSql, -1, &p, 0) : SQLITE_NOMEM;
    if( rc && rc!=SQLITE_NOMEM ) zErr = sqlite3_mprintf("%s", sqlite3_errmsg(db));
  }
  if( rc==SQLITE_OK ){
    sqlite3_bind_int64(p, 1, id);
    sqlite3_bind_int(p, 2, topK);
    sqlite3_bind_text(p, 3, zScope, -1, SQLITE_STATIC);
    if( sqlite3_step(p)==SQLITE_ROW && sqlite3_column_text(p, 0) ){
      pDoc = jParse((const char*)sqlite3_column_text(p, 0), -1, &zErr);
      zOut = pDoc ? jDump(pDoc) : 0;
      if( zOut==0 ) rc = zErr ? SQLITE_ERROR : SQLITE_NOMEM;
    }else{
      rc = sqlite3_errcode(db);
      if( rc==SQLITE_OK ) rc = SQLITE_ERROR;
      if( rc!=SQLITE_NOMEM ) zErr = sqlite3_mprintf("%s", sqlite3_errmsg(db));
    }
  }
  sqlite3_finalize(p);
  jFree(pDoc);
  sqlite3_free(zScope);
  sqlite3_free(zSql);
  sqlite3_free(zSchema);
  if( rc==SQLITE_OK ){
    sqlite3_result_text(ctx, zOut, -1, sqlite3_free);
    zOut = 0;
  }else if( rc==SQLITE_NOMEM && zErr==0 ){
    sqlite3_result_error_nomem(ctx);
  }else{
    char *z = profsumUtf8Scrub(sqlite3_mprintf(SJ_FN ": %s", zErr ? zErr : sqlite3_errstr(rc)));
    sqlite3_result_error(ctx, z ? z : SJ_FN ": out of memory", -1);
    sqlite3_free(z);
  }
  sqlite3_free(zOut);
  sqlite3_free(zErr);
}

/* See session.h. */
int profsumRegisterSession(sqlite3 *db, char **pzErr){
  int rc = SQLITE_OK, n;
  (void)pzErr;
  /* reads only the database: innocuous is not claimed (it reads any
  ** session's rows), deterministic neither (the rows change) */
  for(n=1; n<=2 && rc==SQLITE_OK; n++){
    rc = profsumCreateReader(db, SJ_FN, n, SQLITE_UTF8, sessionJsonFunc);
  }
  return rc;
}
