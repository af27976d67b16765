/*
** sources.c — from command-line arguments to traces of the working
** database: import options from the knob flags, the import of a file,
** folder, summary or remote source (profsum_import), and a trace argument
** that is a path or a label/trace_id of --db.
*/
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* From ext/summary/import.c, linked into this program (sqlite3_malloc'd
** results). */
char *profsumDefaultLabel(const char *zSource);
char *profsumSummaryFileProblem(const char *zPath);
/* From ext/summary/doc_knobs.c (summary_doc.h): the labels that start
** with "<label>/", a session's hosts. */
char *profsumLabelPrefixHint(sqlite3 *db, const char *zSchema, const char *zLabel);

/* The import options zOpts (JSON text or NULL) with key zKey set to the
** JSON value zJsonValue (malloc'd). */
static char *optsWith(const char *zOpts, const char *zKey, const char *zJsonValue){
  char *zPath = xprintf("$.%s", zKey);
  char *z = sqlText("SELECT json_set(coalesce(?1, '{}'), ?2, json(?3))", "ttt", zOpts, zPath, zJsonValue);
  sqlite3_free(zPath);
  if( z==0 ) fail(EXIT_FAIL, "cannot set '%s' in the import options", zKey);
  return z;
}

/* Import options from the knob flags (absent → profsum_import defaults). */
char *knobOptions(const Opts *o, int bReplace, const char *zSeries){
  JObj j;
  const char *zMode = 0;
  memset(&j, 0, sizeof(j));
  if( specIndex(o, "warmup-steps", 12)>=0 && optStr(o, "warmup-steps") ){
    jobjInt(&j, "warmup_steps", optNonNeg(o, "warmup-steps", 5));
  }
  if( specIndex(o, "hot-op-limit", 12)>=0 && optStr(o, "hot-op-limit") ){
    jobjInt(&j, "hot_op_limit", optNonNeg(o, "hot-op-limit", 25));
  }
  if( specIndex(o, "breakdown-mode", 14)>=0 && (zMode = optStr(o, "breakdown-mode"))!=0 ){
    if( strcmp(zMode, "exclusive_per_track")!=0 && strcmp(zMode, "exclusive_global")!=0 ){
      fail(EXIT_USAGE, "option '--breakdown-mode': invalid choice '%s' (choose from "
           "'exclusive_per_track', 'exclusive_global')", zMode);
    }
    jobjStr(&j, "breakdown_mode", zMode);
  }
  if( specIndex(o, "session", 7)>=0 && optStr(o, "session") ) jobjStr(&j, "session", optStr(o, "session"));
  if( specIndex(o, "all-hosts", 9)>=0 && optFlag(o, "all-hosts") ) jobjStr(&j, "hosts", "all");
  if( zSeries ) jobjStr(&j, "series", zSeries);
  if( bReplace ) jobjRaw(&j, "replace", "true");
  return (char*)jobjEnd(&j);
}

