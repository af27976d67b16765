/*
** doc_knobs.c — the knobs of a summary and the trace it is about: the
** options_json of profsum_summary_json / profsum_report_md and the import
** (warmup_steps, hot_op_limit, breakdown_mode, schema), the knobs stored
** with a trace, and the resolution of a trace argument (an id or a label)
** to its row, with SQLite's own error when the lookup fails.
*/
#include "profsum_int.h"
#include "summary_doc.h"
#include "jsontree.h"
#include "doc_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Knobs and trace resolution                                          */
/* ------------------------------------------------------------------ */

/* See summary_doc.h. */
int profsumSchemaOption(sqlite3 *db, const char *zJson, const char *const *azBool,
                        int *pbBool, char **pzSchema, char **pzErr){
  JNode *p;
  char *zE = 0;
  int i, k, rc;
  *pzSchema = 0;
  if( zJson==0 ) return SQLITE_OK;
  p = jParseOptions(zJson, -1, &rc, pzErr);
  if( p==0 ) return rc;
  for(i=0; i<p->nChild; i++){
    JNode *v = p->a[i];
    if( strcmp(v->zKey, "schema")==0 ){
      if( v->type!=JT_STRING ){
        *pzErr = sqlite3_mprintf("options_json: schema must be the name of an attached database (text)");
        break;
      }
      if( !profsumSchemaAttached(db, v->z) ){
        *pzErr = sqlite3_mprintf("options_json: schema '%s' is not an attached database", v->z);
        break;
      }
      sqlite3_free(*pzSchema);
      *pzSchema = sqlite3_mprintf("%s", v->z);
      if( *pzSchema==0 ){ jFree(p); return SQLITE_NOMEM; }
      continue;
    }
    for(k=0; azBool && azBool[k]; k++){
      if( strcmp(v->zKey, azBool[k])==0 ) break;
    }
    if( azBool && azBool[k] ){
      if( v->type!=JT_TRUE && v->type!=JT_FALSE ){
        *pzErr = sqlite3_mprintf("options_json: %s must be true or false", azBool[k]);
        break;
      }
      pbBool[k] = v->type==JT_TRUE;
      continue;
    }
    {
      sqlite3_str *s = sqlite3_str_new(0);
      sqlite3_str_appendall(s, "schema");
      for(k=0; azBool && azBool[k]; k++) sqlite3_str_appendf(s, ", %s", azBool[k]);
      zE = sqlite3_str_finish(s);
      *pzErr = sqlite3_mprintf("options_json: unknown key '%s' (known: %s)", v->zKey, zE ? zE : "schema");
      sqlite3_free(zE);
      break;
    }
  }
  k = i<p->nChild;                    /* stopped at a bad key */
  jFree(p);
  if( k ){
    sqlite3_free(*pzSchema);
    *pzSchema = 0;
    return *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
  }
  return SQLITE_OK;
}

void profsumKnobsInit(ProfsumKnobs *pK){
  pK->warmupSteps = PROFSUM_DEFAULT_WARMUP_STEPS;
  pK->hotOpLimit = PROFSUM_DEFAULT_HOT_OP_LIMIT;
  pK->globalMode = 0;
}

/* Read the member zKey of the options object p, when it has one, into
** *pVal: a non-negative integer up to INT32_MAX.  SQLITE_OK, or
** SQLITE_ERROR with "option zKey must be an integer from 0 to 2147483647"
** in *pzErr (when pzErr is not 0). */
static int knobInt(const JNode *p, const char *zKey, int *pVal, char **pzErr){
  const JNode *v = jGet(p, zKey);
  if( v==0 ) return SQLITE_OK;
  if( v->type!=JT_INT || v->i<0 || v->i>INT32_MAX ){
    if( pzErr ) *pzErr = sqlite3_mprintf("option %s must be an integer from 0 to 2147483647", zKey);
    return SQLITE_ERROR;
  }
  *pVal = (int)v->i;
  return SQLITE_OK;
}

