/*
** wandb_sql.c — the SQL functions wandb_fetch(ref [, dest_dir]),
** wandb_fetch_run(target [, dest_dir [, options_json]]) and
** wandb_publish(trace [, options_json]): their arguments, their JSON
** results and "<function>: <message>" errors (the API key masked), and
** their registration.  The work is done in wandb_fetch.c and
** wandb_publish.c.
**
** User documentation: docs/wandb.md.  Built with PROFSUM_OMIT_NETWORK the
** functions exist and fail with a clear message.
*/
#include "wandb.h"
#include "wandb_int.h"

#include <string.h>
#include <stdlib.h>

#ifdef PROFSUM_OMIT_NETWORK
/* ======================================================================
** Build without network support: every function fails clearly.
*/

/* wandb_fetch(...): always the no-network error. */
static void wbFetchFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  (void)argc; (void)argv;
  sqlite3_result_error(ctx, "wandb_fetch: " WB_NONET, -1);
}
/* wandb_fetch_run(...): always the no-network error. */
static void wbFetchRunFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  (void)argc; (void)argv;
  sqlite3_result_error(ctx, "wandb_fetch_run: " WB_NONET, -1);
}
/* wandb_publish(...): always the no-network error. */
static void wbPublishFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  (void)argc; (void)argv;
  sqlite3_result_error(ctx, "wandb_publish: " WB_NONET, -1);
}

#else /* !PROFSUM_OMIT_NETWORK */
/* ======================================================================
** Network build.
*/

/* Report p's (scrubbed) error on ctx as "zFunc: message". */
static void wbCtxError(sqlite3_context *ctx, Wb *p, const char *zFunc){
  if( p->rc==SQLITE_NOMEM || p->zErr==0 ){
    sqlite3_result_error_nomem(ctx);
    return;
  }
  wbScrub(p);
  profsumCtxErr(ctx, "%s: %s", zFunc, p->zErr);
}

/* Return tree pRes as JSON text on ctx (frees pRes). */
static void wbCtxResult(sqlite3_context *ctx, JNode *pRes){
  char *z = jDump(pRes);
  jFree(pRes);
  if( z==0 ) sqlite3_result_error_nomem(ctx);
  else sqlite3_result_text(ctx, z, -1, sqlite3_free);
}

/* The text of argument i of argv[0..argc), 0 when it is absent or NULL. */
static const char *wbArg(int argc, sqlite3_value **argv, int i){
  return i<argc ? (const char*)sqlite3_value_text(argv[i]) : 0;
}

/* The result of SQL function zFunc after its network call on p: the tree
** pRes as JSON text (freed), or p's error when pRes is 0. */
static void wbCtxFinish(sqlite3_context *ctx, Wb *p, JNode *pRes, const char *zFunc){
  if( pRes ) wbCtxResult(ctx, pRes);
  else wbCtxError(ctx, p, zFunc);
}

/* The two first arguments of the fetch function zFunc into *pz and
** *pzDest: what to fetch (named zArg; zMust says what it must be) and
** dest_dir (0: the default).  0, or 1 after setting ctx's error (no first
** argument, an empty dest_dir). */
static int wbFetchArgs(sqlite3_context *ctx, int argc, sqlite3_value **argv,
                       const char *zFunc, const char *zArg, const char *zMust,
                       const char **pz, const char **pzDest){
  *pz = wbArg(argc, argv, 0);
  *pzDest = wbArg(argc, argv, 1);
  if( *pz==0 ){
    profsumCtxErr(ctx, "%s: %s must be %s", zFunc, zArg, zMust);
    return 1;
  }
  if( *pzDest && (*pzDest)[0]==0 ){
    profsumCtxErr(ctx, "%s: dest_dir must not be empty", zFunc);
    return 1;
  }
  return 0;
}