/* Print on stderr every quality warning of the import whose first trace is
** id (a session's import stores several traces: those with its source and
** import time), what a session's import did with a host (diagnostics
** xplane_not_decoded: its trace JSON read for an XPlane that does not
** decode; host_not_aligned: placed at offset 0; host_unnamed: a perfetto
** trace with no host), and what a folder pick left aside (diagnostic
** folder_pick, the same on every trace of the import: once, on the first
** that has it), one line each: "profsum: warning: <label>: <text>".  When
** a warning cites the diagnostics and the database is this command's
** temporary one, a note says how to keep or list them: the listing names
** the file each such warning's trace was read from (trace_path: a
** folder's pick, a host's file; profsum_diagnostics reads a file, not a
** folder), else zSource (the trace, file or folder given). */
static void importWarnings(sqlite3_int64 id, const char *zSource){
  sqlite3_stmt *p = 0;
  char *zFirst = 0;       /* the file of the first warning citing profsum_diagnostic */
  Buf more;               /* the files of the others, each once: ", 'b'" */
  int nMore = 0;
  memset(&more, 0, sizeof(more));
  if( sqlite3_prepare_v2(g_db, "WITH f AS (SELECT source_path AS s, imported_at AS a FROM "
      "main.profsum_trace WHERE trace_id=?1), t AS (SELECT t.* FROM main.profsum_trace AS t, f "
      "WHERE t.trace_id=?1 OR (t.trace_id>?1 AND t.source_path IS f.s AND t.imported_at=f.a)) "
      "SELECT label, text, file FROM (SELECT t.trace_id AS id, 0 AS part, w.key AS k, t.label, "
      "w.value AS text, coalesce(t.trace_path, t.source_path) AS file "
      "FROM t, json_each(t.quality_warnings) AS w UNION ALL SELECT t.trace_id, 1, "
      "d.rowid, t.label, d.detail, coalesce(t.trace_path, t.source_path) FROM t "
      "JOIN main.profsum_agg_diagnostic AS d "
      "ON d.trace_id=t.trace_id AND d.kind IN ('xplane_not_decoded', 'host_not_aligned', 'host_unnamed') "
      "UNION ALL SELECT min(t.trace_id), 2, d.rowid, t.label, d.detail, NULL FROM t "
      "JOIN main.profsum_agg_diagnostic AS d ON d.trace_id=t.trace_id AND d.kind='folder_pick' "
      "GROUP BY d.detail) ORDER BY id, part, k", -1, &p, 0)!=SQLITE_OK ){
    sqlite3_finalize(p);
    return;
  }
  sqlite3_bind_int64(p, 1, id);
  while( sqlite3_step(p)==SQLITE_ROW ){
    const char *zText = (const char*)sqlite3_column_text(p, 1);
    const char *zFile = (const char*)sqlite3_column_text(p, 2);
    errLine("profsum: warning: %s: %s", (const char*)sqlite3_column_text(p, 0), zText);
    if( zText && strstr(zText, "profsum_diagnostic") ){
      if( zFile==0 ) zFile = zSource;
      if( zFirst==0 ){
        zFirst = xstrdup(zFile);
      }else if( strcmp(zFirst, zFile)!=0 ){
        char *zLit = sqlite3_mprintf("'%q'", zFile);
        if( zLit==0 ) fail(EXIT_FAIL, "out of memory");
        if( more.n==0 || strstr(more.z, zLit)==0 ){
          bufAppend(&more, ", ", 2);
          bufAppend(&more, zLit, strlen(zLit));
          nMore++;
        }
        sqlite3_free(zLit);
      }
    }
  }
  sqlite3_finalize(p);
  if( zFirst && g_zTempDb[0] ){
    /* the warnings cite a table of the database this command deletes */
    char *zLit = sqlite3_mprintf("%Q", zFirst);          /* an SQL literal */
    errLine("profsum: note: the diagnostics these warnings cite are in this command's temporary "
            "database, deleted when it ends: add --db FILE to keep them (then "
            "'profsum sql FILE \"SELECT * FROM profsum_diagnostic\"'), or list them from the file: "
            "profsum sql :memory: \"SELECT * FROM profsum_diagnostics(%s)\"%s%s%s",
            zLit ? zLit : "'FILE'", nMore ? " (and the same for " : "", nMore ? more.z+2 : "",
            nMore ? ")" : "");
    sqlite3_free(zLit);
  }
  free(zFirst);
  free(more.z);
}

