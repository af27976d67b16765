/*
** import_opts.c — the options_json of profsum_import, parsed into an
** ImportOpts (import_int.h); docs/summary.md and docs/sessions.md list
** the keys.
*/
#include "profsum_int.h"
#include "utf8rule.h"
#include "import_int.h"
#include "jsontree.h"

#include <string.h>

#define FN "profsum_import"

/* The message of parseOpts for key zKey of row p (its value: text when
** isText, a true/false when isBool, of JSON type zVT) that parseOpts does
** not take: what the key takes, or the known keys.  SQLITE_ERROR, or
** SQLITE_NOMEM. */
static int optsKeyError(sqlite3 *db, sqlite3_stmt *p, const char *zKey, int isText, int isBool,
                        const char *zVT, char **pzErr){
  /* what each key takes, for the message (the keys handled above) */
  static const char *azWant[] = {
    "warmup_steps", "an integer from 0 to 2147483647", "hot_op_limit", "an integer from 0 to 2147483647",
    "breakdown_mode", "'exclusive_per_track' or 'exclusive_global'",
    "series", "a string or null", "store_events", "true or false (or 1/0)",
    "schema", "a string (the name of an attached database)",
    "replace", "true or false (or 1/0)", "reuse", "true or false (or 1/0)",
    "unique_label", "true or false (or 1/0)",
    "alias", "a non-empty string or null",
    "device_peaks", "an object: device name or \"*\" -> {\"peak_flops_per_s\": x, \"peak_mem_bw_bytes_per_s\": y}",
    "session", "'reference', 'latest', 'all' or a session folder name",
    "hosts", "'one' or 'all'",
    "store_diagnostics", "'compact' or 'all'" };
  const char *zWant = 0;
  size_t w;
  for(w=0; w<sizeof(azWant)/sizeof(azWant[0]); w+=2){
    if( strcmp(zKey, azWant[w])==0 ){ zWant = azWant[w+1]; break; }
  }
  if( zWant ){
    /* the value as written: a string quoted, true/false/null as words */
    const char *zV = (const char*)sqlite3_column_text(p, 2);
    *pzErr = isText ? sqlite3_mprintf(FN ": options_json: '%s' must be %s, not \"%s\"", zKey, zWant, zV)
           : sqlite3_mprintf(FN ": options_json: '%s' must be %s, not %s", zKey, zWant,
                             isBool || (zVT && strcmp(zVT, "null")==0) ? zVT : zV ? zV : "?");
  }else{
    sqlite3_str *pKnown = sqlite3_str_new(db);
    char *zKnown;
    for(w=0; w<sizeof(azWant)/sizeof(azWant[0]); w+=2){
      sqlite3_str_appendf(pKnown, "%s%s", w ? ", " : "", azWant[w]);
    }
    zKnown = sqlite3_str_finish(pKnown);
    *pzErr = zKnown ? sqlite3_mprintf(FN ": options_json: unknown key '%s' (known: %s)", zKey, zKnown) : 0;
    sqlite3_free(zKnown);
    if( *pzErr==0 ) return SQLITE_NOMEM;
  }
  return *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
}

