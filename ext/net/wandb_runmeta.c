/*
** wandb_runmeta.c — the run_metadata of a fetched W&B profile
** (summary-v1-tools-spec §8.4): run path and id, hardware, topology, git
** commit and config hash from the run's config and summary (RunInfo), and,
** for an artifact reference, the run that logged it (ArtifactCreatedBy,
** best effort).
**
** Protocol: wandb-http.md §4 (queries).  Built with PROFSUM_OMIT_NETWORK
** this file is empty.
*/
#include "wandb_int.h"

#ifndef PROFSUM_OMIT_NETWORK
#include <math.h>
#include <string.h>

/* GraphQL texts (wandb-http.md §8; ArtifactCreatedBy is profsum's own,
** used best-effort for the run that logged an artifact). */

static const char wbQRunInfo[] =
  "query RunInfo($entity: String!, $project: String!, $run: String!) "
  "{ project(name: $project, entityName: $entity) { run(name: $run) "
  "{ id name displayName state createdAt host commit config summaryMetrics "
  "} } }";
static const char wbQCreatedBy[] =
  "query ArtifactCreatedBy($id: ID!) { artifact(id: $id) { createdBy "
  "{ __typename ... on Run { name project { name entity { name } } } } } }";

/* Python truthiness of a JSON value (absent = false). */
static int wbTruthy(const JNode *v){
  if( v==0 ) return 0;
  switch( v->type ){
    case JT_NULL: case JT_FALSE: return 0;
    case JT_INT:  return v->i!=0;
    case JT_REAL: return v->r!=0.0;
    case JT_STRING: return v->n>0;
    case JT_ARRAY: case JT_OBJECT: return v->nChild>0;
    default: return 1;
  }
}

/* §8.4 integer conversion: int → int, float → truncated int, else null. */
static JNode *wbIntOrNull(const JNode *v){
  if( v && v->type==JT_INT ) return jInt(v->i);
  if( v && v->type==JT_REAL && isfinite(v->r) && fabs(v->r)<9.2e18 ){
    return jInt((sqlite3_int64)v->r);
  }
  return jNull();
}

/* First non-empty string among the members zA, zB, zC (0-terminated
** list, up to 3) of object p, as a new node (null when none). */
static JNode *wbFirstStr(const JNode *p, const char *zA, const char *zB,
                         const char *zC){
  const char *az[3];
  int i;
  az[0] = zA; az[1] = zB; az[2] = zC;
  for(i=0; i<3 && az[i]; i++){
    const char *z = (p && p->type==JT_OBJECT) ? wbStr(jGet(p, az[i])) : 0;
    if( z && z[0] ) return jStr(z, -1);
  }
  return jNull();
}

/* A JSON value that may be given as a JSON string (config,
** summaryMetrics): the parsed object, or 0.  Caller frees. */
static JNode *wbJsonField(const JNode *v){
  char *zErr = 0;
  JNode *r = 0;
  if( v && v->type==JT_STRING ){
    r = jParse(v->z, v->n, &zErr);
    sqlite3_free(zErr);
  }else if( v && v->type==JT_OBJECT ){
    r = jClone(v);
  }
  if( r && r->type!=JT_OBJECT ){ jFree(r); r = 0; }
  return r;
}