/*
** Import zSource (a trace file, an artifact folder, a v1 summary file, or
** a wandb:/wandb-run:/URL source) under zLabel (0: derived from the file,
** made unique) with options zOpts.  Returns the trace_id.  The folder
** knobs (--session, --all-hosts) with a local file are a usage error.
*/
sqlite3_int64 importSource(const char *zSource, const char *zLabel, const char *zOpts){
  char *zLab, *zId, *zErr = 0, *zWith = 0;
  sqlite3_int64 id;
  if( !isRemoteSource(zSource) && !pathExists(zSource) ){
    fail(EXIT_FAIL, "'%s': %s", zSource, strerror(ENOENT));
  }
  if( !isRemoteSource(zSource) && !isDir(zSource) && zOpts ){
    /* the folder knobs name a folder's session or hosts: said in the
    ** CLI's terms rather than as options_json keys */
    char *zKnob = sqlText("SELECT json_extract(?1, '$.session') IS NOT NULL "
                          "OR json_extract(?1, '$.hosts') IS NOT NULL", "t", zOpts);
    int bKnob = zKnob && strcmp(zKnob, "1")==0;
    free(zKnob);
    if( bKnob ){
      fail(EXIT_USAGE, "--session/--all-hosts apply to a folder (--profile-dir, or a folder given as "
           "the trace), and '%s' is a file", zSource);
    }
  }
  zLab = zLabel ? xstrdup(zLabel) : 0;
  if( zLab==0 ){
    /* The label profsum_import derives (a W&B source: its artifact name),
    ** made unique inside the import's write transaction ("unique_label":
    ** -2, -3, ...), so concurrent jobs never pick the same; NULL, so that
    ** 'reuse' takes a stored trace of the same file whatever its label. */
    if( !isRemoteSource(zSource) ){
      char *zL = profsumDefaultLabel(zSource);
      if( zL==0 || zL[0]==0 ) zLab = xstrdup("trace");   /* nothing to derive from */
      sqlite3_free(zL);
    }
    zWith = optsWith(zOpts, "unique_label", "true");
    zOpts = zWith;
  }
  if( !isRemoteSource(zSource) ){
    if( isDir(zSource) ){
      char *zPick = sqlTextTry(&zErr, "SELECT path FROM profsum_find_traces(?1) WHERE picked LIMIT 1", "t", zSource);
      free(zErr);
      zErr = 0;
      if( zPick ){ progressStart(zPick); free(zPick); }
    }else{
      progressStart(zSource);
    }
  }
  zId = sqlTextTry(&zErr, "SELECT profsum_import(?1, ?2, ?3)", "ttt", zSource, zLab, zOpts);
  if( zErr ) failSqlMsg(zErr);
  if( zId==0 ) fail(EXIT_FAIL, "profsum_import returned no trace id for '%s'", zSource);
  id = strtoll(zId, 0, 10);
  progressFinish(id);
  importWarnings(id, zSource);
  free(zId);
  free(zLab);
  free(zWith);
  return id;
}

/* Import a file given where a summary is expected (--summary, --before,
** --after, --before-summary, --after-summary): a profile_summary.v1
** summary, a trace, or a folder/remote source.  JSON that is neither is an
** error here (the reference: "Expected JSON object in summary '<path>'."
** for a non-object), where profsum_import would read it as a trace with no
** events. */
static sqlite3_int64 importSummary(const char *zSource, const char *zOpts){
  if( !isRemoteSource(zSource) && pathExists(zSource) && !isDir(zSource) ){
    char *zWhy = profsumSummaryFileProblem(zSource);
    if( zWhy ){
      char *z = xstrdup(zWhy);
      sqlite3_free(zWhy);
      fail(EXIT_FAIL, "%s", z);
    }
  }
  return importSource(zSource, 0, zOpts);
}