/* Parse the options_json argument zOpt (0: none) of zFunc into *ppOpt (0
** for none): 0, or 1 after setting ctx's error (not a JSON object, out of
** memory). */
static int wbOptionsArg(sqlite3_context *ctx, const char *zFunc, const char *zOpt,
                        JNode **ppOpt){
  char *zErr = 0;
  JNode *pOpt;
  *ppOpt = 0;
  if( zOpt==0 ) return 0;
  pOpt = jParse(zOpt, -1, &zErr);
  if( pOpt && pOpt->type==JT_OBJECT ){
    *ppOpt = pOpt;
    return 0;
  }
  if( pOpt==0 && zErr==0 ) sqlite3_result_error_nomem(ctx);
  else profsumCtxErr(ctx, "%s: options_json must be a JSON object%s%s", zFunc,
                     zErr ? ": " : "", zErr ? zErr : "");
  sqlite3_free(zErr);
  jFree(pOpt);
  return 1;
}

/*
** wandb_fetch(ref [, dest_dir]) → JSON text describing the fetched
** artifact (see docs/wandb.md).  NULL dest_dir: the default cache
** directory.
*/
static void wbFetchFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  Wb w;
  WbArt a;
  JNode *pRes = 0;
  const char *zRef, *zDest;
  if( wbFetchArgs(ctx, argc, argv, "wandb_fetch", "ref",
                  "an artifact reference (entity/project/name[:alias|:vN])", &zRef, &zDest) ){
    return;
  }
  memset(&a, 0, sizeof(a));
  memset(&w, 0, sizeof(w));
  {
    /* The reference's form first: its error says more than a missing key. */
    char *zE = 0, *zP = 0, *zNA = 0;
    int rc = wbParseRef(&w, zRef, &zE, &zP, &zNA);
    sqlite3_free(zE); sqlite3_free(zP); sqlite3_free(zNA);
    if( rc ){
      wbCtxError(ctx, &w, "wandb_fetch");
      wbEnd(&w);
      return;
    }
  }
  if( wbBegin(&w)==SQLITE_OK ) pRes = wbFetchRef(&w, zRef, zDest, &a);
  wbCtxFinish(ctx, &w, pRes, "wandb_fetch");
  wbArtClear(&a);
  wbEnd(&w);
}

/* The options of wandb_fetch_run (pOpt, a JSON object): entity, project
** and alias into *pzE, *pzP and *pzAlias where given (null keeps the
** default); the strings stay pOpt's.  0, or 1 after setting ctx's error
** (an unknown option, a value that is not a non-empty string). */
static int wbRunOptions(sqlite3_context *ctx, const JNode *pOpt, const char **pzE,
                        const char **pzP, const char **pzAlias){
  int i;
  for(i=0; i<pOpt->nChild; i++){
    JNode *v = pOpt->a[i];
    const char *k = v->zKey;
    if( strcmp(k, "entity")!=0 && strcmp(k, "project")!=0 && strcmp(k, "alias")!=0 ){
      profsumCtxErr(ctx, "wandb_fetch_run: unknown option '%s' (expected "
                    "entity, project, alias)", k);
      return 1;
    }
    if( v->type==JT_NULL ) continue;
    if( wbStr(v)==0 || v->n==0 ){
      profsumCtxErr(ctx, "wandb_fetch_run: option '%s' must be a non-empty string", k);
      return 1;
    }
    if( strcmp(k, "entity")==0 ) *pzE = v->z;
    else if( strcmp(k, "project")==0 ) *pzP = v->z;
    else *pzAlias = v->z;
  }
  return 0;
}