/* The checks of options_json that json_each() cannot make, on its tree
** p (an object): every string value (a series, an alias, a schema, ...)
** text SQLite keeps whole (json_each() would cut one at U+0000), and no
** unknown key in the objects of device_peaks (a typo such as peak_flops
** would leave the peak unset, unnoticed).  SQLITE_OK, or SQLITE_ERROR
** with *pzErr (SQLITE_NOMEM without). */
static int optsTreeCheck(const JNode *p, char **pzErr){
  int i, k;
  for(i=0; i<p->nChild; i++){
    const JNode *v = p->a[i];
    if( v->type==JT_STRING ){
      char *zWhy = 0, *zWhat = sqlite3_mprintf("'%s'", v->zKey);
      int bad = zWhat && profsumTextArgFault(zWhat, v->z, v->n, &zWhy);
      sqlite3_free(zWhat);
      if( zWhat==0 || (bad && zWhy==0) ) return SQLITE_NOMEM;
      if( bad ){
        *pzErr = sqlite3_mprintf(FN ": options_json: %s", zWhy);
        sqlite3_free(zWhy);
        return *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
      }
    }
    if( v->type==JT_OBJECT && strcmp(v->zKey, "device_peaks")==0 ){
      for(k=0; k<v->nChild; k++){
        const JNode *d = v->a[k];
        int m;
        if( d->type!=JT_OBJECT ) continue;     /* said by the peaks' own check */
        for(m=0; m<d->nChild; m++){
          const char *zK = d->a[m]->zKey;
          if( strcmp(zK, "peak_flops_per_s")==0 || strcmp(zK, "peak_mem_bw_bytes_per_s")==0 ) continue;
          *pzErr = sqlite3_mprintf(FN ": options_json: device_peaks: \"%s\": unknown key \"%s\" "
                                   "(known: peak_flops_per_s, peak_mem_bw_bytes_per_s)", d->zKey, zK);
          return *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
        }
      }
    }
  }
  return SQLITE_OK;
}