int profsumParseKnobs(const char *zJson, ProfsumKnobs *pK, int bStrict, char **pzErr){
  JNode *p, *v;
  ProfsumKnobs k = *pK;
  char *zE = 0;
  if( zJson==0 ) return SQLITE_OK;
  p = jParse(zJson, -1, &zE);
  if( p==0 ){
    if( zE ){ if( pzErr ) *pzErr = sqlite3_mprintf("options_json: %s", zE); sqlite3_free(zE); return SQLITE_ERROR; }
    return SQLITE_NOMEM;
  }
  if( p->type!=JT_OBJECT ){
    jFree(p);
    if( pzErr ) *pzErr = sqlite3_mprintf("options_json must be a JSON object");
    return SQLITE_ERROR;
  }
  if( bStrict ){
    int i;
    for(i=0; i<p->nChild; i++){
      const char *zK = p->a[i]->zKey;
      if( strcmp(zK, "warmup_steps")!=0 && strcmp(zK, "hot_op_limit")!=0
       && strcmp(zK, "breakdown_mode")!=0 && strcmp(zK, "schema")!=0 ){
        if( pzErr ) *pzErr = sqlite3_mprintf("options_json: unknown key '%s' (known: warmup_steps, "
                                             "hot_op_limit, breakdown_mode, schema)", zK);
        jFree(p);
        return SQLITE_ERROR;
      }
    }
  }
  if( knobInt(p, "warmup_steps", &k.warmupSteps, pzErr) || knobInt(p, "hot_op_limit", &k.hotOpLimit, pzErr) ){
    jFree(p);
    return SQLITE_ERROR;
  }
  if( (v = jGet(p, "breakdown_mode"))!=0 ){
    if( v->type==JT_STRING && strcmp(v->z, "exclusive_per_track")==0 ) k.globalMode = 0;
    else if( v->type==JT_STRING && strcmp(v->z, "exclusive_global")==0 ) k.globalMode = 1;
    else{
      jFree(p);
      if( pzErr ) *pzErr = sqlite3_mprintf("option breakdown_mode must be 'exclusive_per_track' or 'exclusive_global'");
      return SQLITE_ERROR;
    }
  }
  jFree(p);
  *pK = k;
  return SQLITE_OK;
}

/* Prepare a statement with the schema formatted in (%w). */
int profsumDocPrep(sqlite3 *db, sqlite3_stmt **pp, char **pzErr, const char *zFmt, const char *zSchema){
  char *z = sqlite3_mprintf(zFmt, zSchema);
  int rc;
  if( z==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, z, -1, pp, 0);
  sqlite3_free(z);
  if( rc && pzErr ) *pzErr = sqlite3_mprintf("%s", sqlite3_errmsg(db));
  return rc;
}

/* After sqlite3_step(p) returned rc, not SQLITE_ROW: the error of the step
** (an interrupt, I/O, ...) when it failed, else "no trace with id N" (it
** found no row).  Sets *pzErr (when pzErr is not 0) and returns the code. */
int profsumDocNoTraceRow(sqlite3 *db, int rc, sqlite3_int64 iTrace, char **pzErr){
  if( rc!=SQLITE_DONE ){
    if( pzErr ) *pzErr = sqlite3_mprintf("%s", sqlite3_errmsg(db));
    return rc;
  }
  if( pzErr ) *pzErr = sqlite3_mprintf("no trace with id %lld", (long long)iTrace);
  return SQLITE_ERROR;
}

int profsumTraceKnobs(sqlite3 *db, const char *zSchema, sqlite3_int64 iTrace,
                      ProfsumKnobs *pK, char **pzErr){
  sqlite3_stmt *p = 0;
  int rc = profsumDocPrep(db, &p, pzErr, "SELECT options FROM \"%w\".profsum_trace WHERE trace_id=?1", zSchema);
  profsumKnobsInit(pK);
  if( rc ) return rc;
  sqlite3_bind_int64(p, 1, iTrace);
  if( (rc = sqlite3_step(p))==SQLITE_ROW ){
    const char *zOpts;
    rc = SQLITE_OK;
    zOpts = profsumColText(p, 0, &rc);
    if( rc==SQLITE_OK ) rc = profsumParseKnobs(zOpts, pK, 0, pzErr);
  }else{
    rc = profsumDocNoTraceRow(db, rc, iTrace, pzErr);
  }
  sqlite3_finalize(p);
  return rc;
}

/* 1 when the statement just prepared (rc) failed because a table of the
** schema does not exist ("no such table: ..."): no trace was imported
** there (or, for a view, the database is older).  Any other failure (a
** lock, I/O, a corrupt or unreadable file, memory) is not that. */
int profsumDocNoSuchTable(sqlite3 *db, int rc){
  return rc==SQLITE_ERROR && strncmp(sqlite3_errmsg(db), "no such table", 13)==0;
}