/* Build run_metadata (summary-v1-tools-spec §8.4) for run e/p/run with the
** given artifact_ref / artifact_name, from the RunInfo query.  Returns the
** object (caller frees) or 0 with the error recorded ("run ... not
** found"). */
JNode *wbRunMetadata(Wb *p, const char *zE, const char *zP,
                     const char *zRun, const char *zArtRef,
                     const char *zArtName){
  JNode *pVars = jObj(), *pData, *pRoot, *pRun, *pRawCfg = 0, *pSum = 0;
  JNode *pCfg = 0, *pMeta = 0, *pRes, *pNum;
  const char *zId;
  char *zPath = 0;
  int i;
  if( pVars ){
    jSet(pVars, "entity", jStr(zE, -1));
    jSet(pVars, "project", jStr(zP, -1));
    jSet(pVars, "run", jStr(zRun, -1));
  }
  pRoot = wbGraphql(p, "RunInfo", wbQRunInfo, pVars, &pData);
  if( pRoot==0 ) return 0;
  if( wbPath(pData, "project", (char*)0)==0
   || wbPath(pData, "project", (char*)0)->type!=JT_OBJECT ){
    wbErr(p, "project '%s/%s' not found", zE, zP);
    goto done;
  }
  pRun = wbPath(pData, "project", "run", (char*)0);
  if( pRun==0 || pRun->type!=JT_OBJECT ){
    wbErr(p, "run '%s/%s/%s' not found", zE, zP, zRun);
    goto done;
  }
  pRawCfg = wbJsonField(jGet(pRun, "config"));
  pSum = wbJsonField(jGet(pRun, "summaryMetrics"));
  /* run.config: the "value" of each top-level key, "_" keys skipped. */
  pCfg = jObj();
  for(i=0; pCfg && pRawCfg && i<pRawCfg->nChild; i++){
    JNode *c = pRawCfg->a[i];
    JNode *v = (c->type==JT_OBJECT && jGet(c, "value")) ? jGet(c, "value") : c;
    if( c->zKey[0]=='_' ) continue;
    jSetNew(pCfg, c->zKey, jClone(v));      /* keys of a parsed object: unique */
  }
  pMeta = jObj();
  if( pMeta==0 || pCfg==0 || jOom(pCfg) ){ wbOom(p); goto done; }
  zId = wbStr(jGet(pRun, "name"));
  if( zId==0 ) zId = zRun;
  zPath = sqlite3_mprintf("%s/%s/%s", zE, zP, zId);
  jSet(pMeta, "run_path", jStr(zPath, -1));
  jSet(pMeta, "run_id", jStr(zId, -1));
  jSet(pMeta, "artifact_ref", jStr(zArtRef, -1));
  jSet(pMeta, "artifact_name", jStr(zArtName, -1));
  jSet(pMeta, "hardware_type",
       wbFirstStr(pSum, "throughput/device_kind", "device_kind", 0));
  jSet(pMeta, "mesh_or_topology",
       wbFirstStr(wbPath(pCfg, "trainer", "resources", (char*)0),
                  "topology", "tpu_topology", "mesh_shape"));
  jSet(pMeta, "git_sha", wbFirstStr(pCfg, "git_commit", "git_sha", 0));
  {
    /* the text the reference hashes: json.dumps(config, sort_keys=True) */
    char *zText = profsumJsonCompact(pCfg);
    if( zText ){
      ProfsumSha256 h;
      char zHex[65];
      profsumSha256Init(&h);
      profsumSha256Update(&h, (const unsigned char*)zText, strlen(zText));
      profsumSha256Hex(&h, zHex);
      zHex[16] = 0;
      jSet(pMeta, "config_hash", jStr(zHex, -1));
    }else{
      wbOom(p);
    }
    sqlite3_free(zText);
  }
  pNum = pSum ? jGet(pSum, "num_devices") : 0;
  jSet(pMeta, "num_devices", wbIntOrNull(wbTruthy(pNum) ? pNum : jGet(pCfg, "num_devices")));
  pNum = pSum ? jGet(pSum, "num_hosts") : 0;
  jSet(pMeta, "num_hosts", wbIntOrNull(wbTruthy(pNum) ? pNum : jGet(pCfg, "num_hosts")));
  if( jOom(pMeta) ) wbOom(p);
done:
  pRes = p->rc ? 0 : pMeta;
  if( pRes==0 ) jFree(pMeta);
  jFree(pRawCfg); jFree(pSum); jFree(pCfg); jFree(pRoot);
  sqlite3_free(zPath);
  return pRes;
}

/* Minimal run_metadata: only artifact_ref and artifact_name set. */
static JNode *wbMinimalMetadata(const char *zRef, const char *zName){
  JNode *m = jObj();
  static const char *const azNull[] = {"run_path", "run_id", "hardware_type",
    "mesh_or_topology", "git_sha", "config_hash", "num_devices", "num_hosts"};
  size_t i;
  if( m==0 ) return 0;
  for(i=0; i<sizeof(azNull)/sizeof(azNull[0]); i++) jSet(m, azNull[i], jNull());
  jSet(m, "artifact_ref", jStr(zRef, -1));
  jSet(m, "artifact_name", jStr(zName, -1));
  return m;
}

/* Best effort: run_metadata of the run that logged artifact a
** (ArtifactCreatedBy), else the minimal metadata.  Never fails except for
** out of memory. */
JNode *wbArtifactMetadata(Wb *p, const WbArt *a, const char *zRef){
  JNode *pVars = jObj(), *pData, *pRoot, *pBy, *pMeta = 0;
  char *zName = sqlite3_mprintf("%s:v%lld", a->zName, a->iVersion);
  if( zName==0 ){ jFree(pVars); wbOom(p); return 0; }
  if( pVars ) jSet(pVars, "id", jStr(a->zId, -1));
  pRoot = wbGraphql(p, "ArtifactCreatedBy", wbQCreatedBy, pVars, &pData);
  if( pRoot ){
    const char *zR, *zE, *zP;
    pBy = wbPath(pData, "artifact", "createdBy", (char*)0);
    zR = wbStr(jGet(pBy, "name"));
    zP = wbStr(wbPath(pBy, "project", "name", (char*)0));
    zE = wbStr(wbPath(pBy, "project", "entity", "name", (char*)0));
    if( zR && zP && zE ) pMeta = wbRunMetadata(p, zE, zP, zR, zRef, zName);
    jFree(pRoot);
  }
  if( p->rc!=SQLITE_NOMEM ) wbClearErr(p);
  if( pMeta==0 && p->rc==SQLITE_OK ){
    pMeta = wbMinimalMetadata(zRef, zName);
    if( pMeta==0 || jOom(pMeta) ){ jFree(pMeta); pMeta = 0; wbOom(p); }
  }
  sqlite3_free(zName);
  return pMeta;
}

#endif /* !PROFSUM_OMIT_NETWORK */