/* See import_int.h. */
int profsumImportParseOpts(sqlite3 *db, const char *zJson, ImportOpts *o, char **pzErr){
  sqlite3_stmt *p = 0;
  int rc;
  memset(o, 0, sizeof(*o));
  o->warmup = 5;
  o->hotOpLimit = 25;
  o->zSchema = sqlite3_mprintf("main");
  if( o->zSchema==0 ) return SQLITE_NOMEM;
  if( zJson==0 ) return SQLITE_OK;
  {
    /* SQLite's JSON functions say only "malformed JSON": jParse() says where */
    char *zE = 0;
    JNode *pChk = jParse(zJson, -1, &zE);
    if( pChk==0 ){
      if( zE==0 ) return SQLITE_NOMEM;
      *pzErr = sqlite3_mprintf(FN ": options_json: %s", zE);
      sqlite3_free(zE);
      return SQLITE_ERROR;
    }
    if( pChk->type!=JT_OBJECT ){     /* json_each() of [] would give no row */
      jFree(pChk);
      *pzErr = sqlite3_mprintf(FN ": options_json must be a JSON object");
      return SQLITE_ERROR;
    }
    rc = optsTreeCheck(pChk, pzErr);
    jFree(pChk);
    if( rc ) return rc;
  }
  rc = sqlite3_prepare_v2(db, "SELECT json_type(?1), key, value, type FROM json_each(?1)", -1, &p, 0);
  if( rc ){
    /* the database's or the connection's failure (the JSON is checked above) */
    if( rc!=SQLITE_NOMEM ) *pzErr = sqlite3_mprintf(FN ": %s", sqlite3_errmsg(db));
    return rc;
  }
  sqlite3_bind_text(p, 1, zJson, -1, SQLITE_STATIC);
  while( (rc = sqlite3_step(p))==SQLITE_ROW ){
    const char *zType = (const char*)sqlite3_column_text(p, 0);
    const char *zKey = (const char*)sqlite3_column_text(p, 1);
    const char *zVT = (const char*)sqlite3_column_text(p, 3);
    int isInt = zVT && strcmp(zVT, "integer")==0;
    int isText = zVT && strcmp(zVT, "text")==0;
    int isBool = zVT && (strcmp(zVT, "true")==0 || strcmp(zVT, "false")==0);
    /* a flag: true/false, or the integers 1/0 (not 2 or -1: a slip) */
    int isFlag = isBool || (isInt && (unsigned long long)sqlite3_column_int64(p, 2)<=1);
    int flagOn = isFlag && (isBool ? zVT[0]=='t' : sqlite3_column_int64(p, 2)==1);
    if( zType==0 || strcmp(zType, "object")!=0 ){
      *pzErr = sqlite3_mprintf(FN ": options_json must be a JSON object");
      rc = SQLITE_ERROR; break;
    }
    if( zKey==0 ) continue;
    if( isText ){
      /* SQLite's JSON turns a lone surrogate escape (\ud800) into bytes
      ** that are not UTF-8: refused as such (U+0000: optsTreeCheck) */
      char *zWhy = 0, *zWhat = sqlite3_mprintf("'%s'", zKey);
      int bad = zWhat && profsumTextArgFault(zWhat, (const char*)sqlite3_column_text(p, 2),
                                             sqlite3_column_bytes(p, 2), &zWhy);
      sqlite3_free(zWhat);
      if( zWhat==0 || (bad && zWhy==0) ){ rc = SQLITE_NOMEM; break; }
      if( bad ){
        *pzErr = sqlite3_mprintf(FN ": options_json: %s (a lone surrogate escape?)", zWhy);
        sqlite3_free(zWhy);
        rc = *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
        break;
      }
    }
    if( strcmp(zKey, "warmup_steps")==0 && isInt && sqlite3_column_int64(p, 2)>=0
     && sqlite3_column_int64(p, 2)<=INT32_MAX ){
      o->warmup = (int)sqlite3_column_int64(p, 2);
    }else if( strcmp(zKey, "hot_op_limit")==0 && isInt && sqlite3_column_int64(p, 2)>=0
           && sqlite3_column_int64(p, 2)<=INT32_MAX ){
      o->hotOpLimit = (int)sqlite3_column_int64(p, 2);
    }else if( strcmp(zKey, "breakdown_mode")==0 && isText ){
      const char *z = (const char*)sqlite3_column_text(p, 2);
      if( strcmp(z, "exclusive_per_track")==0 ) o->globalMode = 0;
      else if( strcmp(z, "exclusive_global")==0 ) o->globalMode = 1;
      else{
        *pzErr = sqlite3_mprintf(FN ": options_json: breakdown_mode must be "
            "'exclusive_per_track' or 'exclusive_global', not '%s'", z);
        rc = SQLITE_ERROR; break;
      }
    }else if( strcmp(zKey, "series")==0 && (isText || (zVT && strcmp(zVT, "null")==0)) ){
      sqlite3_free(o->zSeries);
      o->zSeries = isText ? sqlite3_mprintf("%s", sqlite3_column_text(p, 2)) : 0;
    }else if( strcmp(zKey, "store_events")==0 && isFlag ){
      o->storeEvents = flagOn;
    }else if( strcmp(zKey, "replace")==0 && isFlag ){
      o->replace = flagOn;
    }else if( strcmp(zKey, "reuse")==0 && isFlag ){
      o->reuse = flagOn;
    }else if( strcmp(zKey, "unique_label")==0 && isFlag ){
      o->uniqueLabel = flagOn;
    }else if( strcmp(zKey, "alias")==0 && ((isText && sqlite3_column_bytes(p, 2)>0)
                                            || (zVT && strcmp(zVT, "null")==0)) ){
      sqlite3_free(o->zAlias);
      o->zAlias = isText ? sqlite3_mprintf("%s", sqlite3_column_text(p, 2)) : 0;
      if( isText && o->zAlias==0 ){ rc = SQLITE_NOMEM; break; }
    }else if( strcmp(zKey, "device_peaks")==0 && zVT && strcmp(zVT, "object")==0 ){
      sqlite3_free(o->zDevicePeaks);
      o->zDevicePeaks = sqlite3_mprintf("%s", sqlite3_column_text(p, 2));
      if( o->zDevicePeaks==0 ){ rc = SQLITE_NOMEM; break; }
    }else if( strcmp(zKey, "session")==0 && isText && sqlite3_column_bytes(p, 2)>0 ){
      const char *z = (const char*)sqlite3_column_text(p, 2);
      sqlite3_free(o->zSession);
      o->zSession = strcmp(z, "reference")==0 ? 0 : sqlite3_mprintf("%s", z);
      if( o->zSession==0 && strcmp(z, "reference")!=0 ){ rc = SQLITE_NOMEM; break; }
    }else if( strcmp(zKey, "hosts")==0 && isText
              && (strcmp((const char*)sqlite3_column_text(p, 2), "one")==0
                  || strcmp((const char*)sqlite3_column_text(p, 2), "all")==0) ){
      o->hostsAll = ((const char*)sqlite3_column_text(p, 2))[0]=='a';
    }else if( strcmp(zKey, "store_diagnostics")==0 && isText
              && (strcmp((const char*)sqlite3_column_text(p, 2), "compact")==0
                  || strcmp((const char*)sqlite3_column_text(p, 2), "all")==0) ){
      o->diagAll = ((const char*)sqlite3_column_text(p, 2))[0]=='a';
    }else if( strcmp(zKey, "schema")==0 && isText ){
      const char *zS = (const char*)sqlite3_column_text(p, 2);
      if( !profsumSchemaAttached(db, zS) ){
        /* as every function that takes a schema says it */
        *pzErr = sqlite3_mprintf(FN ": options_json: schema '%s' is not an attached database", zS);
        rc = *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
        break;
      }
      sqlite3_free(o->zSchema);
      o->zSchema = sqlite3_mprintf("%s", sqlite3_column_text(p, 2));
      if( o->zSchema==0 ){ rc = SQLITE_NOMEM; break; }
    }else{
      rc = optsKeyError(db, p, zKey, isText, isBool, zVT, pzErr);
      break;
    }
  }
  if( rc==SQLITE_DONE ) rc = SQLITE_OK;
  if( rc==SQLITE_ERROR && *pzErr==0 ){
    *pzErr = sqlite3_mprintf(FN ": options_json is not valid JSON: %s", sqlite3_errmsg(db));
  }else if( rc && rc!=SQLITE_NOMEM && *pzErr==0 ){
    /* not the JSON's fault: an interrupt, a disk I/O error, ... */
    *pzErr = sqlite3_mprintf(FN ": %s", sqlite3_errmsg(db));
  }
  if( rc==SQLITE_OK && o->replace && (o->reuse || o->uniqueLabel) ){
    *pzErr = o->reuse
      ? sqlite3_mprintf(FN ": options_json: 'reuse' and 'replace' exclude each other "
                        "(reuse keeps a stored trace of the same file, replace stores the file again)")
      : sqlite3_mprintf(FN ": options_json: 'unique_label' and 'replace' exclude each other "
                        "(unique_label keeps the trace that has the label, replace deletes it)");
    rc = *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
  }
  sqlite3_finalize(p);
  return rc;
}

/* See import_int.h. */
int profsumImportLabelArg(sqlite3_value *v, char **pzLabel, char **pzErr){
  char *zWhy = 0;
  *pzLabel = 0;
  if( sqlite3_value_type(v)!=SQLITE_TEXT ){
    *pzErr = sqlite3_mprintf(FN ": the label must be text or NULL");
    return *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
  }
  if( profsumTextArgFault("the label", (const char*)sqlite3_value_text(v), sqlite3_value_bytes(v), &zWhy) ){
    if( zWhy==0 ) return SQLITE_NOMEM;
    *pzErr = sqlite3_mprintf(FN ": %s", zWhy);
    sqlite3_free(zWhy);
    return *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
  }
  *pzLabel = sqlite3_mprintf("%s", sqlite3_value_text(v));
  if( *pzLabel==0 ) return SQLITE_NOMEM;
  if( (*pzLabel)[0]==0 ){
    *pzErr = sqlite3_mprintf(FN ": the label must not be empty");
    return *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
  }
  return SQLITE_OK;
}