/* The most labels profsumLabelPrefixHint() lists before "and N more"
** (a literal: it is part of the statement's text). */
#define LABEL_HINT_MAX "5"

/* A hint listing the labels of the prepared statement p (rc: how its
** prepare went; columns: label, the count of all matching traces), which
** it steps and finalizes: zIntro (owned here, freed) then 'a', 'b', ...,
** then zMore (a format of the count of all: " and %lld more" is given the
** count of those not listed, " (of %lld)" bOfAll the count of all) when
** more exist (bOfAll: always).  "" when no row comes or the lookup fails;
** 0 when out of memory. */
static char *labelsHint(sqlite3 *db, sqlite3_stmt *p, int rc, char *zIntro,
                        const char *zMore, int bOfAll){
  sqlite3_str *s = sqlite3_str_new(db);
  int k = 0, bOom;
  sqlite3_int64 nAll = 0;
  if( rc==SQLITE_OK && zIntro ){
    while( sqlite3_step(p)==SQLITE_ROW ){
      const char *zL = (const char*)sqlite3_column_text(p, 0);
      if( zL==0 ) continue;
      if( k==0 ){
        nAll = sqlite3_column_int64(p, 1);
        sqlite3_str_appendall(s, zIntro);
      }
      sqlite3_str_appendf(s, "%s'%s'", k ? ", " : "", zL);
      k++;
    }
    if( k && (bOfAll || nAll>k) ) sqlite3_str_appendf(s, zMore, (long long)(bOfAll ? nAll : nAll - k));
  }
  bOom = rc==SQLITE_NOMEM || zIntro==0 || sqlite3_str_errcode(s)==SQLITE_NOMEM;
  sqlite3_finalize(p);
  sqlite3_free(zIntro);
  if( bOom ){ sqlite3_free(sqlite3_str_finish(s)); return 0; }
  {
    char *z = sqlite3_str_finish(s);
    return z ? z : sqlite3_mprintf("%s", "");
  }
}

/* See summary_doc.h.  The labels are found by a range of the UNIQUE
** index on label (BINARY: "x/" <= label < "x0", '0' being the byte after
** '/'), so the hint costs a few rows whatever the number of traces. */
char *profsumLabelPrefixHint(sqlite3 *db, const char *zSchema, const char *zLabel){
  sqlite3_stmt *p = 0;
  char *zLo, *zHi, *z;
  size_t n = strlen(zLabel);
  int rc;
  /* "run/" names its hosts as "run" does */
  zLo = n>0 && zLabel[n-1]=='/' ? sqlite3_mprintf("%s", zLabel) : sqlite3_mprintf("%s/", zLabel);
  if( zLo==0 ) return 0;
  zHi = sqlite3_mprintf("%s", zLo);
  if( zHi==0 ){ sqlite3_free(zLo); return 0; }
  zHi[strlen(zHi)-1] = '0';
  rc = profsumDocPrep(db, &p, 0, "SELECT label, count(*) OVER () FROM \"%w\".profsum_trace "
                      "WHERE label >= ?1 AND label < ?2 ORDER BY label LIMIT " LABEL_HINT_MAX, zSchema);
  if( rc==SQLITE_OK ){
    sqlite3_bind_text(p, 1, zLo, -1, SQLITE_STATIC);
    sqlite3_bind_text(p, 2, zHi, -1, SQLITE_STATIC);
  }
  z = labelsHint(db, p, rc, sqlite3_mprintf("; labels that start with '%s' (a session's hosts): ", zLo),
                 " and %lld more", 0);
  sqlite3_free(zLo);
  sqlite3_free(zHi);
  return z;
}

/* The hint for a label no trace has when no label starts with it either:
** "; the newest labels: 'a', 'b' (of N)", up to LABEL_HINT_MAX of them,
** newest first (by trace_id), "" when there is no trace; 0 when out of
** memory.  A failed lookup gives "" too (the message stays "no trace"). */
static char *newestLabelsHint(sqlite3 *db, const char *zSchema){
  sqlite3_stmt *p = 0;
  int rc = profsumDocPrep(db, &p, 0, "SELECT label, count(*) OVER () FROM \"%w\".profsum_trace "
                          "ORDER BY trace_id DESC LIMIT " LABEL_HINT_MAX, zSchema);
  return labelsHint(db, p, rc, sqlite3_mprintf("; the newest labels: "), " (of %lld)", 1);
}