/* A trace argument: an existing path (or remote source) is imported (as a
** summary: importSummary); else, when a database was given, a label or
** trace_id in it.  zArg is the path as str(Path) gives it (OPT_PATH), zRaw
** the text as given (the label looked up; 0: zArg).  A label that names
** no trace is an error (exit 1) listing the labels that start with
** "<label>/" (a session's hosts), when there are. */
sqlite3_int64 traceArg(const char *zOpt, const char *zArg, const char *zRaw, int bHaveDb,
                              const char *zOpts, sqlite3_int64 idOther){
  char *zId;
  if( isRemoteSource(zArg) || pathExists(zArg) ){
    /* Into a database file: a trace stored before from the same file, with
    ** the same options and profsum build, is used again (profsum_import's
    ** 'reuse'), so a CI job that tracks one baseline run after run stores
    ** it once.  Not for the after side when that is the before side's
    ** trace (idOther): a file compared with itself is read twice, as
    ** without a database and as the reference does. */
    char *zReuse;
    sqlite3_int64 id;
    if( !bHaveDb ) return importSummary(zArg, zOpts);
    zReuse = optsWith(zOpts, "reuse", "true");
    id = importSummary(zArg, zReuse);
    free(zReuse);
    if( idOther && id==idOther ){
      /* another stored copy of the same file (one made by an earlier run
      ** of this same comparison), else a new one */
      char *zTwin = sqlText("SELECT t.trace_id FROM main.profsum_trace AS t, main.profsum_trace AS o "
          "WHERE o.trace_id=?1 AND t.trace_id<>?1 AND t.source_path IS o.source_path "
          "AND t.trace_path IS o.trace_path AND t.sha256 IS o.sha256 AND t.size IS o.size "
          "AND t.options IS o.options AND t.profsum_version IS o.profsum_version "
          "AND t.summary_json IS o.summary_json ORDER BY t.trace_id DESC LIMIT 1", "i", idOther);
      if( zTwin ){
        id = strtoll(zTwin, 0, 10);
        free(zTwin);
      }else{
        id = importSummary(zArg, zOpts);
      }
    }
    return id;
  }
  if( zRaw ) zArg = zRaw;
  if( !bHaveDb ) fail(EXIT_FAIL, "--%s '%s': %s", zOpt, zArg, strerror(ENOENT));
  zId = tableExists("profsum_trace")
      ? sqlText("SELECT trace_id FROM main.profsum_trace WHERE label=?1 "
                "UNION ALL SELECT trace_id FROM main.profsum_trace WHERE ?1 GLOB '[0-9]*' "
                "AND NOT ?1 GLOB '*[^0-9]*' AND trace_id=CAST(?1 AS INTEGER) LIMIT 1", "t", zArg)
      : 0;
  if( zId==0 ){
    /* a session imported with --all-hosts is stored as "<label>/<host>":
    ** its label alone names no trace, so list the hosts' */
    char *zHint = tableExists("profsum_trace") ? profsumLabelPrefixHint(g_db, "main", zArg) : 0;
    char *zMsg = xprintf("--%s '%s': no such file, and no trace with that label or id in the database%s",
                         zOpt, zArg, zHint ? zHint : "");
    sqlite3_free(zHint);
    fail(EXIT_FAIL, "%s", zMsg);
  }
  {
    sqlite3_int64 id = strtoll(zId, 0, 10);
    free(zId);
    return id;
  }
}

/* After summaryArg found trace id: when the knobs given (zOpts: warmup
** steps, hot-op limit, breakdown mode) do not shape its document — it was
** imported from a profile_summary.v1 file, or it is a stored trace
** summarized with other values — say so on stderr, with what applies.
** The note names what the user gave: zFile, the --summary file as typed
** (0 for --trace LABEL: the stored trace by its label, and the file it
** was imported from, which a new import with --replace reads). */
static void knobsIgnoredNote(sqlite3_int64 id, const char *zOpts, const char *zFile){
  char *zErr = 0;
  char *zWhy;
  if( zOpts==0 ) return;
  zWhy = sqlTextTry(&zErr,
      "WITH k AS (SELECT json_extract(?2, '$.warmup_steps') AS w, json_extract(?2, '$.hot_op_limit') AS h, "
      "json_extract(?2, '$.breakdown_mode') AS b), t AS (SELECT * FROM main.profsum_trace WHERE trace_id=?1) "
      "SELECT CASE WHEN k.w IS NULL AND k.h IS NULL AND k.b IS NULL THEN NULL "
      "WHEN t.summary_json IS NOT NULL THEN 'ignored: ' || CASE WHEN ?3 IS NOT NULL "
      "THEN '''' || ?3 || '''' ELSE 'the stored trace ''' || t.label || '''' "
      "|| coalesce(' (imported from ''' || t.source_path || ''')', '') END "
      "|| ' is a profile_summary.v1 document, whose numbers were computed when it was written' "
      "WHEN (k.w IS NOT NULL AND k.w IS NOT json_extract(t.options, '$.warmup_steps')) "
      "OR (k.h IS NOT NULL AND k.h IS NOT json_extract(t.options, '$.hot_op_limit')) "
      "OR (k.b IS NOT NULL AND k.b IS NOT json_extract(t.options, '$.breakdown_mode')) "
      "THEN 'ignored: the stored trace ''' || t.label || ''' was summarized with warmup_steps ' "
      "|| coalesce(json_extract(t.options, '$.warmup_steps'), '?') || ', hot_op_limit ' "
      "|| coalesce(json_extract(t.options, '$.hot_op_limit'), '?') || ' and breakdown_mode ' "
      "|| coalesce(json_extract(t.options, '$.breakdown_mode'), '?') "
      "|| CASE WHEN t.source_path IS NOT NULL THEN ' (import ''' || t.source_path || ''' again with "
      "--label ''' || t.label || ''' --replace to change them)' "
      "ELSE ' (import it again with --replace to change them)' END END FROM k, t", "itt", id, zOpts, zFile);
  free(zErr);
  if( zWhy ){
    errLine("profsum %s: note: --warmup-steps, --hot-op-limit and --breakdown-mode %s", g_zCmd, zWhy);
    free(zWhy);
  }
}