/*
** wandb_fetch_run(target [, dest_dir [, options_json]]) → JSON text as
** wandb_fetch plus "run" and "run_metadata".  options_json keys: entity,
** project (for a bare run id; default WANDB_ENTITY / WANDB_PROJECT) and
** alias (default "latest").
*/
static void wbFetchRunFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  Wb w;
  WbArt a;
  JNode *pRes = 0, *pOpt = 0;
  const char *zTarget, *zDest;
  const char *zOpt = wbArg(argc, argv, 2);
  const char *zE = getenv("WANDB_ENTITY"), *zP = getenv("WANDB_PROJECT");
  const char *zAlias = "latest";
  memset(&a, 0, sizeof(a));
  memset(&w, 0, sizeof(w));
  if( wbFetchArgs(ctx, argc, argv, "wandb_fetch_run", "target",
                  "a run id, entity/project/run_id or a run url", &zTarget, &zDest) ){
    return;
  }
  if( wbOptionsArg(ctx, "wandb_fetch_run", zOpt, &pOpt) ) return;
  if( pOpt && wbRunOptions(ctx, pOpt, &zE, &zP, &zAlias) ){
    jFree(pOpt);
    return;
  }
  /* The target's form first (§8.1 parses it before the API is set up). */
  if( wbCheckRunTarget(&w, zTarget, zE, zP)==SQLITE_OK && wbBegin(&w)==SQLITE_OK ){
    pRes = wbFetchRun(&w, zTarget, zDest, zE, zP, zAlias, &a);
  }
  wbCtxFinish(ctx, &w, pRes, "wandb_fetch_run");
  jFree(pOpt);
  wbArtClear(&a);
  wbEnd(&w);
}

/*
** wandb_publish(trace [, options_json]) → JSON text (see docs/wandb.md):
** upload the summary (the file summary_path, or the trace's summary JSON)
** and the file report_path, if given, as one artifact of type
** profile_summary, attached as wandb-http.md §6.3 decides.
*/
static void wbPublishFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  Wb w;
  WbPlan pl;
  JNode *pOpt = 0, *pRes = 0;
  const char *zOpt = wbArg(argc, argv, 1);
  int bDry = 0;
  memset(&w, 0, sizeof(w));
  memset(&pl, 0, sizeof(pl));
  if( wbOptionsArg(ctx, "wandb_publish", zOpt, &pOpt) ) return;
  if( wbPlanBuild(ctx, argv[0], pOpt, &pl, &bDry)==0 ){
    if( bDry ){
      pRes = wbPlanJson(&pl);
      if( pRes ) wbCtxResult(ctx, pRes);
      else sqlite3_result_error_nomem(ctx);
    }else{
      if( wbBegin(&w)==SQLITE_OK ) pRes = wbPublish(&w, &pl);
      wbCtxFinish(ctx, &w, pRes, "wandb_publish");
      wbEnd(&w);
    }
  }
  wbPlanClear(&pl);
  jFree(pOpt);
}

#endif /* !PROFSUM_OMIT_NETWORK */

/* See wandb.h: register the three functions, SQLITE_DIRECTONLY (never
** from views/triggers in a database), not DETERMINISTIC. */
int profsumRegisterWandb(sqlite3 *db, char **pzErr){
  const int f = SQLITE_UTF8|SQLITE_DIRECTONLY;
  int rc;
  (void)pzErr;
  rc = sqlite3_create_function(db, "wandb_fetch", 1, f, 0, wbFetchFunc, 0, 0);
  if( rc==SQLITE_OK ) rc = sqlite3_create_function(db, "wandb_fetch", 2, f, 0, wbFetchFunc, 0, 0);
  if( rc==SQLITE_OK ) rc = sqlite3_create_function(db, "wandb_fetch_run", 1, f, 0, wbFetchRunFunc, 0, 0);
  if( rc==SQLITE_OK ) rc = sqlite3_create_function(db, "wandb_fetch_run", 2, f, 0, wbFetchRunFunc, 0, 0);
  if( rc==SQLITE_OK ) rc = sqlite3_create_function(db, "wandb_fetch_run", 3, f, 0, wbFetchRunFunc, 0, 0);
  if( rc==SQLITE_OK ) rc = sqlite3_create_function(db, "wandb_publish", 1, f, 0, wbPublishFunc, 0, 0);
  if( rc==SQLITE_OK ) rc = sqlite3_create_function(db, "wandb_publish", 2, f, 0, wbPublishFunc, 0, 0);
  return rc;
}