/* See summary_doc.h.  The lookup's own failures (the database locked by
** another connection, an I/O error, a WAL file that cannot be read) are
** reported with SQLite's message and code, never as "no trace". */
int profsumResolveTrace(sqlite3 *db, const char *zSchema, sqlite3_value *pArg,
                        sqlite3_int64 *pId, char **pzErr){
  sqlite3_stmt *p = 0;
  int rc, t;
  int byId = 0;
  sqlite3_int64 iId = 0;
  const char *zT = 0;
  /* The type first: sqlite3_value_numeric_type() would turn a TEXT '1'
  ** into an INTEGER in place, and a label that looks like a number would
  ** name the trace with that trace_id. */
  if( sqlite3_value_type(pArg)==SQLITE_TEXT ){
    zT = (const char*)sqlite3_value_text(pArg);
    if( zT==0 ) return SQLITE_NOMEM;
    rc = profsumDocPrep(db, &p, 0, "SELECT trace_id FROM \"%w\".profsum_trace WHERE label=?1", zSchema);
    if( rc==SQLITE_OK ) sqlite3_bind_value(p, 1, pArg);
  }else if( (t = sqlite3_value_numeric_type(pArg))==SQLITE_INTEGER || (t==SQLITE_FLOAT && sqlite3_value_double(pArg)==floor(sqlite3_value_double(pArg))) ){
    byId = 1;
    iId = sqlite3_value_int64(pArg);
    rc = profsumDocPrep(db, &p, 0, "SELECT trace_id FROM \"%w\".profsum_trace WHERE trace_id=?1", zSchema);
    if( rc==SQLITE_OK ) sqlite3_bind_int64(p, 1, iId);
  }else{
    if( pzErr ) *pzErr = sqlite3_mprintf("a trace is given by its trace_id (integer) or its label (text)");
    return SQLITE_ERROR;
  }
  if( rc==SQLITE_OK ){
    rc = sqlite3_step(p);
    if( rc==SQLITE_ROW ){
      *pId = sqlite3_column_int64(p, 0);
      sqlite3_finalize(p);
      return SQLITE_OK;
    }
    if( rc==SQLITE_DONE ){
      int digits = zT && zT[0] && zT[strspn(zT, "0123456789")]==0;
      char *zHint;
      sqlite3_finalize(p);
      if( pzErr==0 ) return SQLITE_ERROR;
      if( byId ){
        *pzErr = sqlite3_mprintf("no trace with id %lld", (long long)iId);
        return SQLITE_ERROR;
      }
      /* a session's label names its hosts' traces, "<label>/<host>" */
      zHint = profsumLabelPrefixHint(db, zSchema, zT);
      if( zHint && zHint[0]==0 ){
        /* no host of a session either: the labels there are */
        sqlite3_free(zHint);
        zHint = newestLabelsHint(db, zSchema);
      }
      if( zHint==0 ) return SQLITE_NOMEM;
      *pzErr = sqlite3_mprintf("no trace with label '%s'%s%s%s%s", zT,
                               digits ? " (a trace_id is given as an integer: " : "",
                               digits ? zT : "", digits ? ", not a text)" : "", zHint);
      sqlite3_free(zHint);
      return SQLITE_ERROR;
    }
    /* fall through: the step failed */
  }else if( profsumDocNoSuchTable(db, rc) ){
    /* The tables do not exist yet: nothing was imported. */
    if( pzErr==0 ) return SQLITE_ERROR;
    if( byId ) *pzErr = sqlite3_mprintf("no trace with id %lld (no trace imported in schema '%s')",
                                        (long long)iId, zSchema);
    else *pzErr = sqlite3_mprintf("no trace with label '%s' (no trace imported in schema '%s')",
                                  zT, zSchema);
    return SQLITE_ERROR;
  }
  /* The lookup itself failed (prepare or step): say so with SQLite's error. */
  if( rc==SQLITE_NOMEM ){ sqlite3_finalize(p); return SQLITE_NOMEM; }
  if( pzErr ){
    if( byId ) *pzErr = sqlite3_mprintf("cannot look up the trace with id %lld in schema '%s': %s",
                                        (long long)iId, zSchema, sqlite3_errmsg(db));
    else *pzErr = sqlite3_mprintf("cannot look up the trace with label '%s' in schema '%s': %s",
                                  zT, zSchema, sqlite3_errmsg(db));
  }
  sqlite3_finalize(p);
  return rc;
}