/* The trace of report/query/publish: --summary PATH or --trace LABEL
** (with --db). */
sqlite3_int64 summaryArg(const Opts *o, const char *zOpts){
  const char *zSum = optStr(o, "summary"), *zTrace = optStr(o, "trace");
  sqlite3_int64 id;
  if( zSum && zTrace ) fail(EXIT_USAGE, "give either --summary or --trace, not both");
  if( zTrace ){
    if( optStr(o, "db")==0 ) fail(EXIT_USAGE, "--trace names a trace of a database: give --db too");
    id = traceArg("trace", zTrace, 0, 1, zOpts, 0);
    knobsIgnoredNote(id, zOpts, 0);
    return id;
  }
  if( zSum==0 ) fail(EXIT_USAGE, "the option '--summary' is required (or --db with --trace)");
  if( !isRemoteSource(zSum) && !pathExists(zSum) ){
    fail(EXIT_FAIL, "--summary '%s': %s", optRaw(o, "summary"), strerror(ENOENT));  /* as --before says it */
  }
  if( optStr(o, "db") && (isRemoteSource(zSum) || pathExists(zSum)) ){
    id = traceArg("summary", zSum, 0, 1, zOpts, 0);  /* imported once (reuse) */
  }else{
    id = importSummary(zSum, zOpts);
  }
  knobsIgnoredNote(id, zOpts, optRaw(o, "summary"));
  return id;
}

/* A --db that does not exist while every trace argument (azArg, nArg; 0
** entries skipped) is a label, not a file, folder or remote source: nothing
** to read and nothing to store, so say so before SQLite would create the
** file (a mistyped path).  Nothing is created, nothing deleted. */
void failMissingDbForLabels(const char *zDb, const char *const *azArg, int nArg){
  int i;
  if( zDb==0 || zDb[0]==0 || strcmp(zDb, ":memory:")==0 || strncmp(zDb, "file:", 5)==0 ) return;
  if( pathExists(zDb) ) return;
  for(i=0; i<nArg; i++){
    if( azArg[i] && (isRemoteSource(azArg[i]) || pathExists(azArg[i])) ) return;
  }
  fail(EXIT_FAIL, "--db '%s': no such database: the traces named are labels, not files, so "
       "there is nothing to read (check the path)", zDb);
}

/* Before opening --db (SQLite would create a missing one): a --trace label
** of a --db that does not exist, or a --summary file that does not exist,
** is an error now, so no empty database is left behind by a typo. */
void failBeforeDb(const Opts *o){
  const char *zSum = optStr(o, "summary"), *zTrace = optStr(o, "trace");
  if( zTrace ){                          /* --trace names a label of --db */
    const char *az[1] = {zTrace};
    failMissingDbForLabels(optStr(o, "db"), az, 1);
  }
  if( zSum && !zTrace && !isRemoteSource(zSum) && !pathExists(zSum) ){
    fail(EXIT_FAIL, "--summary '%s': %s", optRaw(o, "summary"), strerror(ENOENT));
  }
}
